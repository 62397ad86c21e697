package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pprof equivalents over a real server: a JFR recording that the JDK's own parser reads and
 * that holds nothing of the process's environment or command line, a thread dump, a class
 * histogram; a bad {@code seconds} is refused with the reason.
 */
class ProfilingEndpointsTest {
    /**
     * JDK events whose fields hold what the process was started with or runs: environment,
     * system and security properties, JVM and program arguments, string flags, agents' options,
     * the command lines of the machine's processes and of those the JVM starts.
     */
    static final List<String> REVEALING = List.of("jdk.InitialEnvironmentVariable", "jdk.InitialSystemProperty",
            "jdk.InitialSecurityProperty", "jdk.JVMInformation", "jdk.StringFlag", "jdk.JavaAgent",
            "jdk.NativeAgent", "jdk.SystemProcess", "jdk.ProcessStart");

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
        CompletableFuture<Integer> first = CompletableFuture.supplyAsync(
                () -> Http.get(http, "/debug/pprof/profile?seconds=2").status());
        awaitServedRecording();
        Http.Reply second = Http.get(http, "/debug/pprof/profile?seconds=1");
        assertEquals(500, second.status(), second.body());
        assertTrue(second.body().contains("another profile is being recorded"), second.body());
        assertEquals(200, first.get(30, TimeUnit.SECONDS));
    }

    @Test
    void theRecordingNeverEnablesWhatHoldsTheEnvironmentOrCommandLine() throws Exception {
        CompletableFuture<Integer> profile = CompletableFuture.supplyAsync(
                () -> Http.get(http, "/debug/pprof/profile?seconds=2").status());
        Map<String, String> settings = awaitServedRecording().getSettings();
        assertEquals(200, profile.get(30, TimeUnit.SECONDS)); // ended before asserting, so no other test meets it
        for (String event : REVEALING) {
            assertEquals("false", settings.get(event + "#enabled"), event);
        }
    }

    @Test
    void whatAnotherRecordingEnablesIsLeftOutOfTheAnswer() throws Exception {
        // an operator's recording (jcmd JFR.start, -XX:StartFlightRecording) with the JDK's
        // defaults: its events land in the chunks our recording is dumped from
        try (Recording operator = new Recording(Configuration.getConfiguration("default"))) {
            operator.setName("operator");
            operator.start();
            HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + http + "/debug/pprof/profile?seconds=1"))
                    .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, r.statusCode(), new String(r.body()));
            List<RecordedEvent> events = RecordingFile.readAllEvents(Files.write(dir.resolve("scrubbed.jfr"), r.body()));
            assertFalse(events.isEmpty());
            assertEquals(List.of(), events.stream().map(e -> e.getEventType().getName())
                    .filter(REVEALING::contains).distinct().toList());
        }
    }

    /** The served recording once it runs: the server is in this JVM, so it shows in this JVM's flight recorder. */
    static Recording awaitServedRecording() throws InterruptedException {
        Await.until("the served recording to start", Duration.ofSeconds(20), () -> servedRecording().isPresent());
        return servedRecording().orElseThrow();
    }

    static Optional<Recording> servedRecording() {
        return FlightRecorder.getFlightRecorder().getRecordings().stream()
                .filter(r -> r.getName().equals("meshpilot /debug/pprof/profile") && r.getState() == RecordingState.RUNNING)
                .findFirst();
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
