package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.meshpilot.admin.DebugResourceNames;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.ServerProcess;
import jakarta.json.bind.JsonbBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** pilot-discovery as an operator runs it: real processes, real signals, exit codes. */
class ProcessLifecycleIT {
    static final Duration START = Duration.ofSeconds(90);
    static final Pattern READY = Pattern.compile("\\bready: started in ");

    /**
     * Everything the server keeps, inside the test's own {@code dir} (deleted with it): config
     * files in {@code dir/config}, the mesh config {@code dir/mesh}, the CA in {@code dir/ca},
     * the REST writes in {@code dir/state}.
     */
    static String[] flags(Path dir, String... extra) throws IOException {
        return flags(dir, dir.resolve("state"), extra);
    }

    /** With the REST writes kept in {@code stateDir} (one per running server: it is locked). */
    static String[] flags(Path dir, Path stateDir, String... extra) throws IOException {
        List<String> f = new ArrayList<>(List.of("discovery", "--configStateDir", stateDir.toString(),
                "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0",
                "--meshConfig", dir.resolve("mesh").toString(),
                "--configDir", Files.createDirectories(dir.resolve("config")).toString(),
                "--caStateDir", dir.resolve("ca").toString(), "--caKeyType", "EC",
                // ControlZ's fixed 9876 would be taken by the second of two servers side by side
                "--ctrlz_port", "0"));
        f.addAll(List.of(extra));
        return f.toArray(String[]::new);
    }

    /** Opens a gRPC health Watch (a long-lived stream, like a proxy's); statuses, then "closed". */
    static LinkedBlockingQueue<Object> healthWatch(ManagedChannel ch) {
        LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
        HealthGrpc.newStub(ch).watch(HealthCheckRequest.getDefaultInstance(), new StreamObserver<>() {
            @Override
            public void onNext(HealthCheckResponse r) {
                events.add(r.getStatus());
            }

            @Override
            public void onError(Throwable t) {
                events.add("closed");
            }

            @Override
            public void onCompleted() {
                events.add("closed");
            }
        });
        return events;
    }

    @Test
    @SuppressWarnings("unchecked")
    void twoInstancesRunSideBySideEachWithItsOwnPorts(@TempDir Path dir) throws Exception {
        try (ServerProcess a = ServerProcess.jar(Map.of(), flags(dir, dir.resolve("state-a")));
             ServerProcess b = ServerProcess.jar(Map.of(), flags(dir, dir.resolve("state-b")))) {
            Map<String, Integer> pa = a.awaitPorts(START);
            Map<String, Integer> pb = b.awaitPorts(START);
            a.await(READY, START);
            b.await(READY, START);
            for (var entry : Map.of(a, pa, b, pb).entrySet()) {
                Map<String, Integer> ports = entry.getValue();
                Map<String, Object> info = JsonbBuilder.create().fromJson(
                        Http.get(ports.get("http"), "/api/v1/server").body(), Map.class);
                Map<String, Map<String, Object>> listeners = (Map<String, Map<String, Object>>) info.get("listeners");
                ports.forEach((name, port) ->
                        assertEquals(port, ((Number) listeners.get(name).get("port")).intValue(), name));
            }
            for (String listener : pa.keySet()) {
                assertNotEquals(pa.get(listener), pb.get(listener), listener + " must differ between instances");
            }
        }
    }

    @Test
    void aPortInUseStopsStartUpNamingThePort(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            for (String flag : List.of("--monitoringAddr", "--grpcAddr")) {
                String[] args = flags(dir);
                for (int i = 0; i < args.length; i++) {
                    if (args[i].equals(flag)) {
                        args[i + 1] = "127.0.0.1:" + port;
                    }
                }
                try (ServerProcess p = ServerProcess.jar(Map.of(), args)) {
                    int code = p.awaitExit(START);
                    assertNotEquals(0, code, p.output());
                    String last = p.lastLine();
                    assertTrue(last.contains("start-up failed") && last.contains(Integer.toString(port)),
                            flag + ": " + last);
                }
            }
        }
    }

    @Test
    void invalidMeshConfigAtStartNamesFileAndLine(@TempDir Path dir) throws Exception {
        Path mesh = dir.resolve("mesh");
        Files.writeString(mesh, "trustDomain: example.org\nconnectTimeout: banana\n");
        try (ServerProcess p = ServerProcess.jar(Map.of(), flags(dir))) {
            int code = p.awaitExit(START);
            assertNotEquals(0, code, p.output());
            assertTrue(p.lastLine().contains(mesh + ":2:") && p.lastLine().contains("connectTimeout"), p.lastLine());
        }
    }

    @Test
    void sigtermTurnsReadinessOffDrainsAndExitsZero(@TempDir Path dir) throws Exception {
        Duration shutdown = Duration.ofSeconds(3);
        try (ServerProcess p = ServerProcess.jar(Map.of(), flags(dir, "--shutdownDuration", "3s"))) {
            Map<String, Integer> ports = p.awaitPorts(START);
            p.await(READY, START);
            int http = ports.get("http");
            assertEquals(200, Http.get(http, "/ready").status());

            // An open gRPC stream, as a connected proxy has: the drain waits for it.
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", ports.get("grpc")).usePlaintext().build();
            LinkedBlockingQueue<Object> watch = healthWatch(ch);
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, watch.poll(20, TimeUnit.SECONDS));

            long signalled = System.nanoTime();
            p.process().toHandle().destroy(); // SIGTERM; Process.destroy() would also close our end of its output
            assertEquals(HealthCheckResponse.ServingStatus.NOT_SERVING, watch.poll(20, TimeUnit.SECONDS),
                    "gRPC health turns NOT_SERVING on SIGTERM");
            Http.Reply during = Http.get(http, "/ready");
            assertEquals(503, during.status(), "readiness is off while draining");
            assertTrue(during.body().contains("not-shutting-down"), during.body());

            int code = p.awaitExit(shutdown.plusSeconds(2));
            long tookMs = (System.nanoTime() - signalled) / 1_000_000;
            assertEquals(0, code, p.output());
            assertTrue(p.output().contains("drain deadline reached"), "the open stream held the drain until the deadline:\n" + p.output());
            String stopping = p.output().substring(p.output().indexOf("SIGTERM received"));
            assertEquals(List.of(), stopping.lines().filter(line -> line.contains("\twarn\t") || line.contains("\terror\t"))
                    .toList(), "an orderly stop logs no warning or error");
            System.out.println("SIGTERM to exit: " + tookMs + " ms (shutdownDuration 3s)");
            ch.shutdownNow();
        }
    }

    @Test
    void aSecondSigtermExitsAtOnce(@TempDir Path dir) throws Exception {
        try (ServerProcess p = ServerProcess.jar(Map.of(), flags(dir, "--shutdownDuration", "60s"))) {
            Map<String, Integer> ports = p.awaitPorts(START);
            p.await(READY, START);
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", ports.get("grpc")).usePlaintext().build();
            LinkedBlockingQueue<Object> watch = healthWatch(ch);
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, watch.poll(20, TimeUnit.SECONDS));
            p.process().toHandle().destroy();
            p.await(Pattern.compile("draining: readiness off"), Duration.ofSeconds(20));
            p.process().toHandle().destroy();
            // far sooner than the 60 s drain the first signal started
            int code = p.awaitExit(Duration.ofSeconds(20));
            assertEquals(143, code, p.output());
            assertTrue(p.output().contains("exiting without draining"), p.output());
            ch.shutdownNow();
        }
    }

    @Test
    void versionAndRequestCommands(@TempDir Path dir) throws Exception {
        try (ServerProcess v = ServerProcess.jar(Map.of(), "version")) {
            assertEquals(0, v.awaitExit(START));
            assertTrue(v.output().matches("(?s).*version\\.BuildInfo\\{Version:\"[^\"]+\", GitRevision:\"([0-9a-f]{40}|unknown)\", "
                    + "JavaVersion:\"\\d+[^\"]*\", BuildTime:\"[^\"]+\", BuildStatus:\"(Clean|Modified|unknown)\".*"), v.output());
        }
        try (ServerProcess v = ServerProcess.jar(Map.of(), "version", "-o", "json")) {
            assertEquals(0, v.awaitExit(START));
            Map<?, ?> json = JsonbBuilder.create().fromJson(v.output().substring(v.output().indexOf('{')), Map.class);
            Map<?, ?> client = (Map<?, ?>) json.get("clientVersion");
            assertEquals(Runtime.version().toString().split("\\+")[0], client.get("java_version").toString().split("\\+")[0]);
        }
        try (ServerProcess server = ServerProcess.jar(Map.of(), flags(dir))) {
            Map<String, Integer> ports = server.awaitPorts(START);
            server.await(READY, START);
            String monitoring = Integer.toString(ports.get("monitoring"));
            try (ServerProcess r = ServerProcess.jar(Map.of(), "request", "GET", "/debug/list", "--port", monitoring)) {
                assertEquals(0, r.awaitExit(START));
                assertEquals(DebugResourceNames.names(),
                        JsonbBuilder.create().fromJson(r.lastLine(), List.class), r.lastLine());
            }
            try (ServerProcess r = ServerProcess.jar(Map.of(), "request", "GET", "debug/mesh", "--port", monitoring)) {
                assertEquals(0, r.awaitExit(START));
                assertTrue(r.lastLine().contains("\"trustDomain\":\"cluster.local\""), r.lastLine());
            }
        }
        try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = closed.getLocalPort();
            closed.close();
            try (ServerProcess r = ServerProcess.jar(Map.of(), "request", "GET", "/debug/list", "--port", Integer.toString(port))) {
                assertEquals(1, r.awaitExit(START), r.output());
                assertTrue(r.lastLine().startsWith("Error:"), r.lastLine());
            }
        }
    }

    @Test
    void theReadmeRunCommandComesUpReady(@TempDir Path dir) throws Exception {
        // bin/pilot-discovery as the README runs it, on ephemeral ports so CI can run it anywhere
        List<String> args = new ArrayList<>(List.of(flags(dir)));
        try (ServerProcess p = ServerProcess.script(Map.of(), args.toArray(String[]::new))) {
            Map<String, Integer> ports = p.awaitPorts(START);
            p.await(READY, START);
            assertEquals(200, Http.get(ports.get("http"), "/ready").status());
            assertTrue(p.output().contains("mode=embedded"), p.output());
            assertTrue(!p.output().contains("meshpilot: building"), "the jar built by this run must be reused");
        }
    }
}
