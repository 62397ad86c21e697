package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushMetric;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Acceptance 4 (conflicting input behaves as istiod): bookinfo through the real validating
 * store and ServiceEntry registry, plus one conflict each; the push is built, the conflict is
 * in the PushContext's diagnostics, and the sidecar RDS still applies what istiod applies.
 */
class ConfigConflictsTest {
    static final String REVIEWS = "reviews.default.svc.cluster.local";
    static final Map<String, String> LABELS = Map.of("app", "productpage", "version", "v1");

    MeshFixture fixture;

    @BeforeEach
    void setUp() {
        fixture = new MeshFixture();
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    static String bookinfo(String file) throws Exception {
        return Files.readString(Path.of(System.getProperty("meshpilot.home", "."), "etc/config/bookinfo", file));
    }

    /** Each apply is a separate create, a few milliseconds apart: creation order is age order. */
    void apply(String yaml) throws Exception {
        Thread.sleep(5);
        fixture.apply(yaml);
    }

    static VirtualHost vhost(RouteConfiguration rc, String name) {
        return rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no virtual host " + name + " in " + rc));
    }

    static List<String> clusters(VirtualHost vh) {
        return vh.getRoutesList().stream().map(Route::getRoute).flatMap(a -> a.hasWeightedClusters()
                ? a.getWeightedClusters().getClustersList().stream().map(WeightedCluster.ClusterWeight::getName)
                : Stream.of(a.getCluster())).distinct().toList();
    }

    static RouteConfiguration rds(PushContext push) {
        return SidecarRouteBuilder.build("9080", push, ProxyScope.of("default"), LABELS).orElseThrow();
    }

    @Test
    void bookinfoAloneHasNoProblems() throws Exception {
        apply(bookinfo("services.yaml"));
        apply(bookinfo("traffic.yaml"));
        PushDiagnostics d = fixture.push().diagnostics();
        assertTrue(d.isEmpty(), d.toString());
        for (PushMetric m : List.of(PushMetric.DUPLICATED_DOMAINS, PushMetric.DUPLICATED_SUBSETS,
                PushMetric.UNDEFINED_SUBSETS)) {
            assertEquals(0, d.count(m), m.name());
        }
    }

    @Test
    void secondVirtualServiceForAHostIsReportedAndTheOldestStillRoutes() throws Exception {
        apply(bookinfo("services.yaml"));
        apply(bookinfo("traffic.yaml"));
        // newer, and before "reviews" by name: age decides, not the name
        apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: a-reviews-canary, namespace: default}
                spec:
                  hosts: [reviews]
                  http: [{route: [{destination: {host: reviews, subset: v3}}]}]
                """);
        PushContext push = fixture.push();

        Map<String, PushDiagnostics.Entry> dup = push.diagnostics().entries(PushMetric.DUPLICATED_DOMAINS);
        assertEquals(List.of(REVIEWS), List.copyOf(dup.keySet()), dup.toString());
        String message = dup.get(REVIEWS).message();
        assertTrue(message.contains("default/a-reviews-canary") && message.contains("default/reviews is older"),
                message);
        assertEquals(1, push.diagnostics().count(PushMetric.DUPLICATED_DOMAINS));
        assertEquals(0, push.diagnostics().count(PushMetric.UNDEFINED_SUBSETS), push.diagnostics().toString());

        RouteConfiguration rc = rds(push);
        VirtualHost reviews = vhost(rc, REVIEWS + ":9080");
        assertEquals(List.of("outbound|9080|v2|" + REVIEWS, "outbound|9080|v1|" + REVIEWS), clusters(reviews),
                "bookinfo's reviews VirtualService (jason to v2, else 80/20 v1/v2) still routes");
        assertEquals(2, reviews.getRoutesCount());
        // the rest of the config still applies
        assertEquals(List.of("outbound|9080|v1|ratings.default.svc.cluster.local"),
                clusters(vhost(rc, "ratings.default.svc.cluster.local:9080")));
    }

    @Test
    void virtualServicesThatNoNamespaceSeesTogetherAreNoConflict() throws Exception {
        apply(bookinfo("services.yaml"));
        apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews-a, namespace: team-a}
                spec:
                  hosts: [reviews.default.svc.cluster.local]
                  exportTo: [.]
                  http: [{route: [{destination: {host: reviews.default.svc.cluster.local}}]}]
                """);
        apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews-b, namespace: team-b}
                spec:
                  hosts: [reviews.default.svc.cluster.local]
                  exportTo: [.]
                  http: [{route: [{destination: {host: reviews.default.svc.cluster.local}}]}]
                """);
        PushContext push = fixture.push();
        assertEquals(0, push.diagnostics().count(PushMetric.DUPLICATED_DOMAINS), push.diagnostics().toString());

        apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews-c, namespace: team-c}
                spec:
                  hosts: [reviews.default.svc.cluster.local]
                  exportTo: [team-b]
                  http: [{route: [{destination: {host: reviews.default.svc.cluster.local}}]}]
                """);
        Map<String, PushDiagnostics.Entry> dup = fixture.push().diagnostics().entries(PushMetric.DUPLICATED_DOMAINS);
        assertEquals(1, dup.size(), dup.toString());
        assertTrue(dup.get(REVIEWS).message().contains("team-c/reviews-c (team-b/reviews-b is older)"), dup.toString());
    }

    @Test
    void undefinedSubsetIsReportedAndTheRouteStillGoesToItsCluster() throws Exception {
        String traffic = bookinfo("traffic.yaml");
        String v4 = traffic.replace("destination: {host: reviews, subset: v2}\n      weight: 20",
                "destination: {host: reviews, subset: v4}\n      weight: 20");
        assertNotEquals(traffic, v4, "the bookinfo reviews route to edit");
        apply(bookinfo("services.yaml"));
        apply(v4);
        PushContext push = fixture.push();

        Map<String, PushDiagnostics.Entry> undefined = push.diagnostics().entries(PushMetric.UNDEFINED_SUBSETS);
        String key = "default/reviews|v4|" + REVIEWS;
        assertEquals(List.of(key), List.copyOf(undefined.keySet()), undefined.toString());
        String message = undefined.get(key).message();
        assertTrue(message.contains("VirtualService default/reviews") && message.contains("subset v4")
                && message.contains("DestinationRule default/reviews defines only [v1, v2, v3]"), message);
        assertEquals("", undefined.get(key).proxy());

        VirtualHost reviews = vhost(rds(push), REVIEWS + ":9080");
        assertEquals(List.of("outbound|9080|v2|" + REVIEWS, "outbound|9080|v1|" + REVIEWS,
                "outbound|9080|v4|" + REVIEWS), clusters(reviews), "istiod still emits the route to the v4 cluster");
    }

    @Test
    void subsetIsUndefinedWhenTheDestinationRuleIsNotVisibleFromTheVirtualService() throws Exception {
        apply(bookinfo("services.yaml"));
        apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews, namespace: default}
                spec:
                  host: reviews
                  exportTo: [.]
                  subsets: [{name: v1, labels: {version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews, namespace: default}
                spec:
                  hosts: [reviews]
                  http: [{route: [{destination: {host: reviews, subset: v1}}]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: mirror, namespace: shop}
                spec:
                  hosts: [shop.example.com]
                  tcp: [{route: [{destination: {host: reviews.default.svc.cluster.local, subset: v1}}]}]
                """);
        Map<String, PushDiagnostics.Entry> undefined =
                fixture.push().diagnostics().entries(PushMetric.UNDEFINED_SUBSETS);
        assertEquals(List.of("shop/mirror|v1|" + REVIEWS), List.copyOf(undefined.keySet()), undefined.toString());
        assertTrue(undefined.get("shop/mirror|v1|" + REVIEWS).message()
                .contains("no DestinationRule for " + REVIEWS + " is visible from namespace shop"));
    }

    @Test
    void duplicateSubsetAcrossDestinationRulesOfOneNamespaceIsReported() throws Exception {
        apply(bookinfo("services.yaml"));
        apply(bookinfo("traffic.yaml"));
        apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews-extra, namespace: default}
                spec:
                  host: reviews.default.svc.cluster.local
                  subsets: [{name: v1, labels: {version: v9}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews, namespace: elsewhere}
                spec:
                  host: reviews.default.svc.cluster.local
                  subsets: [{name: v2, labels: {version: v2}}]
                """);
        PushContext push = fixture.push();
        Map<String, PushDiagnostics.Entry> dup = push.diagnostics().entries(PushMetric.DUPLICATED_SUBSETS);
        assertEquals(List.of(REVIEWS), List.copyOf(dup.keySet()), "another namespace's rule is no duplicate: " + dup);
        assertTrue(dup.get(REVIEWS).message().startsWith(
                "Duplicate subset v1 found while merging destination rules for " + REVIEWS), dup.toString());
        assertFalse(clusters(vhost(rds(push), REVIEWS + ":9080")).isEmpty());
    }
}
