package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A --configDir directory that cannot be read, for real: the server runs as a process whose
 * reads of a mode-000 directory fail. Run as root (as the suite is here), the server is
 * started under {@code setpriv} without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so root's
 * reads are checked against the permission bits like anyone's; as another user, chmod alone
 * does it. Nothing is skipped: without setpriv, as root, the test fails.
 */
class ConfigDirPermissionsIT {
    static final Duration START = Duration.ofSeconds(90);
    static final Duration CHANGE = Duration.ofSeconds(30);

    static List<String> launcher() throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (uid != 0) {
            return List.of();
        }
        Path setpriv = Path.of("/usr/bin/setpriv");
        assertTrue(Files.isExecutable(setpriv), "running as root: setpriv (util-linux) is needed to make a "
                + "directory unreadable for the server");
        return List.of(setpriv.toString(), "--bounding-set=-dac_override,-dac_read_search");
    }

    static String[] flags(Path dir) {
        return new String[] {"discovery",
                "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0",
                "--meshConfig", dir.resolve("mesh").toString(), "--configDir", dir.resolve("config").toString(),
                "--caStateDir", dir.resolve("ca").toString(), "--caKeyType", "EC",
                // the test's own (the default is var/config of the installation, and locked)
                "--configStateDir", dir.resolve("state").toString()};
    }

    static String vs(String name) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: %s}
                spec:
                  hosts: [%s.example.com]
                  http:
                  - route:
                    - destination: {host: %s.example.com}
                """.formatted(name, name, name);
    }

    static void mode(Path p, String rwx) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(rwx));
    }

    static boolean served(int http, String name) {
        return Http.get(http, "/api/v1/configs/networking.istio.io/v1/virtualservices/default/" + name).status() == 200;
    }

    static List<JsonObject> configErrors(int http) {
        return JsonParser.parseString(Http.get(http, "/api/v1/config-errors").body()).getAsJsonArray().asList().stream()
                .map(JsonElement::getAsJsonObject).toList();
    }

    static boolean reported(int http, String source, String reason) {
        return configErrors(http).stream().anyMatch(e -> e.get("source").getAsString().equals(source)
                && e.get("reason").getAsString().equals(reason));
    }

    /** Polls the server until the condition holds (the config dir is watched, and polled every 2 s). */
    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, CHANGE, condition);
    }

    @Test
    void anUnreadableSubdirectoryIsReportedAndTheRestOfTheTreeKeepsLoading(@TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Path locked = Files.createDirectories(config.resolve("locked"));
        Files.writeString(config.resolve("a.yaml"), vs("a"));
        Files.writeString(locked.resolve("b.yaml"), vs("b"));
        mode(locked, "---------");
        try (ServerProcess server = ServerProcess.jar(launcher(), Map.of(), flags(dir))) {
            int http = server.awaitPorts(START).get("http");
            server.await(ProcessLifecycleIT.READY, START);
            assertTrue(server.process().isAlive(), "start-up goes on without the directory");
            assertEquals(200, Http.get(http, "/ready").status());
            assertTrue(served(http, "a"));
            assertFalse(served(http, "b"));
            String denied = "cannot read directory: permission denied";
            assertTrue(reported(http, "locked", denied), configErrors(http).toString());
            assertTrue(server.output().lines().anyMatch(l -> l.contains("locked") && l.contains(denied)),
                    "the log names the directory and the cause:\n" + server.output());

            // the rest of the tree: adds and deletes still happen
            Files.writeString(config.resolve("c.yaml"), vs("c"));
            Files.delete(config.resolve("a.yaml"));
            await("c added and a deleted while locked/ cannot be read", () -> served(http, "c") && !served(http, "a"));

            // readable again: its files load, the report goes
            mode(locked, "rwxr-xr-x");
            await("locked/b.yaml loaded once readable", () -> served(http, "b") && configErrors(http).isEmpty());

            // unreadable while its objects are loaded: they are kept (the files may still be there)
            mode(locked, "---------");
            await("reported again", () -> reported(http, "locked", denied));
            Files.writeString(config.resolve("d.yaml"), vs("d"));
            await("d added", () -> served(http, "d"));
            assertTrue(served(http, "b"), "objects of an unreadable directory are kept, not deleted");
        } finally {
            mode(locked, "rwxr-xr-x");
        }
    }

    /**
     * A chmod changes neither size, mtime nor inode: a file that could not be read is read again
     * on every scan, so it loads once readable without a change to its content.
     */
    @Test
    void anUnreadableFileLoadsOnceReadableWithoutAContentChange(@TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Path file = Files.writeString(config.resolve("e.yaml"), vs("e"));
        mode(file, "---------");
        try (ServerProcess server = ServerProcess.jar(launcher(), Map.of(), flags(dir))) {
            int http = server.awaitPorts(START).get("http");
            server.await(ProcessLifecycleIT.READY, START);
            assertFalse(served(http, "e"));
            assertTrue(reported(http, "e.yaml", "cannot read: permission denied"), configErrors(http).toString());
            mode(file, "rw-r--r--");
            await("e.yaml loaded once readable", () -> served(http, "e") && configErrors(http).isEmpty());
        } finally {
            mode(file, "rw-r--r--");
        }
    }

    @Test
    void anUnreadableConfigDirIsReportedAndLoadedOnceReadable(@TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("a.yaml"), vs("a"));
        mode(config, "---------");
        try (ServerProcess server = ServerProcess.jar(launcher(), Map.of(), flags(dir))) {
            int http = server.awaitPorts(START).get("http");
            server.await(ProcessLifecycleIT.READY, START);
            assertTrue(reported(http, config.toString(), "cannot read directory: permission denied"),
                    configErrors(http).toString());
            mode(config, "rwxr-xr-x");
            await("a loaded once the config dir is readable", () -> served(http, "a") && configErrors(http).isEmpty());
        } finally {
            mode(config, "rwxr-xr-x");
        }
    }
}
