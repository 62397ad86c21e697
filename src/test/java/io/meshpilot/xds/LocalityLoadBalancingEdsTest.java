package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.LocalityLoadBalancerSetting;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DestinationRule and mesh {@code localityLbSetting} in the EDS answer of one proxy, per case
 * as istiod's loadbalancer package (pilot/pkg/networking/core/loadbalancer/loadbalancer.go)
 * writes the ClusterLoadAssignment; EDS from the generator the push uses. Each locality of the
 * answer is shown as {@code locality p<priority> w<weight> [endpoint addresses]}.
 */
class LocalityLoadBalancingEdsTest {
    static final String CLUSTER = "outbound|80||web.shop.svc.cluster.local";
    /** The endpoints: two in the proxy's subzone r1/z1/s1 (racks a and b), one per other locality. */
    static final String SERVICE = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: web, namespace: shop}
            spec:
              hosts: [web.shop.svc.cluster.local]
              location: MESH_INTERNAL
              ports: [{number: 80, name: http, protocol: HTTP}]
              resolution: STATIC
              endpoints:
              - {address: 10.0.0.1, locality: r1/z1/s1, labels: {rack: a}}
              - {address: 10.0.0.2, locality: r1/z1/s1, labels: {rack: b}}
              - {address: 10.0.0.3, locality: r1/z1/s2, labels: {rack: a}}
              - {address: 10.0.0.4, locality: r1/z2/s1, labels: {rack: a}}
              - {address: 10.0.0.5, locality: r2/z1/s1, labels: {rack: a}}
              - {address: 10.0.0.6, locality: r3/z1/s1, labels: {rack: a}}
            """;
    static final List<String> UNCHANGED = List.of(
            "r1/z1/s1 p0 w2 [10.0.0.1, 10.0.0.2]", "r1/z1/s2 p0 w1 [10.0.0.3]", "r1/z2/s1 p0 w1 [10.0.0.4]",
            "r2/z1/s1 p0 w1 [10.0.0.5]", "r3/z1/s1 p0 w1 [10.0.0.6]");

    MeshFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture().apply(SERVICE);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    static Proxy proxy(String locality, Map<String, String> labels) {
        return new Proxy("sidecar~10.1.0.1~client-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.1.0.1"), "client-1.shop", "shop.svc.cluster.local", "shop", labels, "Kubernetes",
                "1.24.0", "", "", "", Locality.parse(locality));
    }

    static List<String> eds(PushContext push, Proxy proxy) throws InvalidProtocolBufferException {
        return describe(new EdsGenerator(new XdsCache(true)).generate(proxy, push, Set.of(CLUSTER), false));
    }

    static List<String> describe(List<Any> answer) throws InvalidProtocolBufferException {
        assertEquals(1, answer.size());
        List<String> out = new ArrayList<>();
        for (var group : answer.getFirst().unpack(ClusterLoadAssignment.class).getEndpointsList()) {
            var l = group.getLocality();
            out.add(l.getRegion() + "/" + l.getZone() + "/" + l.getSubZone() + " p" + group.getPriority()
                    + " w" + group.getLoadBalancingWeight().getValue() + " " + group.getLbEndpointsList().stream()
                    .map(e -> e.getEndpoint().getAddress().getSocketAddress().getAddress()).toList());
        }
        return out;
    }

    void destinationRule(String trafficPolicy) throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: web, namespace: shop}
                spec:
                  host: web.shop.svc.cluster.local
                """ + trafficPolicy.indent(2));
    }

    static Arguments row(String name, String rule, List<String> expected) {
        return Arguments.of(name, rule, expected);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // endpoint_builder.go: failover needs outlier detection ("otherwise Envoy will never
                // detect the hosts are unhealthy"); the default mesh's localityLbSetting alone changes nothing
                row("no outlier detection: no priorities", """
                        trafficPolicy: {loadBalancer: {localityLbSetting: {enabled: true}}}
                        """, UNCHANGED),
                // ApplyLocalityLoadBalancer -> applyLocalityFailover, util.LbPriority: subzone 0,
                // zone 1, region 2, other region 3
                row("outlier detection alone: the mesh default fails over by locality", """
                        trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}
                        """, List.of("r1/z1/s1 p0 w2 [10.0.0.1, 10.0.0.2]", "r1/z1/s2 p1 w1 [10.0.0.3]",
                        "r1/z2/s1 p2 w1 [10.0.0.4]", "r2/z1/s1 p3 w1 [10.0.0.5]", "r3/z1/s1 p3 w1 [10.0.0.6]")),
                // applyLocalityFailover: a region other than the failover target of the proxy's region gets 4
                row("failover from r1 to r3", """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer: {localityLbSetting: {failover: [{from: r1, to: r3}]}}
                        """, List.of("r1/z1/s1 p0 w2 [10.0.0.1, 10.0.0.2]", "r1/z1/s2 p1 w1 [10.0.0.3]",
                        "r1/z2/s1 p2 w1 [10.0.0.4]", "r2/z1/s1 p4 w1 [10.0.0.5]", "r3/z1/s1 p3 w1 [10.0.0.6]")),
                // applyLocalityWeights: a pattern's weight shared in proportion to the localities'
                // weights (rounded up); unmatched localities lose their endpoints
                row("distribute from r1/z1/* (no outlier detection needed)", """
                        trafficPolicy:
                          loadBalancer:
                            localityLbSetting:
                              distribute:
                              - {from: r2/*, to: {"r2/*": 100}}
                              - {from: r1/z1/*, to: {"r1/z1/*": 80, "r1/z2/*": 20}}
                        """, List.of("r1/z1/s1 p0 w54 [10.0.0.1, 10.0.0.2]", "r1/z1/s2 p0 w27 [10.0.0.3]",
                        "r1/z2/s1 p0 w20 [10.0.0.4]", "r2/z1/s1 p0 w1 []", "r3/z1/s1 p0 w1 []")),
                // applyFailoverPriorities then applyFailoverPriorityPerLocality: a locality splits by
                // how many labels (in order) match the proxy's; then locality failover composes (x5)
                row("failoverPriority on rack, then the failover rules", """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer:
                            localityLbSetting:
                              failoverPriority: [rack]
                              failover: [{from: r1, to: r2}]
                        """, List.of("r1/z1/s1 p0 w1 [10.0.0.1]", "r1/z1/s1 p5 w1 [10.0.0.2]", "r1/z1/s2 p1 w1 [10.0.0.3]",
                        "r1/z2/s1 p2 w1 [10.0.0.4]", "r2/z1/s1 p3 w1 [10.0.0.5]", "r3/z1/s1 p4 w1 [10.0.0.6]")),
                // priorityLabelOverrides: label=value compares with the value, not the proxy's
                row("failoverPriority with an overridden value", """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer: {localityLbSetting: {failoverPriority: ["rack=b"]}}
                        """, List.of("r1/z1/s1 p0 w1 [10.0.0.2]", "r1/z1/s1 p1 w1 [10.0.0.1]", "r1/z1/s2 p1 w1 [10.0.0.3]",
                        "r1/z2/s1 p1 w1 [10.0.0.4]", "r2/z1/s1 p1 w1 [10.0.0.5]", "r3/z1/s1 p1 w1 [10.0.0.6]")),
                // GetEffectiveLbSetting: enabled false in the rule turns locality LB off, mesh's included
                row("enabled: false", """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer: {localityLbSetting: {enabled: false}}
                        """, UNCHANGED),
                // getOutlierDetectionAndLoadBalancerSettings: the port's policy decides
                row("outlier detection on another port only", """
                        trafficPolicy:
                          portLevelSettings: [{port: {number: 8080}, outlierDetection: {consecutive5xxErrors: 3}}]
                        """, UNCHANGED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void assignmentPerCase(String name, String rule, List<String> expected) throws Exception {
        destinationRule(rule);
        assertEquals(expected, eds(fixture.push(), proxy("r1/z1/s1", Map.of("rack", "a"))));
    }

    /** istiod's GetEffectiveLbSetting falls back to the mesh config's localityLbSetting. */
    @Test
    void meshWideSettingAppliesWhenTheRuleHasNone() throws Exception {
        destinationRule("trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}");
        MeshConfig mesh = new MeshConfigLoader().defaults().toBuilder().setLocalityLbSetting(
                LocalityLoadBalancerSetting.newBuilder().addFailover(LocalityLoadBalancerSetting.Failover.newBuilder()
                        .setFrom("r1").setTo("r3"))).build();
        assertEquals(List.of("r1/z1/s1 p0 w2 [10.0.0.1, 10.0.0.2]", "r1/z1/s2 p1 w1 [10.0.0.3]",
                "r1/z2/s1 p2 w1 [10.0.0.4]", "r2/z1/s1 p4 w1 [10.0.0.5]", "r3/z1/s1 p3 w1 [10.0.0.6]"),
                eds(fixture.push(mesh), proxy("r1/z1/s1", Map.of())));
        MeshConfig off = mesh.toBuilder().setLocalityLbSetting(mesh.getLocalityLbSetting().toBuilder()
                .setEnabled(BoolValue.of(false))).build();
        assertEquals(UNCHANGED, eds(fixture.push(off), proxy("r1/z1/s1", Map.of())));
    }

    /** A subset's outlier detection merges over the host's policy (MergeSubsetTrafficPolicy). */
    @Test
    void subsetOutlierDetectionFailsOverItsCluster() throws Exception {
        destinationRule("""
                subsets:
                - name: a
                  labels: {rack: a}
                  trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}
                """);
        List<Any> answer = new EdsGenerator(new XdsCache(true)).generate(proxy("r2/z1/s1", Map.of()), fixture.push(),
                Set.of("outbound|80|a|web.shop.svc.cluster.local"), false);
        var priorities = answer.getFirst().unpack(ClusterLoadAssignment.class).getEndpointsList().stream()
                .map(g -> g.getLocality().getRegion() + " p" + g.getPriority()).toList();
        assertEquals(List.of("r1 p1", "r1 p1", "r1 p1", "r2 p0", "r3 p1"), priorities);
    }

    /**
     * Two proxies of one scope in different localities get different answers from one cache,
     * and the shared-response scope tells them apart.
     */
    @Test
    void answersAreCachedPerProxyLocality() throws Exception {
        destinationRule("trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}");
        PushContext push = fixture.push();
        EdsGenerator eds = new EdsGenerator(new XdsCache(true));
        Proxy east = proxy("r1/z1/s1", Map.of());
        Proxy west = proxy("r2/z1/s1", Map.of());
        assertNotEquals(eds.generate(east, push, Set.of(CLUSTER), false), eds.generate(west, push, Set.of(CLUSTER), false));
        assertEquals(eds.generate(east, push, Set.of(CLUSTER), false), eds.generate(east, push, Set.of(CLUSTER), false));
        assertNotEquals(eds.responseScope(east, push, false), eds.responseScope(west, push, false));
    }

    /**
     * With failoverPriority labels, proxies of one scope and locality but other label values
     * get other answers: the cache and the shared-response scope tell them apart by those labels.
     */
    @Test
    void failoverPriorityLabelsJoinTheKeys() throws Exception {
        destinationRule("""
                trafficPolicy:
                  outlierDetection: {consecutive5xxErrors: 3}
                  loadBalancer: {localityLbSetting: {failoverPriority: [rack]}}
                """);
        PushContext push = fixture.push();
        EdsGenerator eds = new EdsGenerator(new XdsCache(true));
        Proxy rackA = proxy("r1/z1/s1", Map.of("rack", "a"));
        Proxy rackB = proxy("r1/z1/s1", Map.of("rack", "b"));
        assertNotEquals(eds.responseScope(rackA, push, false), eds.responseScope(rackB, push, false));
        var a = eds.generate(rackA, push, Set.of(CLUSTER), false).getFirst().unpack(ClusterLoadAssignment.class);
        var b = eds.generate(rackB, push, Set.of(CLUSTER), false).getFirst().unpack(ClusterLoadAssignment.class);
        assertEquals("10.0.0.1", a.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress()
                .getAddress(), "rack a's own endpoint first");
        assertEquals("10.0.0.2", b.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress()
                .getAddress(), "rack b's own endpoint first, not rack a's cached answer");
    }

    static Proxy proxyOf(String clusterId, String network) {
        return new Proxy("sidecar~10.1.0.1~client-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.1.0.1"), "client-1.shop", "shop.svc.cluster.local", "shop", Map.of(), clusterId,
                "1.24.0", "", "", network, Locality.parse("r1/z1/s1"));
    }

    @Test
    void failoverPriorityOnClusterAndNetworkSeparatesSharedResponses() throws Exception {
        // the multi-primary recipe: identical workloads in two clusters (one network, no east-west gateway)
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: api, namespace: shop}
                spec:
                  hosts: [api.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints:
                  - {address: 10.0.1.1, locality: r1/z1/s1, labels: {topology.istio.io/cluster: c1}}
                  - {address: 10.0.1.2, locality: r1/z1/s1, labels: {topology.istio.io/cluster: c2}}
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: api, namespace: shop}
                spec:
                  host: api.shop.svc.cluster.local
                  trafficPolicy:
                    outlierDetection: {consecutive5xxErrors: 3}
                    loadBalancer:
                      localityLbSetting:
                        failoverPriority: [topology.istio.io/network, topology.istio.io/cluster]
                """);
        PushContext push = fixture.push();
        EdsGenerator eds = new EdsGenerator(new XdsCache(true));
        // the proxies differ only in their node metadata CLUSTER_ID, or NETWORK: their answers differ, so
        // must the scope AdsProtocol shares a serialized response by
        assertNotEquals(eds.responseScope(proxyOf("c1", ""), push, false),
                eds.responseScope(proxyOf("c2", ""), push, false), "CLUSTER_ID");
        assertNotEquals(eds.responseScope(proxyOf("c1", "n1"), push, false),
                eds.responseScope(proxyOf("c1", "n2"), push, false), "NETWORK");
        String cluster = "outbound|80||api.shop.svc.cluster.local";
        for (String own : List.of("c1", "c2")) {
            var cla = eds.generate(proxyOf(own, ""), push, Set.of(cluster), false).getFirst()
                    .unpack(ClusterLoadAssignment.class);
            assertEquals(own.equals("c1") ? "10.0.1.1" : "10.0.1.2", cla.getEndpoints(0).getLbEndpoints(0).getEndpoint()
                    .getAddress().getSocketAddress().getAddress(), "cluster " + own + "'s own endpoint first");
        }
    }

    @Test
    void proxySuppliedLocalityAndLabelsCannotForgeAnotherProxysKey() throws Exception {
        destinationRule("""
                trafficPolicy:
                  outlierDetection: {consecutive5xxErrors: 3}
                  loadBalancer: {localityLbSetting: {failoverPriority: [rack, row]}}
                """);
        PushContext push = fixture.push();
        // were keys made by joining the strings, each pair would read the same
        Proxy seeds = proxy("r1/z1/s1", Map.of("rack", "x|rack=a"));
        Proxy victim = proxy("r1/z1/s1|rack=x", Map.of("rack", "a"));
        Proxy listLike = proxy("r1/z1/s1", Map.of("rack", "a, row=b"));
        Proxy twoLabels = proxy("r1/z1/s1", Map.of("rack", "a", "row", "b"));
        EdsGenerator eds = new EdsGenerator(new XdsCache(true));
        eds.generate(seeds, push, Set.of(CLUSTER), false);
        eds.generate(listLike, push, Set.of(CLUSTER), false);
        assertEquals(eds(push, victim), answer(eds, push, victim), "the victim's own answer, not the one seeded for it");
        assertEquals(eds(push, twoLabels), answer(eds, push, twoLabels));
        assertNotEquals(eds.responseScope(seeds, push, false), eds.responseScope(victim, push, false));
        assertNotEquals(eds.responseScope(listLike, push, false), eds.responseScope(twoLabels, push, false));
    }

    @Test
    void oversizedProxyValuesAreServedButNotKeptInKeys() throws Exception {
        destinationRule("""
                trafficPolicy:
                  outlierDetection: {consecutive5xxErrors: 3}
                  loadBalancer: {localityLbSetting: {failoverPriority: [rack]}}
                """);
        PushContext push = fixture.push();
        XdsCache cache = new XdsCache(true);
        EdsGenerator eds = new EdsGenerator(cache);
        Proxy huge = proxy("r1/z1/" + "s".repeat(5000), Map.of("rack", "a"));
        Proxy sameHuge = proxy("r1/z1/" + "s".repeat(5000), Map.of("rack", "a"));
        assertEquals(eds(push, huge), answer(eds, push, huge), "answered as any proxy");
        assertEquals(0, cache.size(), "a key holding 5000 characters a proxy sent is not kept");
        assertNotEquals(eds.responseScope(huge, push, false), eds.responseScope(sameHuge, push, false),
                "nor shared under such a scope");
        eds.generate(proxy("r1/z1/s1", Map.of("rack", "a")), push, Set.of(CLUSTER), false);
        assertEquals(1, cache.size(), "an ordinary proxy's answer is");
    }

    /** The answer of a generator (and its cache) already used by other proxies, as {@link #eds} shows it. */
    static List<String> answer(EdsGenerator eds, PushContext push, Proxy proxy) throws InvalidProtocolBufferException {
        return describe(eds.generate(proxy, push, Set.of(CLUSTER), false));
    }
}
