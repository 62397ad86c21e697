package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.testing.RbacPolicies;
import io.meshpilot.testing.WaypointNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A waypoint's listeners and clusters for ServiceEntries that use it, as istiod's
 * listener_waypoint.go buildWaypointInternal and cluster.go (case Waypoint) build them: an HTTP
 * port's chain with its VirtualService's routes (a match on sourceLabels dropped, a destination
 * the waypoint does not serve kept outbound and its cluster added to CDS), a TCP port's
 * tcp_proxy with its VirtualService's {@code tcp} route, a port of unknown protocol both (the HTTP inspector on only there), the direct
 * chains, and nothing of a service bound to another waypoint.
 */
class WaypointListenerBuilderTest {
    MeshFixture mesh;

    @BeforeEach
    void setUp() throws Exception {
        mesh = new MeshFixture().apply(serviceEntry("reviews", "waypoint", 1, "{number: 9080, name: http, protocol: HTTP}")
                + serviceEntry("db", "waypoint", 2, "{number: 5432, name: tcp, protocol: TCP}, {number: 8000, name: legacy}")
                + serviceEntry("ratings", "other", 3, "{number: 9080, name: http, protocol: HTTP}") + """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews, namespace: shop}
                spec:
                  hosts: [reviews.shop.svc.cluster.local]
                  http:
                  - match: [{sourceLabels: {app: productpage}}]
                    route: [{destination: {host: ratings.shop.svc.cluster.local}}]
                  - match: [{headers: {end-user: {exact: jason}}}]
                    route: [{destination: {host: ratings.shop.svc.cluster.local}}]
                  - route: [{destination: {host: reviews.shop.svc.cluster.local}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: db, namespace: shop}
                spec:
                  hosts: [db.shop.svc.cluster.local]
                  tcp:
                  - match: [{port: 5432, sourceLabels: {app: batch}}]
                    route: [{destination: {host: ratings.shop.svc.cluster.local, port: {number: 9080}}}]
                  - match: [{port: 5432}]
                    route:
                    - {destination: {host: db.shop.svc.cluster.local, port: {number: 5432}}, weight: 70}
                    - {destination: {host: ratings.shop.svc.cluster.local, port: {number: 9080}}, weight: 30}
                """);
    }

    /** A STATIC ServiceEntry {@code <name>.shop.svc.cluster.local} at 240.0.0.{@code n} that uses {@code waypoint}. */
    static String serviceEntry(String name, String waypoint, int n, String ports) {
        return """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: %1$s, namespace: shop, labels: {istio.io/use-waypoint: %2$s}}
                spec:
                  hosts: [%1$s.shop.svc.cluster.local]
                  addresses: [240.0.0.%3$d]
                  ports: [%4$s]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.%3$d}]
                ---
                """.formatted(name, waypoint, n, ports);
    }

    @AfterEach
    void tearDown() {
        mesh.close();
    }

    static final String REVIEWS = "inbound-vip|9080|http|reviews.shop.svc.cluster.local";
    static final String RATINGS_OUTBOUND = "outbound|9080||ratings.shop.svc.cluster.local";

    @Test
    void mainInternalHasAChainPerServedPortWithItsRoutesAndTheDirectChains() throws Exception {
        Proxy waypoint = WaypointNode.proxy("shop", "waypoint", null);
        Listener main = listener(WaypointListenerBuilder.listeners(waypoint, mesh.pushWithWaypoints()),
                WaypointListenerBuilder.MAIN_INTERNAL);
        assertEquals(List.of(REVIEWS, "inbound-vip|5432|tcp|db.shop.svc.cluster.local",
                        "inbound-vip|8000|tcp|db.shop.svc.cluster.local", "inbound-vip|8000|http|db.shop.svc.cluster.local",
                        "direct-tcp", "direct-http"),
                main.getFilterChainsList().stream().map(FilterChain::getName).toList(),
                "the services oldest first, ports in order; ratings uses another waypoint");

        List<Route> routes = hcm(chain(main, REVIEWS)).getRouteConfig().getVirtualHosts(0).getRoutesList();
        assertEquals(List.of(RATINGS_OUTBOUND, REVIEWS), routes.stream().map(r -> r.getRoute().getCluster()).toList(),
                "the sourceLabels match is dropped; ratings is not served here, reviews is");
        assertEquals("end-user", routes.get(0).getMatch().getHeaders(0).getName());

        TcpProxy db = chain(main, "inbound-vip|5432|tcp|db.shop.svc.cluster.local").getFilters(0).getTypedConfig()
                .unpack(TcpProxy.class);
        assertEquals(List.of("inbound-vip|5432|tcp|db.shop.svc.cluster.local=70", RATINGS_OUTBOUND + "=30"),
                db.getWeightedClusters().getClustersList().stream().map(c -> c.getName() + "=" + c.getWeight()).toList(),
                "the VirtualService's tcp route (istiod's getWaypointTCPRoutes)");
        TcpProxy legacy = chain(main, "inbound-vip|8000|tcp|db.shop.svc.cluster.local").getFilters(0).getTypedConfig()
                .unpack(TcpProxy.class);
        assertEquals("inbound-vip|8000|tcp|db.shop.svc.cluster.local", legacy.getCluster(), "no route matches port 8000");

        ListenerFilter inspector = main.getListenerFilters(1);
        assertEquals(EnvoyFilters.HTTP_INSPECTOR, inspector.getName());
        assertEquals(List.of(5432, 9080), inspector.getFilterDisabled().getOrMatch().getRulesList().stream()
                .map(r -> r.getDestinationPortRange().getStart()).toList(), "sniffing only on 8000, of unknown protocol");
    }

    @Test
    void clustersAreTheOutboundOnesRoutesNameThenTheWaypointsOwn() {
        Proxy waypoint = WaypointNode.proxy("shop", "waypoint", null);
        List<Cluster> clusters = WaypointClusterBuilder.clusters(waypoint, mesh.pushWithWaypoints());
        assertEquals(List.of(RATINGS_OUTBOUND, "main_internal", "encap", REVIEWS,
                        "inbound-vip|5432|tcp|db.shop.svc.cluster.local", "inbound-vip|8000|tcp|db.shop.svc.cluster.local",
                        "inbound-vip|8000|http|db.shop.svc.cluster.local", "connect_originate"),
                clusters.stream().map(Cluster::getName).toList());
        Cluster reviews = clusters.get(3);
        assertEquals(REVIEWS, reviews.getEdsClusterConfig().getServiceName());
        assertEquals("internal_upstream", reviews.getTransportSocket().getName());
        assertEquals(0, reviews.getTransportSocketMatchesCount(), "no auto mTLS of its own: the tunnel is mTLS");
        Cluster originate = clusters.get(clusters.size() - 1);
        assertTrue(originate.getTransportSocket().getTypedConfig().toString()
                .contains("spiffe://cluster.local/ns/shop/sa/"), "peers of the waypoint's namespace");
    }

    @Test
    void aWaypointNoServiceUsesHasOnlyTheDirectChainsAndTheAmbientSwitchOffBindsNothing() {
        Proxy other = WaypointNode.proxy("shop", "unused", null);
        Listener main = listener(WaypointListenerBuilder.listeners(other, mesh.pushWithWaypoints()),
                WaypointListenerBuilder.MAIN_INTERNAL);
        assertEquals(List.of("direct-tcp", "direct-http"), main.getFilterChainsList().stream().map(FilterChain::getName)
                .toList());
        PushContext ambientOff = mesh.push();
        Listener off = listener(WaypointListenerBuilder.listeners(WaypointNode.proxy("shop", "waypoint", null),
                ambientOff), WaypointListenerBuilder.MAIN_INTERNAL);
        assertEquals(2, off.getFilterChainsCount(), "without PILOT_ENABLE_AMBIENT no service uses a waypoint");
        assertFalse(WaypointListenerBuilder.listeners(other, ambientOff).isEmpty(), "HBONE termination stays");
    }

    static final String POLICIES = """
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: from-shop, namespace: shop}
            spec:
              targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
              rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/productpage], namespaces: [shop]}}]}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: reviews-admin, namespace: shop}
            spec:
              targetRefs: [{group: networking.istio.io, kind: ServiceEntry, name: reviews}]
              action: DENY
              rules: [{to: [{operation: {paths: [/admin]}}]}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: all-waypoints, namespace: istio-system}
            spec:
              targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio-waypoint}]
              action: AUDIT
              rules: [{to: [{operation: {methods: [DELETE]}}]}]
            """;

    /**
     * istiod's waypoint RBAC (listener_waypoint.go buildWaypointHTTPFilters and
     * buildWaypointNetworkFilters through authz.NewBuilderForService with useFilterState; the
     * selection of policyattachment.go for a waypoint): a chain of a served service gets the
     * policies targeting the waypoint's Gateway, the istio-waypoint GatewayClass (root namespace)
     * and that service; the direct chains only the Gateway's and the class's; a selector policy
     * none. Source identities match the HBONE peer kept in filter state (generator_test.go's
     * {@code filter_state: io.istio.peer_principal} expectations), not the TLS peer of main_internal.
     */
    @Test
    void policiesTargetingTheWaypointOrAServedServiceAreItsChainsRbacAndSelectorsNever() throws Exception {
        mesh.apply(POLICIES + "---\n" + WaypointNode.SELECTOR_POLICY);
        Listener main = listener(WaypointListenerBuilder.listeners(WaypointNode.proxy("shop", "waypoint", null),
                mesh.pushWithWaypoints()), WaypointListenerBuilder.MAIN_INTERNAL);

        Map<String, String> reviews = RbacPolicies.of(hcm(chain(main, REVIEWS)));
        assertEquals(List.of("LOG ns[istio-system]-policy[all-waypoints]-rule[0]", "DENY ns[shop]-policy[reviews-admin]-rule[0]",
                "ALLOW ns[shop]-policy[from-shop]-rule[0]"), List.copyOf(reviews.keySet()),
                "AUDIT, DENY, ALLOW filters in istiod's order; the selector policy is not among them");
        String allow = reviews.get("ALLOW ns[shop]-policy[from-shop]-rule[0]");
        assertTrue(allow.contains("{\"filterState\":{\"key\":\"io.istio.peer_principal\",\"stringMatch\":"
                + "{\"exact\":\"spiffe://cluster.local/ns/shop/sa/productpage\"}}}"), allow);
        assertTrue(allow.contains("{\"filterState\":{\"key\":\"io.istio.peer_principal\",\"stringMatch\":"
                + "{\"safeRegex\":{\"regex\":\".*/ns/shop/.*\"}}}}"), allow);
        assertFalse(allow.contains("authenticated"), "the peer of main_internal is the waypoint itself: " + allow);

        FilterChain db = chain(main, "inbound-vip|5432|tcp|db.shop.svc.cluster.local");
        assertEquals(List.of("envoy.filters.network.rbac", "envoy.filters.network.rbac", "envoy.filters.network.tcp_proxy"),
                db.getFiltersList().stream().map(Filter::getName).toList(), "db: the class's and the Gateway's, not reviews'");
        assertEquals(List.of("LOG ns[istio-system]-policy[all-waypoints]-rule[0]", "ALLOW ns[shop]-policy[from-shop]-rule[0]"),
                List.copyOf(RbacPolicies.of(db.getFiltersList().subList(0, 2).stream().map(Filter::getTypedConfig).toList()).keySet()));

        assertEquals(List.of("LOG ns[istio-system]-policy[all-waypoints]-rule[0]", "ALLOW ns[shop]-policy[from-shop]-rule[0]"),
                List.copyOf(RbacPolicies.of(hcm(chain(main, "direct-http"))).keySet()),
                "traffic to a workload: only what targets the waypoint itself");

        Listener other = listener(WaypointListenerBuilder.listeners(WaypointNode.proxy("shop", "unused", null),
                mesh.pushWithWaypoints()), WaypointListenerBuilder.MAIN_INTERNAL);
        assertEquals(List.of("LOG ns[istio-system]-policy[all-waypoints]-rule[0]"),
                List.copyOf(RbacPolicies.of(hcm(chain(other, "direct-http"))).keySet()),
                "another waypoint: only the class's policy");
    }

    static Listener listener(List<Listener> listeners, String name) {
        return listeners.stream().filter(l -> l.getName().equals(name)).findFirst().orElseThrow();
    }

    static FilterChain chain(Listener l, String name) {
        return l.getFilterChainsList().stream().filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
    }

    static HttpConnectionManager hcm(FilterChain c) throws InvalidProtocolBufferException {
        return c.getFilters(c.getFiltersCount() - 1).getTypedConfig().unpack(HttpConnectionManager.class);
    }

}
