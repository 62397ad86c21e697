package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.protobuf.ByteString;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1ServiceSpec;
import io.meshpilot.api.workload.AppProtocol;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.IPFamilies;
import io.meshpilot.api.workload.LoadBalancing;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.Service;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kubernetes Services as ztunnel's {@code istio.workload.Service}: istiod's table
 * (pilot/pkg/serviceregistry/ambient/services_test.go TestServiceServices: the Service named
 * "name" in "ns", domain suffix "domain.suffix", network "testnetwork"), its inputs and expected
 * fields as our data, plus the waypoint-binding rules of waypoints.go (fetchWaypointForService).
 */
class KubeServiceAddressesTest {
    static final String NETWORK = "testnetwork";
    static final GatewayAddress WAYPOINT = GatewayAddress.newBuilder()
            .setHostname(NamespacedHostname.newBuilder().setNamespace("waypoint-ns")
                    .setHostname("waypoint.waypoint-ns.svc.domain.suffix"))
            .setHboneMtlsPort(15008).build();

    /** The waypoints of the cases: waypoint-ns/waypoint for all traffic, ns/wl-only for workloads only. */
    static final Waypoints FOUND = (namespace, name) -> switch (namespace + "/" + name) {
        case "waypoint-ns/waypoint" -> Optional.of(new Waypoints.Waypoint(WAYPOINT, "all"));
        case "ns/wl-only" -> Optional.of(new Waypoints.Waypoint(WAYPOINT, "workload"));
        default -> Optional.empty();
    };

    static AmbientContext context(Map<String, String> namespaceLabels) {
        V1Namespace ns = new V1Namespace().metadata(new V1ObjectMeta().name("ns").labels(namespaceLabels));
        return new AmbientContext("cluster0", "domain.suffix", NETWORK, "", n -> n.equals("ns") ? ns : null,
                n -> null, FOUND, WorkloadPolicies.NONE);
    }

    static V1Service service(UnaryOperator<V1ServiceSpec> spec, Map<String, String> labels) {
        return new V1Service().metadata(new V1ObjectMeta().name("name").namespace("ns").labels(labels))
                .spec(spec.apply(new V1ServiceSpec()));
    }

    static V1ServicePort http() {
        return new V1ServicePort().port(80).name("http");
    }

    static final NetworkAddress VIP = NetworkAddress.newBuilder().setNetwork(NETWORK)
            .setAddress(ByteString.copyFrom(new byte[] {1, 2, 3, 4})).build();

    /** istiod's expected result of a case: name.ns.svc.domain.suffix, the VIP 1.2.3.4, port 80 http. */
    static Service.Builder expected() {
        return Service.newBuilder().setName("name").setNamespace("ns").setHostname("name.ns.svc.domain.suffix")
                .addAddresses(VIP)
                .addPorts(Port.newBuilder().setServicePort(80).setAppProtocol(AppProtocol.HTTP11))
                .setCanonical(true);
    }

    static LoadBalancing failover(LoadBalancing.Scope... scopes) {
        return LoadBalancing.newBuilder().addAllRoutingPreference(List.of(scopes))
                .setMode(LoadBalancing.Mode.FAILOVER).build();
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("simple", service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()), Map.of()), Map.of(),
                        expected().build()),
                Arguments.of("external name", service(s -> s.type("ExternalName").externalName("example.com"), Map.of()),
                        Map.of(), null),
                Arguments.of("target ports", service(s -> s.clusterIP("1.2.3.4")
                                .addPortsItem(http().targetPort(new IntOrString(81)))
                                .addPortsItem(new V1ServicePort().port(8080).name("http-alt")
                                        .targetPort(new IntOrString("something"))), Map.of()), Map.of(),
                        expected().clearPorts()
                                .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(81)
                                        .setAppProtocol(AppProtocol.HTTP11))
                                .addPorts(Port.newBuilder().setServicePort(8080).setTargetPort(0)
                                        .setAppProtocol(AppProtocol.HTTP11)).build()),
                Arguments.of("headless", service(s -> s.addPortsItem(http()), Map.of()), Map.of(),
                        expected().clearAddresses().build()),
                Arguments.of("traffic distribution prefer close",
                        service(s -> s.trafficDistribution("PreferClose").clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of()), Map.of(),
                        expected().setLoadBalancing(failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                                LoadBalancing.Scope.ZONE)).build()),
                Arguments.of("traffic distribution prefer same zone",
                        service(s -> s.trafficDistribution("PreferSameZone").clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of()), Map.of(),
                        expected().setLoadBalancing(failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                                LoadBalancing.Scope.ZONE)).build()),
                Arguments.of("traffic distribution prefer same node",
                        service(s -> s.trafficDistribution("PreferSameNode").clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of()), Map.of(),
                        expected().setLoadBalancing(failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                                LoadBalancing.Scope.ZONE, LoadBalancing.Scope.SUBZONE, LoadBalancing.Scope.NODE))
                                .build()),
                Arguments.of("publishNotReadyAddresses",
                        service(s -> s.publishNotReadyAddresses(true).clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of()), Map.of(),
                        expected().setLoadBalancing(LoadBalancing.newBuilder()
                                .setHealthPolicy(LoadBalancing.HealthPolicy.ALLOW_ALL)).build()),
                // constructService: the internal traffic policy Local wins over traffic distribution
                Arguments.of("internal traffic policy local",
                        service(s -> s.internalTrafficPolicy("Local").trafficDistribution("PreferClose")
                                .clusterIP("1.2.3.4").addPortsItem(http()), Map.of()), Map.of(),
                        expected().setLoadBalancing(LoadBalancing.newBuilder()
                                .addRoutingPreference(LoadBalancing.Scope.NODE).setMode(LoadBalancing.Mode.STRICT))
                                .build()),
                Arguments.of("dual stack", service(s -> s.clusterIPs(List.of("1.2.3.4", "2001:db8::1"))
                                .ipFamilies(List.of("IPv4", "IPv6")).addPortsItem(http()), Map.of()), Map.of(),
                        expected().addAddresses(NetworkAddress.newBuilder().setNetwork(NETWORK).setAddress(
                                ByteString.copyFrom(new byte[] {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0, 0, 0, 1}))).setIpFamilies(IPFamilies.DUAL).build()),
                Arguments.of("cross namespace waypoint", service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of(Waypoints.USE_WAYPOINT, "waypoint", Waypoints.USE_WAYPOINT_NAMESPACE, "waypoint-ns")),
                        Map.of(), expected().setWaypoint(WAYPOINT).build()),
                Arguments.of("waypoint from the namespace", service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of()),
                        Map.of(Waypoints.USE_WAYPOINT, "waypoint", Waypoints.USE_WAYPOINT_NAMESPACE, "waypoint-ns"),
                        expected().setWaypoint(WAYPOINT).build()),
                Arguments.of("service opts out of the namespace's waypoint",
                        service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()), Map.of(Waypoints.USE_WAYPOINT, "none")),
                        Map.of(Waypoints.USE_WAYPOINT, "waypoint", Waypoints.USE_WAYPOINT_NAMESPACE, "waypoint-ns"),
                        expected().build()),
                Arguments.of("waypoint for workloads only does not take service traffic",
                        service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()), Map.of(Waypoints.USE_WAYPOINT, "wl-only")),
                        Map.of(), expected().build()),
                Arguments.of("waypoint not ready", service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()),
                        Map.of(Waypoints.USE_WAYPOINT, "missing")), Map.of(), expected().build()),
                Arguments.of("a waypoint's own service has no waypoint",
                        service(s -> s.clusterIP("1.2.3.4").addPortsItem(http()),
                                Map.of("gateway.istio.io/managed", "istio.io-mesh-controller")),
                        Map.of(Waypoints.USE_WAYPOINT, "waypoint", Waypoints.USE_WAYPOINT_NAMESPACE, "waypoint-ns"),
                        expected().build()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void serviceAsIstiodBuildsIt(String name, V1Service svc, Map<String, String> namespaceLabels, Service want) {
        ServiceInfo got = KubeServiceAddresses.build(svc, context(namespaceLabels));
        if (want == null) {
            assertNull(got);
            return;
        }
        assertEquals(want, got.address().address().getService());
        assertEquals("ns/name.ns.svc.domain.suffix", got.address().resourceName());
    }
}
