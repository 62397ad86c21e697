package io.meshpilot.config.store;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.meshpilot.config.ConfigEvent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded writable store on real files: what was acknowledged comes back, damage is reported. */
class DurableConfigStoreTest {
    static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    static DurableConfigStore open(Path dir) throws IOException {
        DurableConfigStore s = DurableConfigStore.open(dir, PARSER, Schemas.PILOT.all());
        s.run();
        return s;
    }

    static Config vs(String name, String host) {
        return MemoryConfigStoreTest.vs("team-a", name, host);
    }

    @Test
    void acknowledgedWritesComeBackExactlyAsTheyWereAfterAReopen(@TempDir Path dir) throws Exception {
        Config kept;
        try (DurableConfigStore s = open(dir)) {
            s.create(vs("web", "web.example.com"));
            kept = s.update(vs("web", "web2.example.com"));
            s.create(vs("gone", "gone.example.com"));
            s.delete("VirtualService", "team-a", "gone", "");
            s.updateStatus(vs("web", "x").withStatus(Struct.newBuilder()
                    .putFields("note", Value.newBuilder().setStringValue("kept").build()).build()));
            kept = s.get("VirtualService", "team-a", "web").orElseThrow();
        }
        assertTrue(Files.isRegularFile(dir.resolve("virtualservice/team-a/web.json")));
        assertFalse(Files.exists(dir.resolve("virtualservice/team-a/gone.json")));
        try (DurableConfigStore s = open(dir)) {
            assertEquals(List.of(), s.errors());
            assertEquals(List.of(kept), s.list("VirtualService", null));
            Config next = s.create(vs("later", "later.example.com"));
            assertTrue(Long.parseLong(next.resourceVersion()) > Long.parseLong(kept.resourceVersion()),
                    "resourceVersions never repeat across restarts: " + next.resourceVersion() + " after "
                            + kept.resourceVersion());
        }
    }

    @Test
    void restoredObjectsAreAnnouncedOnceTheStoreRuns(@TempDir Path dir) throws Exception {
        try (DurableConfigStore s = open(dir)) {
            s.create(vs("web", "web.example.com"));
        }
        try (DurableConfigStore s = DurableConfigStore.open(dir, PARSER, Schemas.PILOT.all())) {
            LinkedBlockingQueue<ConfigEvent> events = new LinkedBlockingQueue<>();
            s.registerEventHandler("VirtualService", events::add);
            s.run();
            assertTrue(s.awaitEventsDelivered(10, TimeUnit.SECONDS));
            ConfigEvent e = events.poll();
            assertEquals(ConfigEvent.Type.ADD, e.type());
            assertEquals("web", e.current().name());
        }
    }

    @Test
    void damagedFilesAreReportedAndSkippedNeverFatal(@TempDir Path dir) throws Exception {
        try (DurableConfigStore s = open(dir)) {
            s.create(vs("good", "good.example.com"));
            s.create(vs("torn", "torn.example.com"));
            s.create(vs("moved", "moved.example.com"));
        }
        Path ns = dir.resolve("virtualservice/team-a");
        String torn = Files.readString(ns.resolve("torn.json"));
        Files.writeString(ns.resolve("torn.json"), torn.substring(0, torn.length() / 2));
        Files.move(ns.resolve("moved.json"), ns.resolve("elsewhere.json"));
        Files.write(ns.resolve("binary.json"), new byte[] {(byte) 0xff, (byte) 0xfe, '{'});
        Files.writeString(ns.resolve("invalid.json"), """
                {"apiVersion":"networking.istio.io/v1","kind":"VirtualService",
                 "metadata":{"name":"invalid","namespace":"team-a"},"spec":{"hosts":[]}}""");
        Path leftover = ns.resolve(".half.json.tmp");
        Files.writeString(leftover, "{\"apiVersion\":");

        try (DurableConfigStore s = open(dir)) {
            assertEquals(List.of("good"), s.list("VirtualService", null).stream().map(Config::name).toList());
            List<String> sources = s.errors().stream().map(DocumentError::source).toList();
            for (String f : List.of("torn.json", "elsewhere.json", "binary.json", "invalid.json")) {
                assertTrue(sources.stream().anyMatch(x -> x.endsWith(f)), f + " reported: " + s.errors());
            }
            String all = s.errors().toString();
            assertTrue(all.contains("damaged"), all);
            assertTrue(all.contains("belongs in"), all);
            assertTrue(all.contains("UTF-8"), all);
            assertFalse(Files.exists(leftover), "an interrupted write's temporary file is removed");
            // the store keeps working, and a new write of a skipped name replaces the damaged file
            s.create(vs("torn", "torn.example.com"));
        }
        try (DurableConfigStore s = open(dir)) {
            assertTrue(s.get("VirtualService", "team-a", "torn").isPresent());
        }
    }

    @Test
    void aWriteThatCannotBeSavedIsNotMade(@TempDir Path dir) throws Exception {
        try (DurableConfigStore s = open(dir)) {
            Files.writeString(dir.resolve("virtualservice"), "a file where the kind's directory belongs");
            assertThrows(ConfigStoreException.Unavailable.class, () -> s.create(vs("web", "web.example.com")));
            assertTrue(s.get("VirtualService", "team-a", "web").isEmpty());
            assertTrue(s.awaitEventsDelivered(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void twoServersCannotShareOneStateDirectory(@TempDir Path dir) throws Exception {
        try (DurableConfigStore s = open(dir)) {
            IOException e = assertThrows(IOException.class, () -> open(dir));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
        }
        open(dir).close(); // released with the first
    }

    /**
     * A name may be 253 characters (more once percent-encoded), past the 255 bytes a file name
     * can have with ".json" and the temporary file's affixes: such names are saved under a
     * hashed name, still one file each, and come back after a reopen.
     */
    @Test
    void theLongestNamesAreSavedAndComeBack(@TempDir Path dir) throws Exception {
        String longest = "a".repeat(253);
        String sibling = "a".repeat(252) + "b";
        Config kept;
        Config keptSibling;
        try (DurableConfigStore s = open(dir)) {
            kept = s.create(vs(longest, "long.example.com"));
            keptSibling = s.create(vs(sibling, "sibling.example.com"));
        }
        try (Stream<Path> files = Files.list(dir.resolve("virtualservice/team-a"))) {
            List<Path> saved = files.toList();
            assertEquals(2, saved.size(), saved.toString());
            for (Path f : saved) {
                assertTrue(f.getFileName().toString().length() + ".tmp".length() + 1 <= 255, f.toString());
            }
        }
        try (DurableConfigStore s = open(dir)) {
            assertEquals(List.of(), s.errors());
            assertEquals(kept, s.get("VirtualService", "team-a", longest).orElseThrow());
            assertEquals(keptSibling, s.get("VirtualService", "team-a", sibling).orElseThrow());
        }
    }

    @Test
    void namesThatAreNotPlainDnsNamesGetTheirOwnFiles() {
        assertEquals("reviews.v1", ConfigStateDir.segment("reviews.v1"));
        assertEquals("%2E.", ConfigStateDir.segment(".."));
        assertEquals("a%2Fb", ConfigStateDir.segment("a/b"));
        assertEquals("%41b", ConfigStateDir.segment("Ab"));
    }
}
