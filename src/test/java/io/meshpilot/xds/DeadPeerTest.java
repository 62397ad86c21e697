package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.grpc.ActiveCalls;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.StreamHolder;
import io.meshpilot.testing.TestServers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
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

    @Test
    void killedClientsLeaveNoStreamOrCall(@TempDir Path dir) throws Exception {
        String transport = "default transport";
        TestServers.copyBookinfo(dir);
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_MAX_REQUESTS_PER_SECOND", "1000"))) {
            int http = server.ports().get("http");
            ActiveCalls calls = server.server().components().grpcServices().activeCalls();
            String java = ProcessHandle.current().info().command().orElse("java");
            Process holder = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                    StreamHolder.class.getName(), Integer.toString(server.ports().get("grpc")), "100", "100"))
                    .redirectErrorStream(true).start();
            try {
                String line = holdingLine(holder);
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
                assertTrue(server.server().components().discovery().connections().isEmpty(), transport);
                assertEquals(0, calls.active(), transport + ": gRPC calls of the killed client still open");
                // what SIGTERM runs: with no call open, the drain ends at once instead of at its deadline
                assertTrue(server.server().drain(Duration.ofMinutes(5)),
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
        Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, "--grpcTransport", transport,
                "--keepaliveMaxServerConnectionAge", "1s");
             AdsClient c = new AdsClient(server.ports().get("grpc"),
                     "sidecar~10.0.0.1~aged.default~default.svc.cluster.local", Map.of())) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
            long start = System.nanoTime();
            Throwable t = c.awaitError(Duration.ofSeconds(40));
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("%s: stream ended after %.1f s (age 1s): %s%n", transport, seconds, t);
            assertTrue(t != null, transport + ": the stream was not ended");
            assertEquals(Status.Code.UNAVAILABLE, Status.fromThrowable(t).getCode(), String.valueOf(t));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (connections(server.ports().get("http")) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(0, connections(server.ports().get("http")), transport);
        }
    }

    /**
     * An empty --grpcAddr puts plaintext xDS on Helidon (multiplexed on the http port), which
     * never ends the calls of a connection that closed abruptly. With the default (infinite)
     * --keepaliveMaxServerConnectionAge its streams still get a maximum age, named in one
     * WARNING at start: once the sweep passes that age, the streams of a killed client there
     * leave /debug/connections and a live one is ended with UNAVAILABLE, while a stream on
     * Netty's secure port (Netty ages its connections itself) is left alone.
     */
    @Test
    void helidonHostedStreamsGetAMaximumAgeByDefault(@TempDir Path dir) throws Exception {
        TestServers.copyBookinfo(dir);
        List<String> flags = new ArrayList<>(TestServers.flags(dir));
        flags.set(flags.indexOf("--grpcAddr") + 1, "");
        Logger sweepLog = Logger.getLogger(ConnectionSweeper.class.getName());
        List<String> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel() == Level.WARNING) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        boolean parents = sweepLog.getUseParentHandlers();
        sweepLog.setUseParentHandlers(false);
        sweepLog.addHandler(capture);
        Process holder = null;
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags,
                Map.of("PILOT_MAX_REQUESTS_PER_SECOND", "1000", "XDS_AUTH", "false")))) {
            int http = server.ports().get("http");
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).contains("after 30m"), warnings.get(0));
            ConnectionSweeper sweeper = server.server().components().discovery().sweeper()
                    .orElseThrow(() -> new AssertionError("no sweep for the streams on Helidon"));

            var cert = server.server().components().certificates().serving();
            var chain = cert.chain().toArray(X509Certificate[]::new);
            ManagedChannel tls = NettyChannelBuilder
                    .forAddress("127.0.0.1", server.ports().get("grpc-secure"))
                    .sslContext(GrpcSslContexts.forClient()
                            .trustManager(chain).keyManager(cert.privateKey(), chain).build())
                    .build();
            try (var onNetty = new AdsClient(tls,
                    "sidecar~10.0.0.2~netty.default~default.svc.cluster.local", Map.of());
                 var onHelidon = new AdsClient(http,
                         "sidecar~10.0.0.3~helidon.default~default.svc.cluster.local", Map.of())) {
                for (var c : List.of(onNetty, onHelidon)) {
                    c.subscribe(TypeUrls.CLUSTER, List.of());
                    c.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
                }
                String javaCommand = ProcessHandle.current().info().command().orElse("java");
                holder = new ProcessBuilder(List.of(javaCommand, "-cp", System.getProperty("java.class.path"),
                        StreamHolder.class.getName(), Integer.toString(http), "20", "20"))
                        .redirectErrorStream(true).start();
                String line = holdingLine(holder);
                assertEquals("holding 20", line);
                assertEquals(22, connections(http));
                holder.destroyForcibly(); // SIGKILL: no goodbye from the client
                holder.waitFor(10, TimeUnit.SECONDS);

                // the sweep as it runs once the age (plus its jitter, at most 10%) has passed
                sweeper.sweep(Instant.now().plus(sweeper.maxAge().multipliedBy(2)));
                assertEquals(1, connections(http), "only the stream on Netty is left");
                Throwable ended = onHelidon.awaitError(Duration.ofSeconds(20));
                assertEquals(Status.Code.UNAVAILABLE, Status.fromThrowable(ended).getCode(),
                        String.valueOf(ended));
                assertEquals(null, onNetty.error(), "the stream on Netty was ended");
            }
        } finally {
            if (holder != null) {
                holder.destroyForcibly();
            }
            sweepLog.removeHandler(capture);
            sweepLog.setUseParentHandlers(parents);
        }
    }

    private static int connections(int http) {
        return JsonParser.parseString(Http.get(http, "/debug/connections").body()).getAsJsonObject().get("totalClients")
                .getAsInt();
    }

    /** StreamHolder's report ("holding N" or "not ..."), past any JVM warnings before it. */
    private static String holdingLine(Process holder) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
        return CompletableFuture.supplyAsync(() -> {
            try {
                String l;
                while ((l = out.readLine()) != null && !l.startsWith("holding") && !l.startsWith("not")) {
                    // JVM warnings before the line we wait for
                }
                return l;
            } catch (IOException e) {
                return e.toString();
            }
        }).get(90, TimeUnit.SECONDS);
    }
}
