package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import com.google.protobuf.UInt32Value;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry.Resolution;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Locality;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.TunnelProtocol;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.config.Config;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.util.IpAddr;
import java.util.Comparator;
import java.util.LinkedHashMap;
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
 * WorkloadEntries and ServiceEntries' inline endpoints as ztunnel's {@code istio.workload.Workload}:
 * istiod's tables (pilot/pkg/serviceregistry/ambient/workloads_test.go TestWorkloadEntryWorkloads
 * and TestServiceEntryWorkloads: namespace "ns", cluster "cluster0", network "testnetwork"), their
 * inputs and expected fields as our data. The cross-network cases are not here (no network gateways).
 */
class WorkloadEntryWorkloadsTest {
    static final String NETWORK = ServiceEntryAddressesTest.NETWORK;
    static final GroupVersionKind WORKLOAD_ENTRY = new GroupVersionKind("networking.istio.io", "v1", "WorkloadEntry");

    static AmbientContext context() {
        return ServiceEntryAddressesTest.context();
    }

    static Config workloadEntry(Map<String, String> labels, UnaryOperator<WorkloadEntry.Builder> spec) {
        return Config.of(WORKLOAD_ENTRY, "ns", "name", spec.apply(WorkloadEntry.newBuilder()).build()).withLabels(labels);
    }

    /** A service of the inputs: "svc" in ns, hostname "hostname", selecting app=foo. */
    static ServiceInfo service(ServiceInfo.Source source, Map<Integer, Integer> targetPorts,
                               Map<Integer, ServiceInfo.PortName> portNames) {
        Service.Builder s = Service.newBuilder().setName("svc").setNamespace("ns").setHostname("hostname");
        targetPorts.forEach((port, target) -> s.addPorts(Port.newBuilder().setServicePort(port).setTargetPort(target)));
        return new ServiceInfo(source, "ns", AddressInfo.of(Address.newBuilder().setService(s).build()),
                Map.of("app", "foo"), portNames);
    }

    static final ServiceInfo SVC_80_8080 = service(ServiceInfo.Source.SERVICE, Map.of(80, 8080), Map.of());

    static ByteString ip(String text) {
        return ByteString.copyFrom(IpAddr.parse(text).bytes());
    }

    /** The expected result of the WorkloadEntry cases: "name" at 1.2.3.4, healthy. */
    static Workload.Builder expected(String canonicalName) {
        return Workload.newBuilder().setUid("cluster0/networking.istio.io/WorkloadEntry/ns/name").setName("name")
                .setNamespace("ns").addAddresses(ip("1.2.3.4")).setNetwork(NETWORK)
                .setCanonicalName(canonicalName).setCanonicalRevision("latest")
                .setWorkloadType(WorkloadType.POD).setWorkloadName("name").setStatus(WorkloadStatus.HEALTHY)
                .setClusterId("cluster0");
    }

    static PortList ports(int... servicePortTargetPort) {
        PortList.Builder out = PortList.newBuilder();
        for (int i = 0; i < servicePortTargetPort.length; i += 2) {
            out.addPorts(Port.newBuilder().setServicePort(servicePortTargetPort[i]).setTargetPort(servicePortTargetPort[i + 1]));
        }
        return out.build();
    }

    static <K, V> Map<K, V> ordered(K k1, V v1, K k2, V v2, K k3, V v3) {
        Map<K, V> m = new LinkedHashMap<>();
        m.put(k1, v1);
        m.put(k2, v2);
        m.put(k3, v3);
        return m;
    }

    static Stream<Arguments> workloadEntryCases() {
        Map<Integer, Integer> fourPorts = new LinkedHashMap<>(ordered(80, 8080, 81, 8081, 82, 0));
        fourPorts.put(83, 0);
        return Stream.of(
                Arguments.of("we with service", workloadEntry(Map.of("app", "foo"), w -> w.setAddress("1.2.3.4")),
                        List.of(SVC_80_8080), expected("foo").putServices("ns/hostname", ports(80, 8080)).build()),
                Arguments.of("we with tunnel label is HBONE", workloadEntry(Map.of("app", "foo",
                                "networking.istio.io/tunnel", "http"), w -> w.setAddress("1.2.3.4")),
                        List.of(SVC_80_8080), expected("foo").setTunnelProtocol(TunnelProtocol.HBONE).setNativeTunnel(true)
                                .putServices("ns/hostname", ports(80, 8080)).build()),
                Arguments.of("we without labels", workloadEntry(Map.of(), w -> w.setAddress("1.2.3.4")),
                        List.of(SVC_80_8080), expected("name").build()),
                Arguments.of("we spec labels", workloadEntry(Map.of(), w -> w.setAddress("1.2.3.4").putLabels("app", "foo")),
                        List.of(SVC_80_8080), expected("foo").putServices("ns/hostname", ports(80, 8080)).build()),
                Arguments.of("pod with service named ports", workloadEntry(Map.of("app", "foo"), w -> w
                                .setAddress("1.2.3.4").putPorts("81", 8180).putPorts("82-target", 8280)),
                        List.of(service(ServiceInfo.Source.SERVICE, fourPorts, Map.of(
                                80, new ServiceInfo.PortName("80", ""), 81, new ServiceInfo.PortName("81", ""),
                                82, new ServiceInfo.PortName("82", "82-target"),
                                83, new ServiceInfo.PortName("83", "83-target")))),
                        expected("foo").putServices("ns/hostname", ports(80, 8080, 81, 8180, 82, 8280)).build()),
                Arguments.of("pod with serviceentry named ports", workloadEntry(Map.of("app", "foo"), w -> w
                                .setAddress("1.2.3.4").putPorts("81", 8180)),
                        List.of(service(ServiceInfo.Source.SERVICE_ENTRY, ordered(80, 8080, 81, 0, 82, 0), Map.of(
                                80, new ServiceInfo.PortName("80", ""), 81, new ServiceInfo.PortName("81", ""),
                                82, new ServiceInfo.PortName("82", "")))),
                        expected("foo").putServices("ns/hostname", ports(80, 8080, 81, 8180, 82, 82)).build()),
                Arguments.of("host pod with ServiceEntry workloadSelector", workloadEntry(Map.of("app", "foo"), w -> w
                                .setAddress("hostname").putPorts("81", 8180)),
                        List.of(service(ServiceInfo.Source.SERVICE_ENTRY, ordered(80, 8080, 81, 0, 82, 0), Map.of(
                                80, new ServiceInfo.PortName("80", ""), 81, new ServiceInfo.PortName("81", ""),
                                82, new ServiceInfo.PortName("82", "")))),
                        expected("foo").clearAddresses().setHostname("hostname")
                                .putServices("ns/hostname", ports(80, 8080, 81, 8180, 82, 82)).build()),
                Arguments.of("bound to a waypoint by its label", workloadEntry(Map.of(Waypoints.USE_WAYPOINT, "waypoint"),
                                w -> w.setAddress("1.2.3.4")),
                        List.of(), expected("name").setWaypoint(ServiceEntryAddressesTest.WAYPOINT).build()),
                // fields of the entry the tables do not vary: weight, locality, network, service account
                Arguments.of("weight locality network service account", workloadEntry(Map.of(), w -> w
                                .setAddress("1.2.3.4").setWeight(3).setLocality("region/zone/subzone").setNetwork("vpc")
                                .setServiceAccount("sa")),
                        List.of(), expected("name").setCapacity(UInt32Value.of(3)).setNetwork("vpc").setServiceAccount("sa")
                                .setLocality(Locality.newBuilder().setRegion("region").setZone("zone").setSubzone("subzone"))
                                .build()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("workloadEntryCases")
    void workloadEntryAsIstiodBuildsIt(String name, Config we, List<ServiceInfo> services, Workload want) {
        AddressInfo got = WorkloadEntryWorkloads.build(we, context(), services, true);
        assertEquals(want, got.address().getWorkload());
    }

    /** PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES=false: only ServiceEntries select the entry (workloadEntryWorkloadBuilder). */
    @Test
    void kubernetesServicesSelectOnlyWhenEnabled() {
        Config we = workloadEntry(Map.of("app", "foo"), w -> w.setAddress("1.2.3.4"));
        ServiceInfo entry = service(ServiceInfo.Source.SERVICE_ENTRY, Map.of(80, 8080), Map.of())
                .withService(Service.newBuilder().setName("se").setNamespace("ns").setHostname("se.example.com")
                        .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(8080)).build());
        Workload got = WorkloadEntryWorkloads.build(we, context(), List.of(SVC_80_8080, entry), false)
                .address().getWorkload();
        assertEquals(Map.of("ns/se.example.com", ports(80, 8080)), got.getServicesMap());
    }

    static Config serviceEntry(UnaryOperator<ServiceEntry.Builder> spec) {
        return Config.of(ServiceEntryAddressesTest.SERVICE_ENTRY, "ns", "name", spec.apply(ServiceEntry.newBuilder()
                .addPorts(ServicePort.newBuilder().setNumber(80).setName("http"))).build());
    }

    static Workload.Builder expectedInline(String addressOrHost) {
        Workload.Builder w = Workload.newBuilder()
                .setUid("cluster0/networking.istio.io/ServiceEntry/ns/name/" + addressOrHost).setName("name")
                .setNamespace("ns").setNetwork(NETWORK).setCanonicalName("name").setCanonicalRevision("latest")
                .setWorkloadType(WorkloadType.POD).setWorkloadName("name").setStatus(WorkloadStatus.HEALTHY)
                .setClusterId("cluster0");
        return IpAddr.isAddress(addressOrHost) ? w.addAddresses(ip(addressOrHost)) : w.setHostname(addressOrHost);
    }

    static Stream<Arguments> serviceEntryCases() {
        return Stream.of(
                Arguments.of("dns without endpoints", serviceEntry(s -> s.addAddresses("1.2.3.4").addHosts("a.example.com")
                                .addHosts("b.example.com").setResolution(Resolution.DNS)),
                        List.of(expectedInline("a.example.com").putServices("ns/a.example.com", ports(80, 80)).build(),
                                expectedInline("b.example.com").putServices("ns/b.example.com", ports(80, 80)).build())),
                Arguments.of("static", serviceEntry(s -> s.addAddresses("1.2.3.4").addHosts("a.example.com")
                                .setResolution(Resolution.STATIC)
                                .addEndpoints(WorkloadEntry.newBuilder().setAddress("2.3.4.5"))
                                .addEndpoints(WorkloadEntry.newBuilder().setAddress("3.4.5.6")
                                        .putLabels(Waypoints.USE_WAYPOINT, "waypoint"))),
                        List.of(expectedInline("2.3.4.5").putServices("ns/a.example.com", ports(80, 80)).build(),
                                expectedInline("3.4.5.6").putServices("ns/a.example.com", ports(80, 80))
                                        .setWaypoint(ServiceEntryAddressesTest.WAYPOINT).build())),
                // serviceEntryWorkloadBuilder: no endpoints and a resolution that is not DNS: no workload
                Arguments.of("static without endpoints", serviceEntry(s -> s.addAddresses("1.2.3.4")
                        .addHosts("a.example.com").setResolution(Resolution.STATIC)), List.of()),
                // a workloadSelector instead of endpoints: the selected entries are the workloads
                Arguments.of("dns with a workload selector", serviceEntry(s -> s.addHosts("a.example.com")
                        .setResolution(Resolution.DNS).setWorkloadSelector(s.getWorkloadSelectorBuilder()
                                .putLabels("app", "a"))), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("serviceEntryCases")
    void serviceEntryEndpointsAsIstiodBuildsThem(String name, Config se, List<Workload> want) {
        List<ServiceInfo> services = ServiceEntryAddresses.build(se, context());
        List<Workload> got = WorkloadEntryWorkloads.inline(se, context(), services).stream()
                .map(a -> a.address().getWorkload()).sorted(Comparator.comparing(Workload::getUid)).toList();
        assertEquals(want, got);
    }

    /** An inline endpoint's port named like the entry's port overrides its target port (ambientindex_serviceentry_test). */
    @Test
    void inlineEndpointPortOverridesTheTarget() {
        Config se = serviceEntry(s -> s.addHosts("se.istio.io").addAddresses("240.240.23.45")
                .setResolution(Resolution.STATIC)
                .addEndpoints(WorkloadEntry.newBuilder().setAddress("127.0.0.1").putPorts("http", 8081)));
        List<AddressInfo> got = WorkloadEntryWorkloads.inline(se, context(), ServiceEntryAddresses.build(se, context()));
        assertEquals(Map.of("ns/se.istio.io", ports(80, 8081)), got.getFirst().address().getWorkload().getServicesMap());
    }

    /** The waypoints "wp" and "svc-wp" of ns, for all traffic, each with its pods' service account. */
    static final Waypoints WITH_IDENTITIES = (namespace, name) -> namespace.equals("ns")
            && (name.equals("wp") || name.equals("svc-wp"))
            ? Optional.of(new Waypoints.Waypoint("ns", name, ServiceEntryAddressesTest.WAYPOINT, "all", List.of(name + "-sa")))
            : Optional.empty();

    /**
     * istiod's workloadEntryWorkloadBuilder and serviceEntryWorkloadBuilder append
     * implicitWaypointPolicies (PILOT_AUTO_ALLOW_WAYPOINT_POLICY) as its pods do: a WorkloadEntry
     * or inline endpoint names the implicit policy of its services' waypoints, then of its own.
     */
    @Test
    void entriesNameTheirWaypointsImplicitPolicies() {
        AmbientContext ctx = new AmbientContext("cluster0", "domain.suffix", NETWORK, "", n -> null, n -> null,
                WITH_IDENTITIES, WorkloadPolicies.NONE, true);
        List<String> both = List.of("ns/istio_allow_waypoint_ns_svc-wp", "ns/istio_allow_waypoint_ns_wp");
        Config se = serviceEntry(s -> s.addHosts("se.istio.io").addAddresses("240.240.23.45")
                .setResolution(Resolution.STATIC).setWorkloadSelector(s.getWorkloadSelectorBuilder().putLabels("app", "foo"))
                .addEndpoints(WorkloadEntry.newBuilder().setAddress("127.0.0.1").putLabels("istio.io/use-waypoint", "wp")))
                .withLabels(Map.of("istio.io/use-waypoint", "svc-wp"));
        List<ServiceInfo> services = ServiceEntryAddresses.build(se, ctx);

        Config we = workloadEntry(Map.of("app", "foo", "istio.io/use-waypoint", "wp"), w -> w.setAddress("1.2.3.4"));
        assertEquals(both, WorkloadEntryWorkloads.build(we, ctx, services, true).address().getWorkload()
                .getAuthorizationPoliciesList());
        assertEquals(both, WorkloadEntryWorkloads.inline(se, ctx, services).getFirst().address().getWorkload()
                .getAuthorizationPoliciesList());
        assertEquals(List.of(), WorkloadEntryWorkloads.build(we, context(), services, true).address().getWorkload()
                .getAuthorizationPoliciesList(), "none without the switch");
    }
}
