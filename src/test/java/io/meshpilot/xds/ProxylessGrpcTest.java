package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's real xDS client ({@code xds:///echo.test.svc.cluster.local:7070}) against our
 * ADS on the plaintext port, routing to real gRPC backends declared as ServiceEntry and
 * WorkloadEntries in the config directory.
 */
class ProxylessGrpcTest {
    static final String HOST = "echo.test.svc.cluster.local";
    static final MethodDescriptor<String, String> WHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Echo/Who")
            .setRequestMarshaller(new Utf8()).setResponseMarshaller(new Utf8()).build();

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static Server v1;
    static Server v2;
    static ManagedChannel channel;

    static Server backend(String name) throws IOException {
        return Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(ServerServiceDefinition.builder("test.Echo")
                        .addMethod(WHO, ServerCalls.asyncUnaryCall((req, out) -> {
                            out.onNext(name);
                            out.onCompleted();
                        })).build())
                .build().start();
    }

    static String routes(String weights) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo]
                  http:
                  - match: [{headers: {end-user: {exact: jason}}}]
                    route: [{destination: {host: echo, subset: v2}}]
                  - match: [{headers: {x-fail: {exact: "yes"}}}]
                    fault: {abort: {grpcStatus: UNAVAILABLE, percentage: {value: 100}}}
                    route: [{destination: {host: echo, subset: v1}}]
                  - route:
                %s""".formatted(weights.strip().indent(4));
    }

    @BeforeAll
    static void start() throws Exception {
        v1 = backend("v1");
        v2 = backend("v2");
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("echo.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  workloadSelector: {labels: {app: echo}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-v1, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %1$d}, labels: {app: echo, version: v1}, locality: r1/z1}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-v2, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %2$d}, labels: {app: echo, version: v2}, locality: r1/z2}
                ---
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
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: echo, namespace: test}
                spec:
                  host: echo
                  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
                """.formatted(v1.getPort(), v2.getPort()));
        Files.writeString(config.resolve("routes.yaml"), routes("""
                    - {destination: {host: echo, subset: v1}, weight: 80}
                    - {destination: {host: echo, subset: v2}, weight: 20}"""));
        server = TestServers.start(dir);
        Map<String, Object> bootstrap = Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + server.ports().get("grpc"),
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "sidecar~127.0.0.1~client.test~test.svc.cluster.local",
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test")));
        NameResolverRegistry.getDefaultRegistry().register(XdsNameResolverProvider.createForTest("xds-test", bootstrap));
        channel = Grpc.newChannelBuilder("xds-test:///" + HOST + ":7070", InsecureChannelCredentials.create()).build();
    }

    @AfterAll
    static void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        v1.shutdownNow();
        v2.shutdownNow();
    }

    static String call(Map<String, String> headers) {
        Metadata md = new Metadata();
        headers.forEach((k, v) -> md.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
        return ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(md)), WHO,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who");
    }

    static Map<String, Integer> spread(int calls) {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < calls; i++) {
            seen.merge(call(Map.of()), 1, Integer::sum);
        }
        return seen;
    }

    @Test
    void weightedSplitHeaderMatchFaultAndALiveRouteChange() throws Exception {
        assertEquals("[]", Http.get(server.ports().get("http"), "/api/v1/config-errors").body());
        Map<String, Integer> seen = spread(1000);
        int v1Calls = seen.getOrDefault("v1", 0);
        assertTrue(Math.abs(v1Calls - 800) <= 50, "80/20 within 5 points over 1,000 calls: " + seen);

        assertEquals("v2", call(Map.of("end-user", "jason")), "the header match picks its subset");

        StatusRuntimeException abort = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                () -> call(Map.of("x-fail", "yes")));
        assertEquals(Status.Code.UNAVAILABLE, abort.getStatus().getCode(), "the fault abort's status");

        // editing the routes file moves traffic without restarting the client
        Path tmp = dir.resolve("config/.routes.tmp");
        Files.writeString(tmp, routes("""
                    - {destination: {host: echo, subset: v2}, weight: 100}"""));
        Files.move(tmp, dir.resolve("config/routes.yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // each check is 20 real calls; the push lands within the debounce plus a round trip
        while (!spread(20).equals(Map.of("v2", 20)) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(Map.of("v2", 100), spread(100), "all traffic moved to v2");

        String syncz = Http.get(server.ports().get("http"), "/debug/syncz").body();
        assertTrue(syncz.contains("\"cluster_acked\"") && !syncz.contains("_nack"), "no NACK: " + syncz);
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
        try (io.meshpilot.testing.AdsClient sidecar = new io.meshpilot.testing.AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.1~envoy.test~test.svc.cluster.local", Map.of("NAMESPACE", "test"));
             io.meshpilot.testing.AdsClient grpc = new io.meshpilot.testing.AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local", Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            sidecar.subscribe(TypeUrls.CLUSTER, List.of());
            Map<String, io.envoyproxy.envoy.config.cluster.v3.Cluster> clusters = new HashMap<>();
            for (var a : sidecar.await(TypeUrls.CLUSTER, java.time.Duration.ofSeconds(20)).getResourcesList()) {
                var c = a.unpack(io.envoyproxy.envoy.config.cluster.v3.Cluster.class);
                clusters.put(c.getName(), c);
            }
            var strict = clusters.get("outbound|7070||dns-echo.example.test");
            assertEquals(io.envoyproxy.envoy.config.cluster.v3.Cluster.DiscoveryType.STRICT_DNS, strict.getType());
            assertEquals(1, strict.getLoadAssignment().getEndpoints(0).getLbEndpointsCount(), "duplicates once");
            assertEquals("localhost", strict.getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint()
                    .getAddress().getSocketAddress().getAddress());
            assertEquals(io.envoyproxy.envoy.config.cluster.v3.Cluster.DiscoveryType.ORIGINAL_DST,
                    clusters.get("outbound|443||passthrough.example.test").getType());

            grpc.subscribe(TypeUrls.CLUSTER, List.of("outbound|443||passthrough.example.test",
                    "outbound|7070||dns-echo.example.test"));
            var names = grpc.await(TypeUrls.CLUSTER, java.time.Duration.ofSeconds(20)).getResourcesList().stream()
                    .map(a -> {
                        try {
                            var c = a.unpack(io.envoyproxy.envoy.config.cluster.v3.Cluster.class);
                            return c.getName() + " " + c.getType();
                        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
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
                if (stream instanceof io.grpc.KnownLength) {
                    return new String(stream.readNBytes(stream.available()), StandardCharsets.UTF_8);
                }
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
