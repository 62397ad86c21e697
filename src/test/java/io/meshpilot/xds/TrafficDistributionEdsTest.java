package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Kubernetes Service's {@code spec.trafficDistribution} drives locality failover as istiod's
 * GetEffectiveLbSetting (pilot/pkg/networking/core/loadbalancer/loadbalancer.go) makes it: when
 * no DestinationRule sets a {@code localityLbSetting}, PreferClose and PreferSameZone fail over
 * by [network, region, zone], PreferSameNode by [network, region, zone, subzone, hostname], and
 * the failover is forced (no outlier detection needed). EDS priorities and the cluster's
 * {@code locality_weighted_lb_config} follow. Pods: 127.0.0.2 on node-a (r1/z1), 127.0.0.3 on
 * node-b and 127.0.0.5 on node-b2 (both r1/z2), 127.0.0.4 on node-c (r2/z3).
 */
class TrafficDistributionEdsTest {
    static final String HOST = "reviews.test.svc.cluster.local";
    static final String CLUSTER = "outbound|7070||" + HOST;

    @TempDir
    Path dir;
    FakeApiServer api;
    MeshPilotServer server;
    final List<AdsClient> clients = new ArrayList<>();
    /** The newest response of each type the test's one client got. */
    final Map<String, DiscoveryResponse> newest = new HashMap<>();

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: test}
                """);
        node("node-a", "r1", "z1");
        node("node-b", "r1", "z2");
        node("node-b2", "r1", "z2");
        node("node-c", "r2", "z3");
        reviews("PreferClose");
        api.apply(KubeMulticlusterTest.readyReviewsPod("reviews-a", "127.0.0.2", 7070, "node-a", ""));
        api.apply(KubeMulticlusterTest.readyReviewsPod("reviews-b", "127.0.0.3", 7070, "node-b", ""));
        api.apply(KubeMulticlusterTest.readyReviewsPod("reviews-b2", "127.0.0.5", 7070, "node-b2", ""));
        api.apply(KubeMulticlusterTest.readyReviewsPod("reviews-c", "127.0.0.4", 7070, "node-c", ""));
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, "--kubeconfig", api.writeKubeconfig(dir.resolve("kube")).toString());
    }

    @AfterEach
    void stop() {
        clients.forEach(AdsClient::close);
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    void node(String name, String region, String zone) {
        api.apply("""
                apiVersion: v1
                kind: Node
                metadata:
                  name: %s
                  labels: {topology.kubernetes.io/region: %s, topology.kubernetes.io/zone: %s}
                """.formatted(name, region, zone));
    }

    void reviews(String trafficDistribution) {
        api.apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: reviews, namespace: test}
                spec:
                  clusterIP: 10.96.0.20
                  selector: {app: reviews}
                  trafficDistribution: %s
                  ports: [{name: grpc, port: 7070, targetPort: 7070}]
                """.formatted(trafficDistribution));
    }

    /** A sidecar on {@code node} in {@code region}/{@code zone}, watching the reviews cluster and every cluster. */
    AdsClient proxyOn(String node, String region, String zone, String ip) {
        AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~" + ip + "~productpage.test~test.svc.cluster.local",
                Map.of("NAMESPACE", "test", "NODE_NAME", node),
                Locality.newBuilder().setRegion(region).setZone(zone).build());
        clients.add(c);
        c.subscribe(TypeUrls.CLUSTER, List.of());
        c.subscribe(TypeUrls.ENDPOINT, List.of(CLUSTER));
        return c;
    }

    /** address -> priority of an assignment. */
    static Map<String, Integer> priorities(ClusterLoadAssignment cla) {
        Map<String, Integer> out = new TreeMap<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            for (LbEndpoint e : l.getLbEndpointsList()) {
                out.put(e.getEndpoint().getAddress().getSocketAddress().getAddress(), l.getPriority());
            }
        }
        return out;
    }

    /**
     * Reads (and ACKs) the client's responses until what {@code read} makes of the newest one
     * of {@code type} is {@code expected}; fails with the last one.
     */
    <T> void awaitNewest(AdsClient c, String type, Function<DiscoveryResponse, T> read, T expected)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!expected.equals(newest.containsKey(type) ? read.apply(newest.get(type)) : null)
                && System.nanoTime() < deadline) {
            DiscoveryResponse r = c.next(Duration.ofMillis(100));
            if (r != null) {
                c.ack(r, r.getTypeUrl().equals(TypeUrls.ENDPOINT) ? List.of(CLUSTER) : List.of());
                newest.put(r.getTypeUrl(), r);
            }
        }
        assertEquals(expected, newest.containsKey(type) ? read.apply(newest.get(type)) : null,
                "the newest " + type + " of " + CLUSTER);
    }

    static Map<String, Integer> endpointPriorities(DiscoveryResponse r) {
        try {
            return priorities(r.getResources(0).unpack(ClusterLoadAssignment.class));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Whether the reviews cluster weighs localities (null when the response does not hold it yet). */
    static Boolean localityWeighted(DiscoveryResponse r) {
        try {
            for (var any : r.getResourcesList()) {
                Cluster c = any.unpack(Cluster.class);
                if (c.getName().equals(CLUSTER)) {
                    return c.getCommonLbConfig().hasLocalityWeightedLbConfig();
                }
            }
            return null;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void preferCloseFailsOverByZoneThenRegionWithoutOutlierDetection() throws Exception {
        AdsClient inZone1 = proxyOn("node-a", "r1", "z1", "127.0.1.1");
        awaitNewest(inZone1, TypeUrls.ENDPOINT, TrafficDistributionEdsTest::endpointPriorities,
                Map.of("127.0.0.2", 0, "127.0.0.3", 1, "127.0.0.5", 1, "127.0.0.4", 2));
        awaitNewest(inZone1, TypeUrls.CLUSTER, TrafficDistributionEdsTest::localityWeighted, true);
    }

    @Test
    void preferSameNodePrefersTheProxysNodeThenItsZone() throws Exception {
        reviews("PreferSameNode");
        AdsClient onNodeB = proxyOn("node-b", "r1", "z2", "127.0.1.2");
        awaitNewest(onNodeB, TypeUrls.ENDPOINT, TrafficDistributionEdsTest::endpointPriorities,
                Map.of("127.0.0.3", 0, "127.0.0.5", 1, "127.0.0.2", 2, "127.0.0.4", 3));
    }

    @Test
    void aDestinationRulesLocalitySettingWinsOverTheService() throws Exception {
        AdsClient inZone1 = proxyOn("node-a", "r1", "z1", "127.0.1.1");
        awaitNewest(inZone1, TypeUrls.ENDPOINT, TrafficDistributionEdsTest::endpointPriorities,
                Map.of("127.0.0.2", 0, "127.0.0.3", 1, "127.0.0.5", 1, "127.0.0.4", 2));
        // GetEffectiveLbSetting reads the rule's localityLbSetting first: disabled there, none at all
        api.apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews, namespace: test}
                spec:
                  host: reviews.test.svc.cluster.local
                  trafficPolicy: {loadBalancer: {localityLbSetting: {enabled: false}}}
                """);
        awaitNewest(inZone1, TypeUrls.ENDPOINT, TrafficDistributionEdsTest::endpointPriorities,
                Map.of("127.0.0.2", 0, "127.0.0.3", 0, "127.0.0.5", 0, "127.0.0.4", 0));
        awaitNewest(inZone1, TypeUrls.CLUSTER, TrafficDistributionEdsTest::localityWeighted, false);
    }
}
