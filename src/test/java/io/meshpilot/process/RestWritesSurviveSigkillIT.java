package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.admin.ConfigApiTest;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acknowledged REST writes against a real process killed with SIGKILL in the middle of them:
 * after a restart on the same state directory every acknowledged write is served, and a
 * write that was in flight is either wholly there or absent.
 */
class RestWritesSurviveSigkillIT {
    static final String BASE = "/api/v1/configs/networking.istio.io/v1/virtualservices/team-a/";
    static final int KEYS = 100; // a create and an update each: 200 writes
    static final int WRITERS = 4;

    /** A VirtualService in team-a routing {@code host} to itself (ConfigApiTest's, no extra metadata). */
    static String vs(String name, String host) {
        return ConfigApiTest.vs(name, host, "");
    }

    static String host(int key, int version) {
        return "w" + key + "-v" + version + ".example.com";
    }

    /** Per key: the last version acknowledged (0: none) and the one in flight when the server died. */
    record Outcome(int acked, int inFlight) {
    }

    @Test
    void everyAcknowledgedWriteIsServedAfterSigkillAndRestart(@TempDir Path dir) throws Exception {
        Path state = dir.resolve("state");
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        // the server's own temporary directory, to see what it leaves there
        Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=" + tmp);
        Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
        int killAfter = ThreadLocalRandom.current().nextInt(40, 160);
        AtomicInteger acks = new AtomicInteger();
        try (ServerProcess server = ServerProcess.jar(env, ProcessLifecycleIT.flags(dir, state))) {
            int http = server.awaitPorts(ProcessLifecycleIT.START).get("http");
            server.await(ProcessLifecycleIT.READY, ProcessLifecycleIT.START);
            CountDownLatch killNow = new CountDownLatch(1);
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int first = w;
                writers.add(Thread.ofPlatform().start(() -> {
                    for (int key = first; key < KEYS; key += WRITERS) {
                        for (int version = 1; version <= 2; version++) {
                            outcomes.merge(key, new Outcome(0, version), (o, n) -> new Outcome(o.acked(), n.inFlight()));
                            int status;
                            try {
                                status = Http.send(http, BASE + "w" + key, "PUT", vs("w" + key, host(key, version)), null)
                                        .status();
                            } catch (UncheckedIOException e) {
                                return; // the server is gone; this write stays "in flight"
                            }
                            if (status / 100 != 2) {
                                throw new AssertionError("write " + key + " v" + version + ": " + status);
                            }
                            int v = version;
                            outcomes.computeIfPresent(key, (k, o) -> new Outcome(v, 0));
                            if (acks.incrementAndGet() == killAfter) {
                                killNow.countDown();
                            }
                        }
                    }
                }));
            }
            assertTrue(killNow.await(120, TimeUnit.SECONDS), "writes did not reach " + killAfter + " acks");
            server.process().toHandle().destroyForcibly(); // SIGKILL, while the other writers are mid-request
            server.process().waitFor(30, TimeUnit.SECONDS);
            for (Thread t : writers) {
                t.join(TimeUnit.SECONDS.toMillis(60));
            }
        }
        assertTrue(acks.get() >= killAfter && acks.get() < 2 * KEYS, "killed during the writes: " + acks.get());
        try (Stream<Path> left = Files.walk(tmp)) {
            List<Path> keys = left.filter(Files::isRegularFile).filter(RestWritesSurviveSigkillIT::holdsPrivateKey).toList();
            assertEquals(List.of(), keys, "private keys left in the server's temporary directory");
        }

        try (ServerProcess again = ServerProcess.jar(env, ProcessLifecycleIT.flags(dir, state))) {
            int http = again.awaitPorts(ProcessLifecycleIT.START).get("http");
            again.await(ProcessLifecycleIT.READY, ProcessLifecycleIT.START);
            assertEquals("[]", Http.get(http, "/api/v1/config-errors").body().replace(" ", ""),
                    "every kept object restored");
            int served = 0;
            for (int key = 0; key < KEYS; key++) {
                Outcome o = outcomes.getOrDefault(key, new Outcome(0, 0));
                Http.Reply r = Http.get(http, BASE + "w" + key);
                if (r.status() == 404) {
                    assertEquals(0, o.acked(), "acknowledged write of w" + key + " lost: " + o);
                    continue;
                }
                assertEquals(200, r.status(), r.body());
                served++;
                JsonObject spec = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("spec");
                String servedHost = spec.getAsJsonArray("hosts").get(0).getAsString();
                List<String> allowed = new ArrayList<>();
                if (o.acked() > 0) {
                    allowed.add(host(key, o.acked()));
                }
                if (o.inFlight() > 0) {
                    allowed.add(host(key, o.inFlight()));
                }
                assertTrue(allowed.contains(servedHost), "w" + key + " serves " + servedHost + ", expected one of "
                        + allowed + " (" + o + ")");
                // whole, not half-written: the route is there too
                assertEquals(servedHost, spec.getAsJsonArray("http").get(0).getAsJsonObject().getAsJsonArray("route")
                        .get(0).getAsJsonObject().getAsJsonObject("destination").get("host").getAsString());
            }
            assertTrue(served > 0, "nothing served");
            // an acknowledged write after the restart gets a resourceVersion never seen before
            Http.Reply later = Http.send(http, BASE + "later", "PUT", vs("later", "later.example.com"), null);
            assertEquals(201, later.status(), later.body());
        }
        try (Stream<Path> files = Files.walk(state)) {
            assertFalse(files.anyMatch(p -> p.getFileName().toString().endsWith(".tmp")),
                    "interrupted writes' temporary files are gone after the restart");
        }
    }

    private static boolean holdsPrivateKey(Path file) {
        try {
            return Files.size(file) < 1_000_000 && Files.readString(file, StandardCharsets.ISO_8859_1)
                    .contains("PRIVATE KEY");
        } catch (IOException e) {
            return false;
        }
    }
}
