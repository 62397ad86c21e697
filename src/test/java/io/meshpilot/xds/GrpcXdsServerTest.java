package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsServerBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.TestServers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's xDS-enabled server ({@code XdsServerBuilder}, gRFC A36) gets its inbound
 * listener from us: it starts serving on a port that is one of its own WorkloadEntry's
 * service ports, and stays not-serving on a port no service of its own declares.
 */
class GrpcXdsServerTest {

    /**
     * A port the xDS server can bind later (its listener name carries the port, so it must be
     * known before the server starts). Taken below Linux's ephemeral range (32768-60999): a
     * port from {@code ServerSocket(0)} is in that range, where any outgoing connection of a
     * busy machine may take it between this probe and the bind.
     */
    static int freePort() throws Exception {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 100; attempt++) {
            int candidate = random.nextInt(20_000, 32_000);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(candidate));
                return candidate;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IllegalStateException("no free port in 20000-31999 after 100 attempts");
    }

    static Map<String, Object> bootstrap(int xdsPort) {
        return Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + xdsPort,
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "sidecar~127.0.0.1~echo-server.test~test.svc.cluster.local",
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test")),
                "server_listener_resource_name_template", "xds.istio.io/grpc/lds/inbound/%s");
    }

    static Server xdsServer(int port, int xdsPort, CompletableFuture<Boolean> serving) {
        return XdsServerBuilder.forPort(port, InsecureServerCredentials.create())
                .overrideBootstrapForTest(bootstrap(xdsPort))
                .xdsServingStatusListener(new XdsServerBuilder.XdsServingStatusListener() {
                    @Override
                    public void onServing() {
                        serving.complete(true);
                    }

                    @Override
                    public void onNotServing(Throwable throwable) {
                        serving.complete(false);
                    }
                })
                .addService(ServerServiceDefinition.builder("test.Echo")
                        .addMethod(ProxylessGrpcTest.WHO, ServerCalls.asyncUnaryCall((req, out) -> {
                            out.onNext("xds-server");
                            out.onCompleted();
                        })).build())
                .build();
    }

    /**
     * The config dir of a gRPC echo server workload (test/echo-server, service port 7070 to
     * {@code port} on 127.0.0.1), as its xDS server bootstraps against; returns the dir.
     */
    static Path echoServer(Path dir, int port) throws IOException {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("echo-server.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo-server, namespace: test}
                spec:
                  hosts: [echo-server.test.svc.cluster.local]
                  ports: [{number: 7070, name: grpc, protocol: GRPC, targetPort: %d}]
                  resolution: STATIC
                  workloadSelector: {labels: {app: echo-server}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-server-1, namespace: test}
                spec: {address: 127.0.0.1, labels: {app: echo-server}}
                """.formatted(port));
        return config;
    }

    @Test
    void anXdsServerServesItsOwnServicePortOnly(@TempDir Path dir) throws Exception {
        int port = freePort();
        int undeclared = freePort();
        Path config = echoServer(dir, port);
        try (MeshPilotServer server = TestServers.start(dir)) {
            int xds = server.ports().get("grpc");
            CompletableFuture<Boolean> serving = new CompletableFuture<>();
            CompletableFuture<Boolean> notServing = new CompletableFuture<>();
            Server declared = xdsServer(port, xds, serving).start();
            Server other = xdsServer(undeclared, xds, notServing);
            // start() blocks until the server has its listener: here it never gets one
            Thread starter = Thread.ofVirtual().start(() -> {
                try {
                    other.start();
                } catch (IOException | RuntimeException e) {
                    notServing.completeExceptionally(e);
                }
            });
            ManagedChannel channel = Grpc.newChannelBuilder("127.0.0.1:" + port, InsecureChannelCredentials.create())
                    .build();
            try {
                assertTrue(serving.get(20, TimeUnit.SECONDS), "the server got its inbound listener");
                assertEquals("xds-server", ClientCalls.blockingUnaryCall(channel, ProxylessGrpcTest.WHO,
                        CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), "who"));
                assertEquals(false, notServing.get(20, TimeUnit.SECONDS),
                        "no listener for a port none of its services declares");
            } finally {
                channel.shutdownNow();
                declared.shutdownNow();
                other.shutdownNow();
                starter.interrupt();
            }
        }
    }
}
