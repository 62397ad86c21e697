package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.testing.AdsClient;
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
 * GAMMA: a mesh VirtualService as istiod's conversion generates it from a GRPCRoute whose
 * parentRef is the echo Service port 7070 (route semantics {@code gateway}, backends the
 * Services echo-v1 and echo-v2 at 80/20, a match per parent port), served to grpc-java's real
 * xDS client and to an Envoy sidecar over ADS. A rule of the same route for another port of
 * the service (9090, all to echo-v3) must not reach calls to 7070.
 */
class GammaRoutesTest {
    static final String HOST = XdsClientScenario.HOST;
    static final String NODE_ID = "sidecar~127.0.0.1~gamma.test~test.svc.cluster.local";
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;
    static XdsClientScenario scenario;
    static ManagedChannel channel;

    @BeforeAll
    static void start() throws Exception {
        scenario = new XdsClientScenario(dir);
        Path config = dir.resolve("config");
        Files.delete(config.resolve("routes.yaml"));
        StringBuilder services = new StringBuilder();
        for (String v : List.of("v1", "v2", "v3")) {
            services.append("""
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: echo-%1$s, namespace: test}
                    spec:
                      hosts: [echo-%1$s.test.svc.cluster.local]
                      location: MESH_INTERNAL
                      resolution: STATIC
                      ports: [{number: 7070, name: grpc, protocol: GRPC}]
                      workloadSelector: {labels: {app: echo, version: %1$s}}
                    ---
                    """.formatted(v));
        }
        // the name is DNS-1123 here only because the --configDir store checks names
        Files.writeString(config.resolve("gamma.yaml"), services + """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata:
                  annotations:
                    internal.istio.io/parents: GRPCRoute/echo-split.test
                    internal.istio.io/route-semantics: gateway
                  name: echo-split-0-grpc-mesh
                  namespace: test
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  http:
                  - match: [{port: 9090}]
                    name: test.echo-split.0
                    route: [{destination: {host: echo-v3.test.svc.cluster.local, port: {number: 7070}}}]
                  - match: [{port: 7070}]
                    name: test.echo-split.1
                    route:
                    - {destination: {host: echo-v1.test.svc.cluster.local, port: {number: 7070}}, weight: 80}
                    - {destination: {host: echo-v2.test.svc.cluster.local, port: {number: 7070}}, weight: 20}
                """);
        scenario.start();
        NameResolverRegistry.getDefaultRegistry().register(
                XdsNameResolverProvider.createForTest("xds-gamma", scenario.bootstrap(NODE_ID)));
        channel = Grpc.newChannelBuilder("xds-gamma:///" + HOST + ":7070", InsecureChannelCredentials.create()).build();
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

    @Test
    void grpcJavaSplitsItsCallsAsTheGeneratedRouteWeighsThem() {
        Map<String, Integer> backends = new HashMap<>();
        for (int i = 0; i < XdsClientScenario.SPLIT_CALLS; i++) {
            backends.merge(ClientCalls.blockingUnaryCall(channel, ProxylessGrpcTest.WHO,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who"), 1, Integer::sum);
        }
        int v1 = backends.getOrDefault("v1", 0);
        assertEquals(XdsClientScenario.SPLIT_CALLS, v1 + backends.getOrDefault("v2", 0),
                "only echo-v1 and echo-v2: the rule for port 9090 is not for 7070 " + backends);
        // 5 points of 1,000 calls are 50 calls, about 4 standard deviations of an 80/20 split
        assertTrue(Math.abs(v1 - 800) <= 50, "80/20 within 5 points: " + backends);
    }

    @Test
    void anEnvoySidecarGetsTheWeightedRouteWithGatewaySemantics() throws Exception {
        try (AdsClient sidecar = new AdsClient(scenario.port("grpc"), "sidecar~10.0.0.1~envoy.test~test.svc.cluster.local",
                Map.of("NAMESPACE", "test"))) {
            sidecar.subscribe(TypeUrls.ROUTE, List.of("7070"));
            RouteConfiguration rc = sidecar.await(TypeUrls.ROUTE, WAIT).getResources(0).unpack(RouteConfiguration.class);
            List<Route> routes = rc.getVirtualHostsList().stream().filter(vh -> vh.getName().equals(HOST + ":7070"))
                    .findFirst().orElseThrow().getRoutesList();
            assertEquals(1, routes.size(), "the 9090 rule is left out on 7070: " + routes);
            RouteAction action = routes.get(0).getRoute();
            assertEquals(List.of("outbound|7070||echo-v1.test.svc.cluster.local=80",
                            "outbound|7070||echo-v2.test.svc.cluster.local=20"),
                    action.getWeightedClusters().getClustersList().stream()
                            .map(c -> c.getName() + "=" + c.getWeight().getValue()).toList());
            assertEquals(RouteAction.ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR, action.getClusterNotFoundResponseCode());
        }
    }
}
