package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's real xDS client ({@code xds:///echo.test.svc.cluster.local:7070}) in this JVM
 * against our ADS on the plaintext port, through {@link XdsClientScenario}, the scenario
 * grpc-js ({@link GrpcJsXdsClientTest}) and gRPC C-core ({@link CCoreXdsClientTest}) run too;
 * plus DNS and passthrough ServiceEntries.
 */
class ProxylessGrpcTest {
    static final String HOST = XdsClientScenario.HOST;
    static final String NODE_ID = "sidecar~127.0.0.1~client.test~test.svc.cluster.local";
    static final MethodDescriptor<String, String> WHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Echo/Who")
            .setRequestMarshaller(new Utf8()).setResponseMarshaller(new Utf8()).build();

    @TempDir
    static Path dir;
    static XdsClientScenario scenario;
    static MeshPilotServer server;
    static ManagedChannel channel;

    /** A real gRPC backend whose test.Echo/Who answers {@code name}. */
    static Server backend(String name) throws IOException {
        return Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(ServerServiceDefinition.builder("test.Echo")
                        .addMethod(WHO, ServerCalls.asyncUnaryCall((req, out) -> {
                            out.onNext(name);
                            out.onCompleted();
                        })).build())
                .build().start();
    }

    @BeforeAll
    static void start() throws Exception {
        scenario = new XdsClientScenario(dir);
        Files.writeString(dir.resolve("config/external.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: dns-echo, namespace: test}
                spec:
                  hosts: [dns-echo.example.test]
                  location: MESH_EXTERNAL
                  resolution: DNS
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  endpoints: [{address: localhost, ports: {grpc: %1$d}}, {address: localhost, ports: {grpc: %1$d}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: passthrough, namespace: test}
                spec:
                  hosts: [passthrough.example.test]
                  location: MESH_EXTERNAL
                  resolution: NONE
                  ports: [{number: 443, name: tls, protocol: TLS}]
                """.formatted(scenario.v1.getPort()));
        server = scenario.start();
        NameResolverRegistry.getDefaultRegistry().register(
                XdsNameResolverProvider.createForTest("xds-test", scenario.bootstrap(NODE_ID)));
        channel = Grpc.newChannelBuilder("xds-test:///" + HOST + ":7070", InsecureChannelCredentials.create()).build();
    }

    @AfterAll
    static void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (scenario != null) {
            scenario.close();
        }
    }

    static String call(Map<String, String> headers) {
        Metadata md = new Metadata();
        headers.forEach((k, v) -> md.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
        return ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(md)), WHO,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who");
    }

    /** grpc-java in this JVM as a scenario client: sequential blocking calls on one channel. */
    static XdsClientScenario.PhaseResult phase(int calls, Map<String, String> headers, String expect) {
        Map<String, Integer> backends = new HashMap<>();
        Map<String, Integer> errors = new HashMap<>();
        int ok = 0;
        int unexpected = 0;
        for (int i = 0; i < calls; i++) {
            String code;
            try {
                backends.merge(call(headers), 1, Integer::sum);
                ok++;
                code = "OK";
            } catch (StatusRuntimeException e) {
                code = e.getStatus().getCode().name();
                errors.merge(code + ": " + e.getStatus().getDescription(), 1, Integer::sum);
            }
            if (!code.equals(expect)) {
                unexpected++;
            }
        }
        return new XdsClientScenario.PhaseResult(ok, backends, errors, unexpected);
    }

    @Test
    void grpcJavaRunsTheProxylessScenarioWithoutNack() throws Exception {
        scenario.run(NODE_ID, ProxylessGrpcTest::phase);
    }

    /**
     * A DNS ServiceEntry: gRPC gets a LOGICAL_DNS cluster and resolves the name itself; Envoy
     * a STRICT_DNS cluster with the endpoints inline (duplicates once), and an ORIGINAL_DST
     * cluster for resolution NONE, which gRPC does not get.
     */
    @Test
    void dnsAndPassthroughServiceEntries() throws Exception {
        ManagedChannel dns = Grpc.newChannelBuilder("xds-test:///dns-echo.example.test:7070",
                InsecureChannelCredentials.create()).build();
        try {
            assertEquals("v1", ClientCalls.blockingUnaryCall(dns, WHO,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who"));
        } finally {
            dns.shutdownNow();
        }
        try (AdsClient sidecar = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.1~envoy.test~test.svc.cluster.local", Map.of("NAMESPACE", "test"));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local", Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            sidecar.subscribe(TypeUrls.CLUSTER, List.of());
            Map<String, Cluster> clusters = new HashMap<>();
            for (var a : sidecar.await(TypeUrls.CLUSTER, Duration.ofSeconds(20)).getResourcesList()) {
                var c = a.unpack(Cluster.class);
                clusters.put(c.getName(), c);
            }
            var strict = clusters.get("outbound|7070||dns-echo.example.test");
            assertEquals(Cluster.DiscoveryType.STRICT_DNS, strict.getType());
            assertEquals(1, strict.getLoadAssignment().getEndpoints(0).getLbEndpointsCount(), "duplicates once");
            assertEquals("localhost", strict.getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint()
                    .getAddress().getSocketAddress().getAddress());
            assertEquals(Cluster.DiscoveryType.ORIGINAL_DST,
                    clusters.get("outbound|443||passthrough.example.test").getType());

            grpc.subscribe(TypeUrls.CLUSTER, List.of("outbound|443||passthrough.example.test",
                    "outbound|7070||dns-echo.example.test"));
            var names = grpc.await(TypeUrls.CLUSTER, Duration.ofSeconds(20)).getResourcesList().stream()
                    .map(a -> {
                        try {
                            var c = a.unpack(Cluster.class);
                            return c.getName() + " " + c.getType();
                        } catch (InvalidProtocolBufferException e) {
                            throw new AssertionError(e);
                        }
                    }).toList();
            assertEquals(List.of("outbound|7070||dns-echo.example.test LOGICAL_DNS"), names);
        }
    }

    /** UTF-8 strings over gRPC; trusts KnownLength streams (Helidon's never report EOF). */
    static final class Utf8 implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength) {
                    return new String(stream.readNBytes(stream.available()), StandardCharsets.UTF_8);
                }
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
