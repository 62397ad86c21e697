package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pprof equivalents over a real server: a JFR recording that the JDK's own parser reads, a
 * thread dump, a class histogram; a bad {@code seconds} is refused with the reason.
 */
class ProfilingEndpointsTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        http = server.ports().get("http");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void profileIsAJfrRecordingThatParses() throws Exception {
        HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + http + "/debug/pprof/profile?seconds=1"))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), new String(r.body()));
        assertEquals("application/octet-stream", r.headers().firstValue("content-type").orElse(""));
        Path file = Files.write(dir.resolve("profile.jfr"), r.body());
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertFalse(events.isEmpty(), "a one-second recording with the profile settings has events");
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("jdk.CPULoad")
                || e.getEventType().getName().equals("jdk.ExecutionSample")), "CPU events are recorded");
    }

    @Test
    void aBadDurationIsRefusedWithTheReason() {
        for (String bad : List.of("abc", "0", "-5", "100000", "1.5")) {
            Http.Reply r = Http.get(http, "/debug/pprof/profile?seconds=" + bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertTrue(r.body().startsWith("seconds=" + bad + ": "), r.body());
        }
    }

    @Test
    void oneRecordingAtATime() throws Exception {
        var first = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> Http.get(http, "/debug/pprof/profile?seconds=2").status());
        // the server runs in this JVM: its recording shows in this JVM's flight recorder
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings().stream().noneMatch(
                r -> r.getName().equals("meshpilot /debug/pprof/profile") && r.getState() == jdk.jfr.RecordingState.RUNNING)) {
            assertTrue(System.nanoTime() < deadline, "the first recording never started");
            Thread.sleep(20);
        }
        Http.Reply second = Http.get(http, "/debug/pprof/profile?seconds=1");
        assertEquals(500, second.status(), second.body());
        assertTrue(second.body().contains("another profile is being recorded"), second.body());
        assertEquals(200, first.get(30, java.util.concurrent.TimeUnit.SECONDS));
    }

    @Test
    void goroutineIsAThreadDump() {
        Http.Reply r = Http.get(http, "/debug/pprof/goroutine");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.contentType().startsWith("text/plain"), r.contentType());
        assertTrue(r.body().contains("\"main\""), "the main thread is listed");
        assertTrue(r.body().contains("java.lang.Thread.State"), "with thread states");
    }

    @Test
    void heapIsAClassHistogram() {
        Http.Reply r = Http.get(http, "/debug/pprof/heap");
        assertEquals(200, r.status(), r.body());
        String header = r.body().lines().filter(l -> !l.isBlank()).findFirst().orElse("");
        for (String column : List.of("num", "#instances", "#bytes", "class name")) {
            assertTrue(header.contains(column), header);
        }
        assertTrue(r.body().contains("java.lang.String"), "a histogram of the live classes");
    }

    @Test
    void theMonitoringListenerServesThemToo() {
        assertEquals(200, Http.get(server.ports().get("monitoring"), "/debug/pprof/goroutine").status());
    }
}
