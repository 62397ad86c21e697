package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance 2 of the Kubernetes issue: grpc-java's xDS client routes by a VirtualService to
 * backends that exist only as a Kubernetes Service with its EndpointSlices and Pods (in a
 * stand-in API server over real HTTP, read through the informers of a MeshPilot started with
 * {@code --kubeconfig}); deleting one endpoint takes it out of the client's traffic with EDS
 * pushes only (the push counters of CDS, LDS and RDS do not move).
 */
class KubeProxylessGrpcTest {
    static final String HOST = "echo.test.svc.cluster.local";
    static final String NODE_ID = "sidecar~127.0.0.9~client.test~test.svc.cluster.local";

    @TempDir
    Path dir;
    FakeApiServer api;
    MeshPilotServer server;
    ManagedChannel channel;
    List<Server> backends = List.of();

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
        backends.forEach(Server::shutdownNow);
    }

    static String pod(String name, String ip, String version) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: test, labels: {app: echo, version: %s}}
                spec:
                  serviceAccountName: echo
                  containers: [{name: echo, image: echo}]
                status:
                  phase: Running
                  podIP: %s
                  conditions: [{type: Ready, status: "True"}]
                ---
                """.formatted(name, version, ip);
    }

    /** One slice per backend: each listens on its own port, and a slice has one port list. */
    static String slice(String name, String ip, int port, boolean withEndpoint) {
        return slice(name, ip, port, withEndpoint, "{ready: true}");
    }

    static String slice(String name, String ip, int port, boolean withEndpoint, String conditions) {
        String endpoints = withEndpoint ? """
                endpoints:
                - addresses: [%s]
                  conditions: %s
                  targetRef: {kind: Pod, name: %s, namespace: test}
                """.formatted(ip, conditions, name) : "endpoints: []\n";
        return """
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: %s, namespace: test, labels: {kubernetes.io/service-name: echo}}
                addressType: IPv4
                ports: [{name: grpc, port: %d, protocol: TCP}]
                %s---
                """.formatted(name, port, endpoints);
    }

    String call(Map<String, String> headers) {
        Metadata md = new Metadata();
        headers.forEach((k, v) -> md.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
        return ClientCalls.blockingUnaryCall(ClientInterceptors.intercept(channel,
                        MetadataUtils.newAttachHeadersInterceptor(md)), ProxylessGrpcTest.WHO,
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who");
    }

    Map<String, Integer> calls(int n, Map<String, String> headers) {
        Map<String, Integer> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            out.merge(call(headers), 1, Integer::sum);
        }
        return out;
    }

    @Test
    void grpcClientRoutesToKubernetesEndpointsAndLosesADeletedOneByEdsAlone() throws Exception {
        Server a = ProxylessGrpcTest.backend("a");
        Server b = ProxylessGrpcTest.backend("b");
        Server c = ProxylessGrpcTest.backend("c");
        backends = List.of(a, b, c);
        api = FakeApiServer.start();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: test}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: echo, namespace: test}
                spec:
                  clusterIP: 10.96.7.7
                  selector: {app: echo}
                  ports: [{name: grpc, port: 7070, targetPort: 7070}]
                ---
                """ + pod("echo-a", "127.0.0.2", "v1") + pod("echo-b", "127.0.0.3", "v1") + pod("echo-c", "127.0.0.4", "v2")
                + slice("echo-a", "127.0.0.2", a.getPort(), true) + slice("echo-b", "127.0.0.3", b.getPort(), true)
                + slice("echo-c", "127.0.0.4", c.getPort(), true));
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("echo.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: echo, namespace: test}
                spec:
                  host: echo
                  subsets:
                  - {name: v1, labels: {version: v1}}
                  - {name: v2, labels: {version: v2}}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo]
                  http:
                  - match: [{headers: {end-user: {exact: jason}}}]
                    route: [{destination: {host: echo, subset: v2}}]
                  - route: [{destination: {host: echo, subset: v1}}]
                """);
        server = TestServers.start(dir, "--kubeconfig", api.writeKubeconfig(dir).toString());
        NameResolverRegistry.getDefaultRegistry().register(
                XdsNameResolverProvider.createForTest("xds-kube", bootstrap(server.ports().get("grpc"))));
        channel = Grpc.newChannelBuilder("xds-kube:///" + HOST + ":7070", InsecureChannelCredentials.create()).build();

        Map<String, Integer> v1 = calls(40, Map.of());
        assertEquals(40, v1.getOrDefault("a", 0) + v1.getOrDefault("b", 0), "subset v1 is pods a and b: " + v1);
        assertTrue(v1.getOrDefault("a", 0) > 0 && v1.getOrDefault("b", 0) > 0, "both serve: " + v1);
        assertEquals(Map.of("c", 10), calls(10, Map.of("end-user", "jason")), "the header route to subset v2");
        String instances = Http.get(server.ports().get("http"), "/debug/instancesz").body();
        assertTrue(instances.contains("\"test/echo-a\"") && instances.contains("\"kind\":\"Pod\""), instances);

        long cds = AdsProtocol.XDS_PUSHES.value("cds");
        long lds = AdsProtocol.XDS_PUSHES.value("lds");
        long rds = AdsProtocol.XDS_PUSHES.value("rds");
        long eds = AdsProtocol.XDS_PUSHES.value("eds");
        api.apply(slice("echo-b", "127.0.0.3", b.getPort(), false));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!calls(10, Map.of()).equals(Map.of("a", 10)) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(Map.of("a", 40), calls(40, Map.of()), "pod b's endpoint is gone");
        assertTrue(AdsProtocol.XDS_PUSHES.value("eds") > eds, "an EDS push");
        assertEquals(List.of(cds, lds, rds), List.of(AdsProtocol.XDS_PUSHES.value("cds"),
                AdsProtocol.XDS_PUSHES.value("lds"), AdsProtocol.XDS_PUSHES.value("rds")), "and nothing else");

        // back, then shutting down: a terminating endpoint is never sent, even when still serving
        api.apply(slice("echo-b", "127.0.0.3", b.getPort(), true));
        awaitBackends(Map.of("a", 5, "b", 5));
        api.apply(slice("echo-b", "127.0.0.3", b.getPort(), true, "{ready: false, serving: true, terminating: true}"));
        awaitBackends(Map.of("a", 10));
        assertEquals(Map.of("a", 40), calls(40, Map.of()), "the terminating endpoint gets no calls");
    }

    /** Waits (bounded) until 10 default-route calls are spread exactly as {@code expected}. */
    void awaitBackends(Map<String, Integer> expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Map<String, Integer> seen = calls(10, Map.of());
        while (!seen.equals(expected) && System.nanoTime() < deadline) {
            seen = calls(10, Map.of());
        }
        assertEquals(expected, seen);
    }

    /** A proxyless client's xDS bootstrap on the plaintext ADS port (as {@link XdsClientScenario}'s). */
    static Map<String, Object> bootstrap(int grpcPort) {
        return bootstrap(grpcPort, "test");
    }

    /** The same for a client in {@code namespace} ({@link #NODE_ID} in {@code test}). */
    static Map<String, Object> bootstrap(int grpcPort, String namespace) {
        return Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + grpcPort,
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                "node", Map.of("id", "sidecar~127.0.0.9~client." + namespace + "~" + namespace + ".svc.cluster.local",
                        "cluster", "client." + namespace,
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", namespace)));
    }
}
