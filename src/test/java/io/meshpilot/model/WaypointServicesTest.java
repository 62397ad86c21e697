package io.meshpilot.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.testing.WaypointNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * Which services a waypoint serves: istiod's GetUseWaypoint and fetchWaypointForService
 * (pilot/pkg/serviceregistry/ambient/waypoints.go) as its TestServiceServices cases exercise
 * them ("cross namespace waypoint", "namespace annotation inheritance", "service annotation
 * overrides namespace"), plus the opt-out {@code none}, the waypoint's own Service and
 * {@code istio.io/waypoint-for}. The waypoint is a proxy parsed from its node as istio-agent
 * sends it.
 */
class WaypointServicesTest {
    static final Map<String, Map<String, String>> NAMESPACES = Map.of(
            "shop", Map.of(WaypointServices.USE_WAYPOINT, "waypoint"),
            "shared", Map.of(WaypointServices.USE_WAYPOINT, "edge", WaypointServices.USE_WAYPOINT_NAMESPACE, "infra"),
            "plain", Map.of());

    static Service service(String name, String namespace, Map<String, String> labels, int age) {
        return new Service(name + "." + namespace + ".svc.cluster.local", namespace,
                List.of(new Port("http", 9080, Protocol.HTTP)), "10.96.0." + age, Map.of(), "", Resolution.CLIENT_SIDE_LB,
                false, null, labels, "Kubernetes", "Kubernetes", Instant.ofEpochSecond(1000 - age), null);
    }

    static Proxy waypoint(String namespace, String gateway, String waypointFor) {
        return WaypointNode.proxy(namespace, gateway, waypointFor);
    }

    static List<String> served(List<Service> services, Proxy proxy) {
        return WaypointServices.of(services, ns -> NAMESPACES.getOrDefault(ns, Map.of())).servedBy(proxy).stream()
                .map(Service::hostname).toList();
    }

    static Stream<Arguments> cases() {
        Map<String, String> none = Map.of(WaypointServices.USE_WAYPOINT, "none");
        return Stream.of(
                Arguments.of("namespace label: every service of the namespace",
                        List.of(service("reviews", "shop", Map.of(), 1), service("ratings", "shop", Map.of(), 2)),
                        waypoint("shop", "waypoint", null),
                        List.of("ratings.shop.svc.cluster.local", "reviews.shop.svc.cluster.local")),
                Arguments.of("the service's own label overrides its namespace's",
                        List.of(service("reviews", "shop", Map.of(WaypointServices.USE_WAYPOINT, "other"), 1)),
                        waypoint("shop", "waypoint", null), List.of()),
                Arguments.of("... and binds it to the waypoint it names",
                        List.of(service("reviews", "shop", Map.of(WaypointServices.USE_WAYPOINT, "other"), 1)),
                        waypoint("shop", "other", null), List.of("reviews.shop.svc.cluster.local")),
                Arguments.of("none opts a service out of its namespace's waypoint",
                        List.of(service("reviews", "shop", none, 1)), waypoint("shop", "waypoint", null), List.of()),
                Arguments.of("cross namespace waypoint: istio.io/use-waypoint-namespace on the service",
                        List.of(service("name", "ns", Map.of(WaypointServices.USE_WAYPOINT, "waypoint",
                                WaypointServices.USE_WAYPOINT_NAMESPACE, "waypoint-ns"), 1)),
                        waypoint("waypoint-ns", "waypoint", null), List.of("name.ns.svc.cluster.local")),
                Arguments.of("... and on the namespace",
                        List.of(service("api", "shared", Map.of(), 1)), waypoint("infra", "edge", null),
                        List.of("api.shared.svc.cluster.local")),
                Arguments.of("a waypoint of the same name in another namespace serves nothing",
                        List.of(service("reviews", "shop", Map.of(), 1)), waypoint("plain", "waypoint", null), List.of()),
                Arguments.of("the waypoint's own Service uses no waypoint",
                        List.of(service("waypoint", "shop", Map.of(WaypointServices.MANAGED,
                                WaypointServices.MESH_CONTROLLER), 1)), waypoint("shop", "waypoint", null), List.of()),
                Arguments.of("waypoint-for all takes services",
                        List.of(service("reviews", "shop", Map.of(), 1)), waypoint("shop", "waypoint", "all"),
                        List.of("reviews.shop.svc.cluster.local")),
                Arguments.of("waypoint-for workload takes none",
                        List.of(service("reviews", "shop", Map.of(), 1)), waypoint("shop", "waypoint", "workload"), List.of()),
                Arguments.of("waypoint-for none takes none",
                        List.of(service("reviews", "shop", Map.of(), 1)), waypoint("shop", "waypoint", "none"), List.of()),
                Arguments.of("oldest first, as istiod's SortServicesByCreationTime",
                        List.of(service("young", "shop", Map.of(), 1), service("old", "shop", Map.of(), 9)),
                        waypoint("shop", "waypoint", "service"),
                        List.of("old.shop.svc.cluster.local", "young.shop.svc.cluster.local")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void servicesOfAWaypoint(String name, List<Service> services, Proxy waypoint, List<String> expected) {
        assertEquals(expected, served(services, waypoint));
    }

    @Test
    void aSidecarIsNoWaypointAndANodeOfAnUnknownTypeIsRefusedNamingTheTypes() {
        Proxy sidecar = Proxy.fromNode(Node.newBuilder().setId("sidecar~10.0.0.1~reviews-0.shop~shop.svc.cluster.local")
                .build());
        assertEquals(List.of(), served(List.of(service("reviews", "shop", Map.of(), 1)), sidecar));
        assertEquals(Proxy.Type.WAYPOINT, waypoint("shop", "waypoint", null).type());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Proxy.fromNode(
                Node.newBuilder().setId("gateway~10.0.0.1~x.shop~shop.svc.cluster.local").build()));
        assertEquals("node id \"gateway~10.0.0.1~x.shop~shop.svc.cluster.local\": unknown proxy type \"gateway\""
                + " (sidecar, router, waypoint or ztunnel)", e.getMessage());
    }

    /**
     * istiod's ingressUseWaypointFromLabels: the service's {@code istio.io/ingress-use-waypoint},
     * else its namespace's, parsed as Go's ParseBool (anything else is false); only a service that
     * uses a waypoint has one for its gateways.
     */
    @Test
    void gatewaysUseTheWaypointOfAServiceOrNamespaceThatAsks() {
        String ingress = WaypointServices.INGRESS_USE_WAYPOINT;
        Service asks = service("reviews", "shop", Map.of(ingress, "True"), 1);
        Service declines = service("ratings", "shop", Map.of(ingress, "false"), 2);
        Service invalid = service("details", "shop", Map.of(ingress, "yes"), 3);
        Service inherits = service("web", "edge", Map.of(), 4);
        Service noWaypoint = service("plain", "plain", Map.of(ingress, "true"), 5);
        Map<String, Map<String, String>> namespaces = Map.of(
                "shop", Map.of(WaypointServices.USE_WAYPOINT, "waypoint", ingress, "true"),
                "edge", Map.of(WaypointServices.USE_WAYPOINT, "waypoint", ingress, "1"));
        WaypointServices bound = WaypointServices.of(List.of(asks, declines, invalid, inherits, noWaypoint),
                ns -> namespaces.getOrDefault(ns, Map.of()));
        WaypointServices.Waypoint shop = new WaypointServices.Waypoint("shop", "waypoint");
        assertEquals(Optional.of(shop), bound.ingressWaypoint(asks));
        assertEquals(List.of(asks), bound.ingressUsers(shop), "the service's own label wins over its namespace's");
        assertEquals(Optional.of(new WaypointServices.Waypoint("edge", "waypoint")),
                bound.ingressWaypoint(inherits));
        assertEquals(Optional.empty(), bound.ingressWaypoint(noWaypoint));
    }
}
