package io.meshpilot.config.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.testing.CapturedLog;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.ConfigEvent;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The --configDir source with a real directory and the real watcher; waits on events, never sleeps. */
class FileConfigSourceTest {
    @TempDir
    Path dir;
    FileConfigSource source;
    final LinkedBlockingQueue<ConfigEvent> events = new LinkedBlockingQueue<>();

    static String vs(String name, String host) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: %s}
                spec:
                  hosts: [%s]
                  http:
                  - route:
                    - destination: {host: %s}
                """.formatted(name, host, host);
    }

    @BeforeEach
    void start() {
        source = new FileConfigSource(dir, new ConfigParser(Schemas.PILOT), Schemas.PILOT.all());
        for (var s : Schemas.PILOT.all()) {
            source.registerEventHandler(s.kind(), events::add);
        }
    }

    @AfterEach
    void stop() {
        source.close();
    }

    /** Runs the source and forgets the ADD events of the initial load. */
    void run() throws InterruptedException {
        source.run();
        assertTrue(source.awaitEventsDelivered(30, TimeUnit.SECONDS));
        events.clear();
    }

    ConfigEvent next() throws InterruptedException {
        ConfigEvent e = events.poll(30, TimeUnit.SECONDS);
        assertTrue(e != null, "no config event within 30 s");
        return e;
    }

    static String host(Config c) {
        return ((VirtualService) c.spec()).getHosts(0);
    }

    @Test
    void loadsRecursivelyDefaultsTheNamespaceAndSkipsNonIstioKinds() throws Exception {
        Files.createDirectories(dir.resolve("a/b"));
        Files.writeString(dir.resolve("a/b/one.yaml"), vs("one", "one.example.com") + """
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: web}
                spec: {ports: [{port: 80}]}
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: web}
                """);
        Files.writeString(dir.resolve("two.json"), """
                {"apiVersion":"networking.istio.io/v1beta1","kind":"DestinationRule",
                 "metadata":{"name":"two","namespace":"prod"},"spec":{"host":"two.example.com"}}
                """);
        Files.writeString(dir.resolve(".hidden.yaml"), vs("hidden", "h.example.com"));
        Files.writeString(dir.resolve("notes.txt"), vs("txt", "t.example.com"));
        source.run();
        assertEquals("default", source.get("VirtualService", "default", "one").orElseThrow().namespace());
        assertTrue(source.get("DestinationRule", "prod", "two").isPresent());
        assertTrue(source.get("VirtualService", "default", "hidden").isEmpty());
        assertTrue(source.get("VirtualService", "default", "txt").isEmpty());
        assertEquals(List.of(), source.errors(), "Service and Deployment are skipped, not errors");
        assertEquals("a/b/one.yaml", source.sourceOf(source.get("VirtualService", "default", "one").orElseThrow().key())
                .orElseThrow());
    }

    @Test
    void addModifyDeleteAndRenameAreWatched() throws Exception {
        run();
        Path f = dir.resolve("routes.yaml");
        Files.writeString(f, vs("r", "a.example.com"));
        ConfigEvent add = next();
        assertEquals(ConfigEvent.Type.ADD, add.type());
        assertEquals("a.example.com", host(add.current()));

        // modify via an editor-style atomic replace
        Path tmp = dir.resolve(".routes.yaml.swp");
        Files.writeString(tmp, vs("r", "b.example.com"));
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        ConfigEvent update = next();
        assertEquals(ConfigEvent.Type.UPDATE, update.type());
        assertEquals("b.example.com", host(update.current()));

        // rename to another config file: same objects, no churn; the source follows
        Path renamed = dir.resolve("renamed.yaml");
        Files.move(f, renamed, StandardCopyOption.ATOMIC_MOVE);
        awaitScanWhere(r -> source.sourceOf(update.current().key()).map("renamed.yaml"::equals).orElse(false));
        assertTrue(events.isEmpty(), "a rename that keeps the content changes no object: " + events);

        // rename away from a config name: the objects go
        Files.move(renamed, dir.resolve("renamed.yaml.disabled"), StandardCopyOption.ATOMIC_MOVE);
        ConfigEvent gone = next();
        assertEquals(ConfigEvent.Type.DELETE, gone.type());

        // and back, into a new subdirectory
        Files.createDirectories(dir.resolve("sub"));
        Files.move(dir.resolve("renamed.yaml.disabled"), dir.resolve("sub/back.yaml"), StandardCopyOption.ATOMIC_MOVE);
        assertEquals(ConfigEvent.Type.ADD, next().type());
        Files.delete(dir.resolve("sub/back.yaml"));
        assertEquals(ConfigEvent.Type.DELETE, next().type());
        assertTrue(source.list("VirtualService", null).isEmpty());
    }

    private void awaitScanWhere(Predicate<FileConfigSource.ScanResult> p) throws Exception {
        LinkedBlockingQueue<FileConfigSource.ScanResult> scans = new LinkedBlockingQueue<>();
        Consumer<FileConfigSource.ScanResult> listener = scans::add;
        source.addScanListener(listener);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                FileConfigSource.ScanResult r = scans.poll(1, TimeUnit.SECONDS);
                if (r != null && p.test(r)) {
                    return;
                }
            }
            throw new AssertionError("condition not reached within 30 s");
        } finally {
            source.removeScanListener(listener);
        }
    }

    @Test
    void aFileWrittenInPlaceIsReadOnlyOnceTheWritesPause() throws Exception {
        Path f = dir.resolve("routes.yaml");
        Files.writeString(f, vs("a", "a.example.com") + "---\n" + vs("b", "b.example.com"));
        run();
        // rewritten in place in two writes with a pause shorter than the quiet time: a read in
        // between would find only "a" and delete "b"
        try (var out = Files.newBufferedWriter(f)) {
            out.write(vs("a", "a2.example.com") + "---\n");
            out.flush();
            // longer than the quick path's wait, well within the long one (room for a busy machine)
            Thread.sleep(FileConfigSource.SETTLE.toMillis() + 15);
            out.write(vs("b", "b.example.com"));
        }
        ConfigEvent update = next();
        assertEquals(ConfigEvent.Type.UPDATE, update.type());
        assertEquals("a2.example.com", host(update.current()));
        // a later, atomic change shows every event of the first one has arrived: "b" was never deleted
        Path tmp = dir.resolve(".routes.tmp");
        Files.writeString(tmp, vs("a", "a3.example.com") + "---\n" + vs("b", "b.example.com"));
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE);
        ConfigEvent last = next();
        assertEquals("a3.example.com", host(last.current()));
        assertEquals(List.of(), List.copyOf(events), "nothing but the two updates of a");
    }

    @Test
    void aFilesObjectsChangeAsASet() throws Exception {
        Path f = dir.resolve("set.yaml");
        Files.writeString(f, vs("a", "a.example.com") + "---\n" + vs("b", "b.example.com"));
        run();
        assertEquals(2, source.list("VirtualService", null).size());
        Files.writeString(f, vs("b", "b2.example.com") + "---\n" + vs("c", "c.example.com"));
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ConfigEvent e = next();
            seen.add(e.type() + ":" + e.current().name());
        }
        seen.sort(null);
        assertEquals(List.of("ADD:c", "DELETE:a", "UPDATE:b"), seen);
    }

    @Test
    void invalidDocumentsAreReportedAndTheRestLoads() throws Exception {
        Path f = dir.resolve("mixed.yaml");
        Files.writeString(f, vs("good", "good.example.com") + """
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: bad}
                spec:
                  hosts: [bad.example.com]
                  http: [{route: [{destination: {host: bad.example.com}, weight: fifty}]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: Gatewayy
                metadata: {name: typo}
                """);
        source.run();
        assertTrue(source.get("VirtualService", "default", "good").isPresent());
        assertTrue(source.get("VirtualService", "default", "bad").isEmpty());
        List<DocumentError> errs = source.errors();
        assertEquals(2, errs.size(), errs.toString());
        DocumentError wrongType = errs.get(0);
        assertEquals("mixed.yaml", wrongType.source());
        assertEquals(1, wrongType.document());
        assertEquals(15, wrongType.line());
        assertEquals("spec.http[0].route[0].weight", wrongType.path());
        assertTrue(wrongType.reason().contains("expected a whole number"), wrongType.reason());
        assertEquals(2, errs.get(1).document());
        assertTrue(errs.get(1).reason().contains("unknown kind Gatewayy"), errs.get(1).reason());
    }

    @Test
    void aFileThatStopsParsingKeepsItsLastGoodObjects() throws Exception {
        Path f = dir.resolve("keep.yaml");
        Files.writeString(f, vs("kept", "kept.example.com"));
        run();
        LinkedBlockingQueue<FileConfigSource.ScanResult> scans = new LinkedBlockingQueue<>();
        source.addScanListener(scans::add);
        Files.writeString(f, "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: kept\nspec: [");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (source.errors().isEmpty() && System.nanoTime() < deadline) {
            scans.poll(1, TimeUnit.SECONDS);
        }
        assertEquals(1, source.errors().size());
        assertTrue(source.errors().get(0).reason().contains("invalid YAML"), source.errors().toString());
        assertEquals("kept.example.com", host(source.get("VirtualService", "default", "kept").orElseThrow()),
                "nothing is lost while the file is broken");
        assertTrue(events.isEmpty(), "no delete event for a broken file: " + events);
        Files.writeString(f, vs("kept", "fixed.example.com"));
        ConfigEvent fixed = next();
        assertEquals("fixed.example.com", host(fixed.current()));
        assertEquals(List.of(), source.errors());
    }

    @Test
    void theFirstFileOwnsAnObjectDefinedTwice() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), vs("dup", "from-a.example.com"));
        Files.writeString(dir.resolve("b.yaml"), vs("dup", "from-b.example.com"));
        source.run();
        assertEquals("from-a.example.com", host(source.get("VirtualService", "default", "dup").orElseThrow()));
        assertEquals(1, source.errors().size());
        assertTrue(source.errors().get(0).reason().contains("also defined in a.yaml"), source.errors().toString());
    }


    static String reasonFor(List<DocumentError> errors, String source) {
        return errors.stream().filter(e -> e.source().equals(source)).map(DocumentError::reason).findFirst()
                .orElseThrow(() -> new AssertionError("no error for " + source + " in " + errors));
    }

    /**
     * Paths that cannot be read as config are each reported with the cause, in errors() and in
     * the log, and the rest of the tree loads. All of these fail for root too.
     */
    @Test
    void pathsThatAreNotReadableFilesAreReportedWithTheirCauseAndTheRestLoads() throws Exception {
        Files.writeString(dir.resolve("good.yaml"), vs("good", "good.example.com"));
        Files.createSymbolicLink(dir.resolve("loop.yaml"), dir.resolve("loop2.yaml"));
        Files.createSymbolicLink(dir.resolve("loop2.yaml"), dir.resolve("loop.yaml"));
        Files.createSymbolicLink(dir.resolve("dangling.yaml"), Path.of("nowhere.txt"));
        Files.createSymbolicLink(dir.resolve("long.yaml"), Path.of("x".repeat(300))); // a name no file system takes
        Process mkfifo = new ProcessBuilder("mkfifo", dir.resolve("pipe.yaml").toString()).start();
        assertEquals(0, mkfifo.waitFor(), "mkfifo");
        byte[] latin1 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\u00e9}\n"
                .getBytes(StandardCharsets.ISO_8859_1);
        Files.write(dir.resolve("latin1.yaml"), latin1);
        try (var big = new RandomAccessFile(dir.resolve("big.yaml").toFile(), "rw")) {
            big.setLength(SafeYaml.MAX_CHARS + 1L); // sparse: no disk used
        }
        Files.createDirectories(dir.resolve("sub.yaml")); // a directory named like a file is entered, not an error
        Files.writeString(dir.resolve("sub.yaml/inner.yaml"), vs("inner", "inner.example.com"));
        Files.writeString(dir.resolve("notes"), "a FIFO or link without a config name is not config: not reported");
        try (CapturedLog log = new CapturedLog(FileConfigSource.class)) {
            run();
            List<DocumentError> errs = source.errors();
            assertEquals("symlink loop", reasonFor(errs, "loop.yaml"));
            assertEquals("symlink loop", reasonFor(errs, "loop2.yaml"));
            assertEquals("dangling symlink -> nowhere.txt", reasonFor(errs, "dangling.yaml"));
            assertEquals("not a regular file (FIFO)", reasonFor(errs, "pipe.yaml"));
            assertEquals("invalid UTF-8 at byte " + (latin1.length - 3), reasonFor(errs, "latin1.yaml"));
            assertEquals("file larger than 8388608 bytes (8388609 bytes)", reasonFor(errs, "big.yaml"));
            assertEquals("file name too long", reasonFor(errs, "long.yaml"));
            assertEquals(7, errs.size(), errs.toString());
            for (String path : List.of("loop.yaml", "dangling.yaml", "long.yaml", "pipe.yaml", "latin1.yaml", "big.yaml")) {
                assertTrue(log.has("WARNING", path, reasonFor(errs, path)), path + " is logged with its cause: " + log.lines());
            }
            assertTrue(source.get("VirtualService", "default", "good").isPresent());
            assertTrue(source.get("VirtualService", "default", "inner").isPresent());

            // the rest of the tree keeps changing; a fixed path loads and leaves the report
            Files.writeString(dir.resolve("later.yaml"), vs("later", "later.example.com"));
            assertEquals("later", next().current().name());
            Files.writeString(dir.resolve("nowhere.txt"), vs("target", "target.example.com"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (source.errors().stream().anyMatch(e -> e.source().equals("dangling.yaml")) && System.nanoTime() < deadline) {
                events.poll(1, TimeUnit.SECONDS);
            }
            assertEquals(6, source.errors().size(), source.errors().toString());
            assertTrue(source.get("VirtualService", "default", "target").isPresent(), "the link's target loads");
            assertTrue(log.has("resolved", "dangling.yaml"), log.lines().toString());
        }
    }

    @Test
    void aProblemIsLoggedOnceNotAtEveryScan() throws Exception {
        Files.createSymbolicLink(dir.resolve("loop.yaml"), dir.resolve("loop.yaml"));
        try (CapturedLog log = new CapturedLog(FileConfigSource.class)) {
            run();
            for (int i = 0; i < 3; i++) {
                source.scan();
            }
            assertEquals(1, log.lines().stream().filter(l -> l.contains("loop.yaml")).count(), log.lines().toString());
        }
    }

    @Test
    void unknownFieldsLoadWithAWarningListedAndLoggedOnce() throws Exception {
        Path f = dir.resolve("old.yaml");
        String old = vs("old", "old.example.com") + "    websocketUpgrade: true\n";
        Files.writeString(f, old);
        try (CapturedLog log = new CapturedLog(FileConfigSource.class)) {
            run();
            assertTrue(source.get("VirtualService", "default", "old").isPresent());
            assertEquals(List.of(), source.errors());
            assertEquals(1, source.warnings().size(), source.warnings().toString());
            DocumentError w = source.warnings().get(0);
            assertEquals("old.yaml", w.source());
            assertEquals(9, w.line());
            assertEquals("spec.http[0].websocketUpgrade", w.path());
            // rewritten with one more document: the warning stays, the log does not repeat it
            Files.writeString(f, old + "---\n" + vs("new", "new.example.com"));
            while (!next().current().name().equals("new")) {
                // the re-read "old" may come first
            }
            assertEquals(List.of(w), source.warnings());
            assertEquals(1, log.lines().stream().filter(l -> l.contains("websocketUpgrade")).count(), log.lines().toString());
        }
    }
}
