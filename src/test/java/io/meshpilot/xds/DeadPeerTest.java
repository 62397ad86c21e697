package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.StreamHolder;
import io.meshpilot.testing.TestServers;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client process holding 100 ADS streams, each on its own HTTP/2 connection, is killed with
 * SIGKILL (no RST_STREAM, no GOAWAY): on the default transport (grpc-java's Netty) its streams
 * leave {@code /debug/connections}, no gRPC call is left open, and the shutdown drain (what
 * SIGTERM runs) then has nothing to wait for. Helidon 4.4's HTTP/2 server does not end the
 * calls of a connection that closed, so this holds only for Netty (README, --grpcTransport).
 */
class DeadPeerTest {

    @org.junit.jupiter.api.Test
    void killedClientsLeaveNoStreamOrCall(@TempDir Path dir) throws Exception {
        String transport = "default transport";
        TestServers.copyBookinfo(dir);
        try (MeshPilotServer server = TestServers.start(dir, java.util.Map.of("PILOT_MAX_REQUESTS_PER_SECOND", "1000"))) {
            int http = server.ports().get("http");
            io.meshpilot.grpc.ActiveCalls calls = server.bean(io.meshpilot.grpc.GrpcServices.class).activeCalls();
            String java = ProcessHandle.current().info().command().orElse("java");
            Process holder = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                    StreamHolder.class.getName(), Integer.toString(server.ports().get("grpc")), "100", "100"))
                    .redirectErrorStream(true).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(),
                        StandardCharsets.UTF_8));
                String line = CompletableFuture.supplyAsync(() -> {
                    try {
                        String l;
                        while ((l = out.readLine()) != null && !l.startsWith("holding") && !l.startsWith("not")) {
                            // JVM warnings before the line we wait for
                        }
                        return l;
                    } catch (java.io.IOException e) {
                        return e.toString();
                    }
                }).get(90, TimeUnit.SECONDS);
                assertEquals("holding 100", line, transport);
                assertEquals(100, connections(http), transport + ": all streams connected");
                assertEquals(100, calls.active(), transport + ": one call per stream");

                long killed = System.nanoTime();
                holder.destroyForcibly(); // SIGKILL: no goodbye from the client
                holder.waitFor(10, TimeUnit.SECONDS);
                long deadline = killed + TimeUnit.SECONDS.toNanos(60);
                int left = connections(http);
                while ((left > 0 || calls.active() > 0) && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                    left = connections(http);
                }
                assertEquals(0, left, transport + ": streams of the killed client still listed after 60 s");
                assertTrue(server.bean(DiscoveryServer.class).connections().isEmpty(), transport);
                assertEquals(0, calls.active(), transport + ": gRPC calls of the killed client still open");
                // what SIGTERM runs: with no call open, the drain ends at once instead of at its deadline
                assertTrue(server.bean(io.meshpilot.bootstrap.Lifecycle.class).drain(Duration.ofMinutes(5)),
                        transport + ": the drain found calls to wait for");
            } finally {
                holder.destroyForcibly();
            }
        }
    }

    /**
     * --keepaliveMaxServerConnectionAge: an ADS stream older than the age is ended (Netty:
     * GOAWAY, then the 10 s grace; Helidon: the sweep ends it with UNAVAILABLE) so the proxy
     * reconnects, and it leaves /debug/connections.
     */
    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void streamsOlderThanTheMaximumConnectionAgeAreEnded(String transport, @TempDir Path dir) throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, "--grpcTransport", transport,
                "--keepaliveMaxServerConnectionAge", "1s");
             io.meshpilot.testing.AdsClient c = new io.meshpilot.testing.AdsClient(server.ports().get("grpc"),
                     "sidecar~10.0.0.1~aged.default~default.svc.cluster.local", java.util.Map.of())) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.await(TypeUrls.CLUSTER, java.time.Duration.ofSeconds(20));
            long start = System.nanoTime();
            Throwable t = c.awaitError(java.time.Duration.ofSeconds(40));
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("%s: stream ended after %.1f s (age 1s): %s%n", transport, seconds, t);
            assertTrue(t != null, transport + ": the stream was not ended");
            assertEquals(io.grpc.Status.Code.UNAVAILABLE, io.grpc.Status.fromThrowable(t).getCode(), String.valueOf(t));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (connections(server.ports().get("http")) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(0, connections(server.ports().get("http")), transport);
        }
    }

    private static int connections(int http) {
        return JsonParser.parseString(Http.get(http, "/debug/connections").body()).getAsJsonArray().size();
    }
}
