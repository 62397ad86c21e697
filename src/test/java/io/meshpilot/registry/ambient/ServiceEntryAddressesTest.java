package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry.Resolution;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.workload.AppProtocol;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.LoadBalancing;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.Service;
import io.meshpilot.config.Config;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.util.IpAddr;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ServiceEntries as ztunnel's {@code istio.workload.Service}: istiod's table
 * (pilot/pkg/serviceregistry/ambient/services_test.go TestServiceEntryServices: namespace "ns",
 * network "testnetwork", the waypoint ns/waypoint for all traffic), its inputs and expected
 * fields as our data. The cases of MeshConfig's serviceEntryVisibility are not here (not served).
 */
class ServiceEntryAddressesTest {
    static final String NETWORK = "testnetwork";
    static final GroupVersionKind SERVICE_ENTRY = new GroupVersionKind("networking.istio.io", "v1", "ServiceEntry");
    static final GatewayAddress WAYPOINT = GatewayAddress.newBuilder()
            .setHostname(NamespacedHostname.newBuilder().setNamespace("ns").setHostname("waypoint.example.com"))
            .setHboneMtlsPort(15008).build();
    static final Waypoints FOUND = (namespace, name) -> namespace.equals("ns") && name.equals("waypoint")
            ? Optional.of(new Waypoints.Waypoint(WAYPOINT, "all")) : Optional.empty();

    static AmbientContext context() {
        return new AmbientContext("cluster0", "domain.suffix", NETWORK, "", n -> null, n -> null, FOUND,
                WorkloadPolicies.NONE);
    }

    static Config entry(String name, UnaryOperator<ServiceEntry.Builder> spec) {
        return Config.of(SERVICE_ENTRY, "ns", name, spec.apply(ServiceEntry.newBuilder()).build());
    }

    /** status.addresses as the IP auto-allocation controller writes them: host and value pairs. */
    static Struct statusAddresses(String... hostValue) {
        ListValue.Builder list = ListValue.newBuilder();
        for (int i = 0; i < hostValue.length; i += 2) {
            list.addValues(Value.newBuilder().setStructValue(Struct.newBuilder()
                    .putFields("host", Value.newBuilder().setStringValue(hostValue[i]).build())
                    .putFields("value", Value.newBuilder().setStringValue(hostValue[i + 1]).build())));
        }
        return Struct.newBuilder().putFields("addresses", Value.newBuilder().setListValue(list).build()).build();
    }

    static ServicePort http() {
        return ServicePort.newBuilder().setNumber(80).setName("http").build();
    }

    static NetworkAddress address(String ip) {
        return NetworkAddress.newBuilder().setNetwork(NETWORK).setAddress(ByteString.copyFrom(IpAddr.parse(ip).bytes()))
                .build();
    }

    static NetworkAddress prefix(String ip, int length) {
        return address(ip).toBuilder().setLength(length).build();
    }

    /** A result service of the cases: named and namespaced as the entry, port 80 -> 80. */
    static Service.Builder expected(String name, String host) {
        return Service.newBuilder().setName(name).setNamespace("ns").setHostname(host)
                .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(80));
    }

    static Service.Builder expectedHttp(String name, String host) {
        return expected(name, host).setPorts(0, Port.newBuilder().setServicePort(80).setTargetPort(80)
                .setAppProtocol(AppProtocol.HTTP11));
    }

    static LoadBalancing failover(LoadBalancing.Scope... scopes) {
        return LoadBalancing.newBuilder().addAllRoutingPreference(List.of(scopes))
                .setMode(LoadBalancing.Mode.FAILOVER).build();
    }

    static final LoadBalancing PASSTHROUGH = LoadBalancing.newBuilder().setMode(LoadBalancing.Mode.PASSTHROUGH)
            .setHealthPolicy(LoadBalancing.HealthPolicy.ALLOW_ALL).build();

    static Stream<Arguments> cases() {
        Struct assignMe = statusAddresses("assign-me.example.com", "240.240.0.1", "assign-me.example.com", "2001:2::1");
        return Stream.of(
                Arguments.of("DNS service entry with address", entry("name", s -> s.addAddresses("1.2.3.4")
                                .addHosts("a.example.com").addHosts("b.example.com")
                                .addPorts(http().toBuilder().setProtocol("HTTP")).addSubjectAltNames("san1")
                                .setResolution(Resolution.DNS)),
                        List.of(expectedHttp("name", "a.example.com").addAddresses(address("1.2.3.4"))
                                        .addSubjectAltNames("san1").build(),
                                expectedHttp("name", "b.example.com").addAddresses(address("1.2.3.4"))
                                        .addSubjectAltNames("san1").build())),
                Arguments.of("Uses auto-assigned addresses", entry("auto-assigned", s -> s
                                .addHosts("assign-me.example.com").addPorts(http()).addSubjectAltNames("san1")
                                .setResolution(Resolution.DNS)).withStatus(assignMe),
                        List.of(expected("auto-assigned", "assign-me.example.com").addAddresses(address("240.240.0.1"))
                                .addAddresses(address("2001:2::1")).addSubjectAltNames("san1").build())),
                Arguments.of("Uses multiple auto-assigned addresses", entry("multi-host-auto-assigned", s -> s
                                .addHosts("multi-host-assign-me.example.com").addHosts("second-host-assign-me.example.com")
                                .addPorts(http()).addSubjectAltNames("san1").setResolution(Resolution.DNS))
                                .withStatus(statusAddresses("multi-host-assign-me.example.com", "240.240.0.1",
                                        "multi-host-assign-me.example.com", "2001:2::1",
                                        "second-host-assign-me.example.com", "240.240.0.2",
                                        "second-host-assign-me.example.com", "2001:2::2")),
                        List.of(expected("multi-host-auto-assigned", "multi-host-assign-me.example.com")
                                        .addAddresses(address("240.240.0.1")).addAddresses(address("2001:2::1"))
                                        .addSubjectAltNames("san1").build(),
                                expected("multi-host-auto-assigned", "second-host-assign-me.example.com")
                                        .addAddresses(address("240.240.0.2")).addAddresses(address("2001:2::2"))
                                        .addSubjectAltNames("san1").build())),
                Arguments.of("Does not use auto-assigned addresses user provided address", entry("user-provided", s -> s
                                .addAddresses("1.2.3.4").addHosts("user-provided.example.com").addPorts(http())
                                .addSubjectAltNames("san1").setResolution(Resolution.DNS))
                                .withStatus(statusAddresses("user-provided.example.com", "240.240.0.1")),
                        List.of(expected("user-provided", "user-provided.example.com").addAddresses(address("1.2.3.4"))
                                .addSubjectAltNames("san1").build())),
                Arguments.of("Does not use auto-assigned addresses none resolution", entry("none-resolution", s -> s
                                .addHosts("none-resolution.example.com").addPorts(http()).addSubjectAltNames("san1")
                                .setResolution(Resolution.NONE))
                                .withStatus(statusAddresses("none-resolution.example.com", "240.240.0.1")),
                        List.of(expected("none-resolution", "none-resolution.example.com").setLoadBalancing(PASSTHROUGH)
                                .addSubjectAltNames("san1").build())),
                Arguments.of("Does not use auto-assigned addresses user opted out", entry("user-opt-out", s -> s
                                .addHosts("user-opt-out.example.com").addPorts(http()).addSubjectAltNames("san1")
                                .setResolution(Resolution.DNS))
                                .withLabels(Map.of("networking.istio.io/enable-autoallocate-ip", "false"))
                                .withStatus(statusAddresses("user-opt-out.example.com", "240.240.0.1")),
                        List.of(expected("user-opt-out", "user-opt-out.example.com").addSubjectAltNames("san1")
                                .build())),
                Arguments.of("Does not use auto-assigned addresses for wildcard host with DNS resolution",
                        entry("partial-wildcard", s -> s.addHosts("*.wildcard.example.com")
                                .addHosts("this-is-ok.example.com").addPorts(http()).addSubjectAltNames("san1")
                                .setResolution(Resolution.DNS))
                                .withStatus(statusAddresses("this-is-ok.example.com", "240.240.0.1",
                                        "this-is-ok.example.com", "2001:2::1")),
                        List.of(expected("partial-wildcard", "*.wildcard.example.com").addSubjectAltNames("san1")
                                        .build(),
                                expected("partial-wildcard", "this-is-ok.example.com")
                                        .addAddresses(address("240.240.0.1")).addAddresses(address("2001:2::1"))
                                        .addSubjectAltNames("san1").build())),
                Arguments.of("Uses auto assigned addresses for wildcard host", entry("wildcard", s -> s
                                .addHosts("*.wildcard.example.com").addPorts(http()).addSubjectAltNames("san1")
                                .setResolution(Resolution.DYNAMIC_DNS))
                                .withLabels(Map.of(Waypoints.USE_WAYPOINT, "waypoint", Waypoints.USE_WAYPOINT_NAMESPACE, "ns"))
                                .withStatus(statusAddresses("*.wildcard.example.com", "240.240.0.1",
                                        "*.wildcard.example.com", "2001:2::1")),
                        List.of(expected("wildcard", "*.wildcard.example.com").addAddresses(address("240.240.0.1"))
                                .addAddresses(address("2001:2::1")).addSubjectAltNames("san1").setWaypoint(WAYPOINT)
                                .build())),
                Arguments.of("prefer same node traffic distribution", entry("name", s -> s.addAddresses("1.2.3.4")
                                .addHosts("a.example.com").addPorts(http()).setResolution(Resolution.DNS))
                                .withAnnotations(Map.of("networking.istio.io/traffic-distribution", "PreferSameNode")),
                        List.of(expected("name", "a.example.com").addAddresses(address("1.2.3.4"))
                                .setLoadBalancing(failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                                        LoadBalancing.Scope.ZONE, LoadBalancing.Scope.SUBZONE, LoadBalancing.Scope.NODE))
                                .build())),
                Arguments.of("prefer close traffic distribution", entry("name", s -> s.addAddresses("1.2.3.4")
                                .addHosts("a.example.com").addPorts(http()).setResolution(Resolution.DNS))
                                .withAnnotations(Map.of("networking.istio.io/traffic-distribution", "PreferClose")),
                        List.of(expected("name", "a.example.com").addAddresses(address("1.2.3.4"))
                                .setLoadBalancing(failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                                        LoadBalancing.Scope.ZONE)).build())),
                Arguments.of("Service entry with CIDR address", entry("cidr-se", s -> s.addAddresses("10.0.0.0/24")
                                .addHosts("cidr.example.com").addPorts(http().toBuilder().setProtocol("HTTP"))
                                .setResolution(Resolution.NONE)),
                        List.of(expectedHttp("cidr-se", "cidr.example.com").addAddresses(prefix("10.0.0.0", 24))
                                .setLoadBalancing(PASSTHROUGH).build())),
                Arguments.of("Service entry with non-canonical CIDR address is normalized", entry("noncanonical-cidr-se",
                                s -> s.addAddresses("10.0.0.5/24").addHosts("noncanonical.example.com")
                                        .addPorts(http().toBuilder().setProtocol("HTTP")).setResolution(Resolution.NONE)),
                        List.of(expectedHttp("noncanonical-cidr-se", "noncanonical.example.com")
                                .addAddresses(prefix("10.0.0.0", 24)).setLoadBalancing(PASSTHROUGH).build())),
                Arguments.of("Service entry with single-IP CIDR address", entry("single-cidr-se", s -> s
                                .addAddresses("1.2.3.4/32").addHosts("single.example.com")
                                .addPorts(http().toBuilder().setProtocol("HTTP")).setResolution(Resolution.DNS)),
                        List.of(expectedHttp("single-cidr-se", "single.example.com").addAddresses(address("1.2.3.4"))
                                .build())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void serviceEntryAsIstiodBuildsIt(String name, Config se, List<Service> want) {
        List<ServiceInfo> got = ServiceEntryAddresses.build(se, context());
        assertEquals(want, got.stream().map(s -> s.address().address().getService()).toList());
        got.forEach(s -> assertEquals(ServiceInfo.Source.SERVICE_ENTRY, s.source()));
    }

    /** The names workloads list it under, its selector and port names (for the entries it selects). */
    @Test
    void keysSelectorAndPortNames() {
        Config se = entry("vm", s -> s.addHosts("vm.example.com").addPorts(http().toBuilder().setTargetPort(8080))
                .setWorkloadSelector(s.getWorkloadSelectorBuilder().putLabels("app", "vm")).setResolution(Resolution.STATIC));
        ServiceInfo got = ServiceEntryAddresses.build(se, context()).getFirst();
        assertEquals("ns/vm.example.com", got.key());
        assertEquals(Map.of("app", "vm"), got.selector());
        assertEquals(Map.of(80, new ServiceInfo.PortName("http", "")), got.portNames());
        assertEquals(8080, got.address().address().getService().getPorts(0).getTargetPort());
    }

    /** An address that is neither an IP nor a CIDR: istiod's constructServiceEntries sends no service for the entry. */
    @Test
    void anUnparsableAddressSendsNothing() {
        Config se = entry("bad", s -> s.addAddresses("not-an-ip").addHosts("bad.example.com").addPorts(http()));
        assertEquals(List.of(), ServiceEntryAddresses.build(se, context()));
    }
}
