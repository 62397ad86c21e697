package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.TextFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DestinationRule {@code consistentHash} and {@code warmup} at the Envoy fields istiod writes:
 * the cluster's lb_policy and lb_config (cluster_traffic_policy.go applyLoadBalancer,
 * ApplyRingHashLoadBalancer, applyRoundRobinLoadBalancer/applyLeastRequestLoadBalancer with
 * setWarmup/setSlowStartConfig) and the route's hash_policy (route.go
 * ConsistentHashToHashPolicy; HashForHTTPDestination for VirtualService destinations,
 * hashForService for the default route of a service without one). Fields are shown in
 * protobuf text form.
 */
class ConsistentHashTest {
    static final String HOST = "web.shop.svc.cluster.local";
    static final ProxyScope SCOPE = ProxyScope.of("shop");

    MeshFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture().apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [web.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 80, name: http, protocol: HTTP}, {number: 8080, name: http-alt, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.1, labels: {version: v1}}, {address: 10.0.0.2, labels: {version: v2}}]
                """);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    void destinationRule(String loadBalancer) throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: web, namespace: shop}
                spec:
                  host: web.shop.svc.cluster.local
                  trafficPolicy:
                    loadBalancer:
                """ + loadBalancer.indent(6) + """
                  subsets:
                  - {name: v1, labels: {version: v1}}
                  - name: v2
                    labels: {version: v2}
                    trafficPolicy: {loadBalancer: {consistentHash: {httpHeaderName: x-subset}}}
                """);
    }

    static String text(MessageOrBuilder m) {
        return TextFormat.printer().emittingSingleLine(true).printToString(m).strip();
    }

    /** The cluster's lb_policy and its lb_config, if any. */
    String clusterLb(String subset) {
        Cluster c = ClusterBuilder.build("outbound|80|" + subset + "|" + HOST, fixture.push(), SCOPE).orElseThrow();
        String config = switch (c.getLbConfigCase()) {
            case RING_HASH_LB_CONFIG -> " " + text(c.getRingHashLbConfig());
            case MAGLEV_LB_CONFIG -> " " + text(c.getMaglevLbConfig());
            case ROUND_ROBIN_LB_CONFIG -> " " + text(c.getRoundRobinLbConfig());
            case LEAST_REQUEST_LB_CONFIG -> " " + text(c.getLeastRequestLbConfig());
            default -> "";
        };
        return c.getLbPolicy() + config;
    }

    /** The hash policies of the service's default route on port 80 (no VirtualService). */
    String defaultRouteHash(PushContext push) {
        RouteConfiguration rc = SidecarRouteBuilder.build("80", push, SCOPE).orElseThrow();
        Route r = rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(HOST + ":80")).findFirst()
                .orElseThrow().getRoutes(0);
        return r.getRoute().getHashPolicyList().stream().map(ConsistentHashTest::text).toList().toString();
    }

    static Arguments row(String field, String loadBalancer, String cluster, String hashPolicy) {
        return Arguments.of(field, loadBalancer, cluster, hashPolicy);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // ApplyRingHashLoadBalancer default branch: RING_HASH, minimum_ring_size 1024 (Envoy's default)
                row("httpHeaderName", "consistentHash: {httpHeaderName: x-user}",
                        "RING_HASH minimum_ring_size { value: 1024 }", "[header { header_name: \"x-user\" }]"),
                row("httpCookie name, path, ttl", "consistentHash: {httpCookie: {name: user, path: /shop, ttl: 60s}}",
                        "RING_HASH minimum_ring_size { value: 1024 }",
                        "[cookie { name: \"user\" ttl { seconds: 60 } path: \"/shop\" }]"),
                row("httpCookie without ttl", "consistentHash: {httpCookie: {name: session}}",
                        "RING_HASH minimum_ring_size { value: 1024 }", "[cookie { name: \"session\" }]"),
                row("useSourceIp", "consistentHash: {useSourceIp: true}",
                        "RING_HASH minimum_ring_size { value: 1024 }", "[connection_properties { source_ip: true }]"),
                row("httpQueryParameterName", "consistentHash: {httpQueryParameterName: user}",
                        "RING_HASH minimum_ring_size { value: 1024 }", "[query_parameter { name: \"user\" }]"),
                // deprecated minimumRingSize: the default branch with that size
                row("minimumRingSize (deprecated)", "consistentHash: {httpHeaderName: x-user, minimumRingSize: 2048}",
                        "RING_HASH minimum_ring_size { value: 2048 }", "[header { header_name: \"x-user\" }]"),
                row("ringHash.minimumRingSize", "consistentHash: {httpHeaderName: x-user, ringHash: {minimumRingSize: 4096}}",
                        "RING_HASH minimum_ring_size { value: 4096 }", "[header { header_name: \"x-user\" }]"),
                // ringHash/maglev with a zero size: the policy without lb_config
                row("ringHash without size", "consistentHash: {httpHeaderName: x-user, ringHash: {}}",
                        "RING_HASH", "[header { header_name: \"x-user\" }]"),
                row("maglev.tableSize", "consistentHash: {httpHeaderName: x-user, maglev: {tableSize: 65537}}",
                        "MAGLEV table_size { value: 65537 }", "[header { header_name: \"x-user\" }]"),
                // setSlowStartConfig (deprecated field): the window only
                row("warmupDurationSecs", "simple: ROUND_ROBIN\nwarmupDurationSecs: 30s",
                        "ROUND_ROBIN slow_start_config { slow_start_window { seconds: 30 } }", "[]"),
                // setWarmup: aggression 1 and minimum 10% when unset; runtime key "("
                row("warmup.duration", "warmup: {duration: 45s}",
                        "LEAST_REQUEST slow_start_config { slow_start_window { seconds: 45 } aggression { default_value: 1.0"
                                + " runtime_key: \"(\" } min_weight_percent { value: 10.0 } }", "[]"),
                row("warmup aggression, minimumPercent",
                        "simple: LEAST_REQUEST\nwarmup: {duration: 45s, aggression: 2, minimumPercent: 25}",
                        "LEAST_REQUEST slow_start_config { slow_start_window { seconds: 45 } aggression { default_value: 2.0"
                                + " runtime_key: \"(\" } min_weight_percent { value: 25.0 } }", "[]"),
                // RANDOM has no lb_config: warmup is not applied there, as istiod
                row("warmup with RANDOM", "simple: RANDOM\nwarmup: {duration: 45s}", "RANDOM", "[]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void clusterAndDefaultRoute(String field, String loadBalancer, String cluster, String hashPolicy) throws Exception {
        destinationRule(loadBalancer);
        assertEquals(cluster, clusterLb(""));
        assertEquals(hashPolicy, defaultRouteHash(fixture.push()));
    }

    /**
     * HashForHTTPDestination: a VirtualService destination takes its subset's consistentHash
     * over the host's; a split across destinations carries each one's hash policy.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("destinations")
    void virtualServiceDestinations(String name, String route, List<String> expected) throws Exception {
        destinationRule("consistentHash: {httpCookie: {name: user, ttl: 0s}}");
        Route r = firstRoute("- route:\n" + route.indent(2));
        assertEquals(expected, r.getRoute().getHashPolicyList().stream().map(ConsistentHashTest::text).toList());
    }

    static Stream<Arguments> destinations() {
        return Stream.of(
                Arguments.of("host", "- destination: {host: web}",
                        List.of("cookie { name: \"user\" ttl { } }")),
                Arguments.of("subset with its own", "- destination: {host: web, subset: v2}",
                        List.of("header { header_name: \"x-subset\" }")),
                Arguments.of("split", """
                        - {destination: {host: web, subset: v1}, weight: 50}
                        - {destination: {host: web, subset: v2}, weight: 50}
                        """, List.of("cookie { name: \"user\" ttl { } }", "header { header_name: \"x-subset\" }")));
    }

    /**
     * istiod's retry.ConvertPolicy(policy, consistentHash): a route to one destination that
     * hashes does not retry on another host (that would break the affinity the hash gives),
     * unless its retries ask for it; a split, and the default route of a service without a
     * VirtualService, keep the previous_hosts predicate.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("retries")
    void retryHostPredicates(String name, String vsRoute, List<String> expected) throws Exception {
        destinationRule("consistentHash: {httpCookie: {name: user, ttl: 0s}}");
        Route r = firstRoute(vsRoute);
        assertEquals(expected, r.getRoute().getRetryPolicy().getRetryHostPredicateList().stream()
                .map(p -> p.getName()).toList());
    }

    /**
     * The first route of the service's port 80 in the sidecar route configuration, with a
     * VirtualService of these {@code http} routes (none when empty: the default route).
     */
    Route firstRoute(String httpRoutes) throws Exception {
        if (!httpRoutes.isEmpty()) {
            fixture.apply("""
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: web, namespace: shop}
                    spec:
                      hosts: [web.shop.svc.cluster.local]
                      http:
                    """ + httpRoutes.indent(2));
        }
        RouteConfiguration rc = SidecarRouteBuilder.build("80", fixture.push(), SCOPE, Map.of()).orElseThrow();
        return rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(HOST + ":80")).findFirst()
                .orElseThrow().getRoutes(0);
    }

    static Stream<Arguments> retries() {
        List<String> previousHosts = List.of(HttpRouteTranslator.PREVIOUS_HOSTS_PREDICATE);
        return Stream.of(
                Arguments.of("one destination, default retries", "- route: [{destination: {host: web}}]", List.of()),
                Arguments.of("one destination, own retries", """
                        - route: [{destination: {host: web}}]
                          retries: {attempts: 3}
                        """, List.of()),
                Arguments.of("one destination, retryIgnorePreviousHosts", """
                        - route: [{destination: {host: web}}]
                          retries: {attempts: 3, retryIgnorePreviousHosts: true}
                        """, previousHosts),
                Arguments.of("split", """
                        - route:
                          - {destination: {host: web, subset: v1}, weight: 50}
                          - {destination: {host: web, subset: v2}, weight: 50}
                        """, previousHosts),
                Arguments.of("default route, no VirtualService", "", previousHosts));
    }
}
