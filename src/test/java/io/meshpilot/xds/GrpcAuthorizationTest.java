package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.grpc.xds.XdsServerBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AuthorizationPolicy enforced by real grpc-java on both ends: an xDS-enabled server
 * ({@code XdsServerBuilder}) gets its inbound listener, RBAC filters included, from MeshPilot,
 * and an xDS client ({@code xds:///echo-server.test.svc.cluster.local:7070}) reaches it through
 * MeshPilot's routes. Plaintext, so the policies match on paths (gRPC methods) only. With no
 * policy every method answers; a DENY on one method refuses it alone with PERMISSION_DENIED; an
 * ALLOW on another method refuses the rest; deleting the policy file opens everything again,
 * all without a restart and without a NACK.
 */
class GrpcAuthorizationTest {
    static final List<String> METHODS = List.of("Who", "Admin", "Status");
    static final String HOST = "echo-server.test.svc.cluster.local";

    static MethodDescriptor<String, String> method(String name) {
        return MethodDescriptor.<String, String>newBuilder().setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName("test.Echo/" + name).setRequestMarshaller(new ProxylessGrpcTest.Utf8())
                .setResponseMarshaller(new ProxylessGrpcTest.Utf8()).build();
    }

    static Map<String, Object> serverBootstrap(int xdsPort) {
        return Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + xdsPort,
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "sidecar~127.0.0.1~echo-server-1.test~test.svc.cluster.local",
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test",
                                "LABELS", Map.of("app", "echo-server"))),
                "server_listener_resource_name_template", "xds.istio.io/grpc/lds/inbound/%s");
    }

    static Map<String, Object> clientBootstrap(int xdsPort) {
        return Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + xdsPort,
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "sidecar~127.0.0.2~client-1.test~test.svc.cluster.local",
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test")));
    }

    static String policy(String name, String action, String path) {
        return """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: %s, namespace: test}
                spec:
                  selector: {matchLabels: {app: echo-server}}
                  action: %s
                  rules: [{to: [{operation: {paths: ["%s"]}}]}]
                ---
                """.formatted(name, action, path);
    }

    /** Each method's status code ("OK" or the gRPC code) for one call from the xDS client. */
    static Map<String, String> outcomes(ManagedChannel channel) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String m : METHODS) {
            try {
                ClientCalls.blockingUnaryCall(channel, method(m),
                        CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "hi");
                out.put(m, "OK");
            } catch (StatusRuntimeException e) {
                out.put(m, e.getStatus().getCode().name());
            }
        }
        return out;
    }

    /** Calls until the outcomes are {@code expected} (a push takes the debounce and a round trip), at most 30 s. */
    static Map<String, String> await(ManagedChannel channel, Map<String, String> expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<String, String> got = outcomes(channel);
        while (!got.equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            got = outcomes(channel);
        }
        return got;
    }

    static void replace(Path file, String text) throws Exception {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void grpcJavaEnforcesAuthorizationPolicies(@TempDir Path dir) throws Exception {
        int port = GrpcXdsServerTest.freePort();
        Path config = GrpcXdsServerTest.echoServer(dir, port);
        try (MeshPilotServer server = TestServers.start(dir)) {
            int xds = server.ports().get("grpc");
            long rejectsBefore = XdsClientScenario.rejects();
            CompletableFuture<Boolean> serving = new CompletableFuture<>();
            ServerServiceDefinition.Builder service = ServerServiceDefinition.builder("test.Echo");
            for (String m : METHODS) {
                service.addMethod(method(m), ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(m);
                    out.onCompleted();
                }));
            }
            Server echo = XdsServerBuilder.forPort(port, InsecureServerCredentials.create())
                    .overrideBootstrapForTest(serverBootstrap(xds))
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
                    .addService(service.build()).build().start();
            NameResolverRegistry.getDefaultRegistry().register(
                    XdsNameResolverProvider.createForTest("xds-authz", clientBootstrap(xds)));
            ManagedChannel channel = Grpc.newChannelBuilder("xds-authz:///" + HOST + ":7070",
                    InsecureChannelCredentials.create()).build();
            try {
                assertTrue(serving.get(20, TimeUnit.SECONDS), "the server got its inbound listener");
                assertEquals(Map.of("Who", "OK", "Admin", "OK", "Status", "OK"), outcomes(channel),
                        "no policy: every method answers");

                Path policies = config.resolve("authz.yaml");
                replace(policies, policy("deny-admin", "DENY", "/test.Echo/Admin"));
                Map<String, String> deny = Map.of("Who", "OK", "Admin", "PERMISSION_DENIED", "Status", "OK");
                assertEquals(deny, await(channel, deny), "a DENY on Admin refuses Admin only");

                replace(policies, policy("deny-admin", "DENY", "/test.Echo/Admin")
                        + policy("allow-who", "ALLOW", "/test.Echo/Who"));
                Map<String, String> allow = Map.of("Who", "OK", "Admin", "PERMISSION_DENIED",
                        "Status", "PERMISSION_DENIED");
                assertEquals(allow, await(channel, allow), "an ALLOW on Who refuses every other method");

                Files.delete(policies);
                Map<String, String> open = Map.of("Who", "OK", "Admin", "OK", "Status", "OK");
                assertEquals(open, await(channel, open), "deleting the policies opens every method again");
                assertEquals(rejectsBefore, XdsClientScenario.rejects(), "no NACK from the server or the client");
            } finally {
                channel.shutdownNow();
                echo.shutdownNow();
            }
        }
    }
}
