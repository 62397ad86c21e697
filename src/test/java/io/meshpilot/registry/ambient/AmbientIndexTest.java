package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.Config;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.TunnelProtocol;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.api.workload.security.StringMatch;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.RecordingUpdates;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The ambient index as bootstrap wires it (ServiceRegistries with PILOT_ENABLE_AMBIENT, beside
 * the Kubernetes registry on the same informers), reading the API server stand-in over real
 * HTTP. The cases and expected fields are istiod's (pilot/pkg/serviceregistry/ambient/
 * ambientindex_test.go: namespace ns1, cluster cluster0, network testnetwork, pods on node1);
 * what the index reports goes to {@link RecordingUpdates} as the Address keys a push sends.
 */
class AmbientIndexTest {
    static final String NS = "ns1";
    static final String CLUSTER = "cluster0";
    static final String NETWORK = "testnetwork";

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient client;
    MemoryConfigStore store;
    RecordingUpdates updates;
    Environment env;
    ServiceRegistries registries;
    AmbientIndexController ambient;

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system, labels: {topology.istio.io/network: testnetwork}}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: node1}
                """);
        startIndex(new PilotFeatures.Ambient(true, true, true, false));
    }

    /** The registries (and the index) over the API server stand-in, with these ambient switches. */
    void startIndex(PilotFeatures.Ambient features) throws Exception {
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        store = new MemoryConfigStore("test", Schemas.PILOT.all(), true);
        updates = new RecordingUpdates();
        env = new Environment("cluster.local", CLUSTER);
        env.setMesh(MeshConfig.newBuilder().setTrustDomain("cluster.local").build());
        registries = new ServiceRegistries(new ServiceRegistries.Options(List.of("Kubernetes"), CLUSTER,
                "istio-system", PilotFeatures.Registry.DEFAULTS, client, features),
                store, updates, env, new Readiness());
        ambient = registries.ambient();
        assertTrue(env.ambientIndexes() == ambient.index(), "the Environment answers ztunnels from the index");
        store.run();
        registries.configSynced();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        await("ambient index synced", ambient::hasSynced);
        updates.take();
    }

    @AfterEach
    void stop() throws Exception {
        stopIndex();
        if (api != null) {
            api.stop();
        }
    }

    void stopIndex() throws Exception {
        if (registries != null) {
            registries.close();
        }
        if (client != null) {
            client.close();
        }
        if (store != null) {
            store.close();
        }
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    /** istiod's addPods: a pod of ns1 on node1, ready or not, with this IP and phase. */
    void addPod(String ip, String name, String sa, Map<String, String> labels, Map<String, String> annotations,
                boolean ready, String phase) {
        api.apply("""
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: ns1, labels: %s, annotations: %s}
                spec: {nodeName: node1, serviceAccountName: %s, containers: [{name: app, image: app}]}
                status:
                  phase: %s
                  podIP: %s
                  podIPs: [{ip: %s}]
                  conditions: [{type: Ready, status: "%s"}]
                """.formatted(name, json(labels), json(annotations), sa, phase, ip, ip, ready ? "True" : "False"));
    }

    static String json(Map<String, String> m) {
        StringBuilder b = new StringBuilder("{");
        m.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append('"').append(k).append("\": \"").append(v)
                .append('"'));
        return b.append('}').toString();
    }

    static String uid(String name) {
        return CLUSTER + "//Pod/" + NS + "/" + name;
    }

    /**
     * Waits for the index to report exactly these Address keys in one update, and that it
     * reported no other (the Kubernetes registry's own updates are not the index's).
     */
    void assertEvent(String... keys) throws InterruptedException {
        String event = "addresses " + String.join(",", new TreeSet<>(List.of(keys)));
        await("index reports " + event, () -> updates.pushes.contains(event));
        assertEquals(List.of(event), updates.take().stream().filter(e -> e.startsWith("addresses ")).toList());
    }

    List<Address> lookup(String key) {
        return ambient.index().lookup(key).stream().map(AddressInfo::address).toList();
    }

    static ByteString ip(String text) {
        String[] p = text.split("\\.");
        return ByteString.copyFrom(new byte[] {(byte) Integer.parseInt(p[0]), (byte) Integer.parseInt(p[1]),
                (byte) Integer.parseInt(p[2]), (byte) Integer.parseInt(p[3])});
    }

    /** TestAmbientIndex_LookupWorkloads: pod3's Workload exactly as istiod's test expects it. */
    static Workload.Builder expected(String name, String ipText, String canonicalName) {
        return Workload.newBuilder()
                .setName(name).setNamespace(NS).addAddresses(ip(ipText)).setNetwork(NETWORK)
                .setServiceAccount("sa1").setUid(uid(name)).setNode("node1")
                .setCanonicalName(canonicalName).setCanonicalRevision("latest")
                .setWorkloadType(WorkloadType.POD).setWorkloadName(name).setClusterId(CLUSTER)
                .setStatus(WorkloadStatus.HEALTHY);
    }

    @Test
    void lookupWorkloads() throws Exception {
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        assertEvent(uid("pod1"));
        addPod("127.0.0.2", "pod2", "sa1", Map.of("app", "a", "other", "label"), Map.of(), true, "Running");
        assertEvent(uid("pod2"));
        addPod("127.0.0.3", "pod3", "sa1", Map.of("app", "other"), Map.of(), true, "Running");
        assertEvent(uid("pod3"));

        assertEquals(3, ambient.index().all().size());
        Address pod3 = Address.newBuilder().setWorkload(expected("pod3", "127.0.0.3", "other")).build();
        assertEquals(List.of(pod3), lookup(uid("pod3")));
        assertEquals(List.of(pod3), lookup(NETWORK + "/127.0.0.3"));
        assertEquals(List.of("testnetwork/127.0.0.3"), ambient.index().lookup(uid("pod3")).getFirst().aliases());
        // TestAmbientIndex_WorkloadNotFound
        assertEquals(List.of(), lookup(NETWORK + "/10.0.0.1"));
    }

    @Test
    void serviceSelectsItsWorkloadsAndOnlyThoseChange() throws Exception {
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        addPod("127.0.0.2", "pod2", "sa1", Map.of("app", "b"), Map.of(), true, "Running");
        await("pods indexed", () -> ambient.index().all().size() == 2);
        updates.take();

        api.apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: svc1, namespace: ns1}
                spec:
                  clusterIP: 10.0.0.1
                  selector: {app: a}
                  ports: [{name: http, port: 80, targetPort: 8080}]
                """);
        String svc = "ns1/svc1.ns1.svc.cluster.local";
        assertEvent(svc, uid("pod1"));
        List<Address> bySvc = lookup(svc);
        assertEquals(2, bySvc.size(), "the service and the one workload it selects: " + bySvc);
        assertEquals(svc.substring(4), bySvc.getFirst().getService().getHostname());
        assertEquals(Map.of(svc, PortList.newBuilder().addPorts(Port.newBuilder().setServicePort(80).setTargetPort(8080))
                .build()), bySvc.get(1).getWorkload().getServicesMap());
        assertEquals(bySvc, lookup(NETWORK + "/10.0.0.1"), "by VIP: the service and its workloads");

        api.delete("apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\n");
        assertEvent(svc, uid("pod1"));
        assertEquals(List.of(), lookup(svc));
    }

    @Test
    void podLifecycle() throws Exception {
        // TestPodLifecycleWorkloadGates: a pod not ready is UNHEALTHY, a terminated one is gone
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), false, "Running");
        assertEvent(uid("pod1"));
        assertEquals(WorkloadStatus.UNHEALTHY, lookup(uid("pod1")).getFirst().getWorkload().getStatus());

        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        assertEvent(uid("pod1"));
        assertEquals(WorkloadStatus.HEALTHY, lookup(uid("pod1")).getFirst().getWorkload().getStatus());

        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Succeeded");
        assertEvent(uid("pod1"));
        assertEquals(List.of(), lookup(uid("pod1")));
    }

    @Test
    void captureAndWaypointFromTheNamespace() throws Exception {
        // istio-cni's redirection annotation makes the workload HBONE (workloads.go setTunnelProtocol)
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of("ambient.istio.io/redirection", "enabled"),
                true, "Running");
        assertEvent(uid("pod1"));
        assertEquals(TunnelProtocol.HBONE, lookup(uid("pod1")).getFirst().getWorkload().getTunnelProtocol());

        // the waypoint seam: ns1/wp serves workload traffic; the namespace's label binds the pod to it
        var address = KubeServiceAddressesTest.WAYPOINT;
        ambient.useWaypoints((namespace, name) -> namespace.equals(NS) && name.equals("wp")
                ? Optional.of(new Waypoints.Waypoint(address, "workload")) : Optional.empty());
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1, labels: {istio.io/use-waypoint: wp}}
                """);
        await("pod bound to the waypoint", () -> lookup(uid("pod1")).getFirst().getWorkload().hasWaypoint());
        assertEquals(address, lookup(uid("pod1")).getFirst().getWorkload().getWaypoint());
    }

    @Test
    void policiesSeamFillsAuthorizationPolicies() throws Exception {
        ambient.usePolicies((namespace, labels) -> "a".equals(labels.get("app")) ? List.of(namespace + "/allow-a")
                : List.of());
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        await("pod indexed", () -> !lookup(uid("pod1")).isEmpty());
        assertEquals(List.of("ns1/allow-a"), lookup(uid("pod1")).getFirst().getWorkload().getAuthorizationPoliciesList());
    }

    /**
     * The policies of the config store select workloads (istiod's TestAmbientIndex_Policy): a
     * selector AuthorizationPolicy is named by the pods it selects, and a STRICT PeerAuthentication
     * adds the static policy; deleting the AuthorizationPolicy withdraws its name.
     */
    @Test
    void storePoliciesFillAuthorizationPolicies() throws Exception {
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        addPod("127.0.0.2", "pod2", "sa1", Map.of("app", "b"), Map.of(), true, "Running");
        await("pods indexed", () -> !lookup(uid("pod1")).isEmpty() && !lookup(uid("pod2")).isEmpty());
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("policies.yaml", """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: allow-a, namespace: ns1}
                spec: {selector: {matchLabels: {app: a}}, action: ALLOW, rules: [{from: [{source: {namespaces: [ns1]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: istio-system}
                spec: {mtls: {mode: STRICT}}
                """);
        assertEquals(List.of(), r.errors());
        for (Config c : r.configs()) {
            store.create(c);
        }
        await("pod1 names the selecting policy and the static STRICT one", () -> lookup(uid("pod1")).getFirst().getWorkload()
                .getAuthorizationPoliciesList().equals(List.of("ns1/allow-a", "istio-system/istio_converted_static_strict")));
        await("pod2 names only the static STRICT one", () -> lookup(uid("pod2")).getFirst().getWorkload()
                .getAuthorizationPoliciesList().equals(List.of("istio-system/istio_converted_static_strict")));
        store.delete("AuthorizationPolicy", "ns1", "allow-a", null);
        await("the deleted policy is withdrawn", () -> lookup(uid("pod1")).getFirst().getWorkload()
                .getAuthorizationPoliciesList().equals(List.of("istio-system/istio_converted_static_strict")));
    }

    /**
     * Without a waypoint plugged in, the index reads the waypoints' Services the deployment
     * controller makes (istiod's Waypoint collection, its hostname address and HBONE port): a
     * waypoint appearing binds the services and pods of a namespace that names it, and its
     * removal unbinds them.
     */
    @Test
    void aWaypointServiceBindsTheNamespaceThatNamesIt() throws Exception {
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1, labels: {istio.io/use-waypoint: waypoint}}
                """);
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        await("pod indexed", () -> !lookup(uid("pod1")).isEmpty());
        assertFalse(lookup(uid("pod1")).getFirst().getWorkload().hasWaypoint(), "no waypoint exists yet");
        api.apply("""
                apiVersion: v1
                kind: Service
                metadata:
                  name: waypoint
                  namespace: ns1
                  labels: {gateway.networking.k8s.io/gateway-name: waypoint, gateway.istio.io/managed: istio.io-mesh-controller,
                           istio.io/waypoint-for: all}
                spec:
                  clusterIP: 10.96.0.99
                  ports: [{name: mesh, port: 15008, appProtocol: hbone}]
                  selector: {gateway.networking.k8s.io/gateway-name: waypoint}
                """);
        GatewayAddress expected = GatewayAddress.newBuilder().setHboneMtlsPort(15008).setHostname(
                NamespacedHostname.newBuilder().setNamespace("ns1").setHostname("waypoint.ns1.svc.cluster.local")).build();
        await("pod bound to the waypoint", () -> lookup(uid("pod1")).getFirst().getWorkload().hasWaypoint());
        assertEquals(expected, lookup(uid("pod1")).getFirst().getWorkload().getWaypoint());
        api.delete("apiVersion: v1\nkind: Service\nmetadata: {name: waypoint, namespace: ns1}\n");
        await("unbound once the waypoint is gone", () -> !lookup(uid("pod1")).getFirst().getWorkload().hasWaypoint());
    }

    /**
     * istiod's TestDefaultAllowWaypointPolicy (with setupPolicyTest): with
     * PILOT_AUTO_ALLOW_WAYPOINT_POLICY, the waypoint {@code waypoint-ns} (two pods, service
     * accounts namespace-wide and waypoint-sa) gets the implicit ALLOW policy
     * {@code istio_allow_waypoint_ns1_waypoint-ns} for its identities, and pod1, which the
     * namespace binds to it, names that policy. Without the switch there is none.
     */
    @Test
    void theImplicitWaypointPolicyAllowsTheWaypointsIdentitiesAndItsWorkloadsNameIt() throws Exception {
        stopIndex();
        startIndex(new PilotFeatures.Ambient(true, true, true, false, true));
        String policy = "ns1/istio_allow_waypoint_ns1_waypoint-ns";
        Map<String, String> waypointPod = Map.of("gateway.istio.io/managed", "istio.io-mesh-controller",
                "gateway.networking.k8s.io/gateway-name", "waypoint-ns");
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        addPod("127.0.0.200", "waypoint-ns-pod", "namespace-wide", waypointPod, Map.of(), true, "Running");
        addPod("127.0.0.201", "waypoint2-sa", "waypoint-sa", waypointPod, Map.of(), true, "Running");
        applyWaypointNs();
        await("the implicit policy", () -> env.ambientIndexes().waypointPolicies().containsKey(policy));
        Authorization allow = env.ambientIndexes().waypointPolicies().get(policy);
        assertEquals(Scope.WORKLOAD_SELECTOR, allow.getScope());
        assertEquals(Action.ALLOW, allow.getAction());
        assertEquals(List.of("cluster.local/ns/ns1/sa/namespace-wide", "cluster.local/ns/ns1/sa/waypoint-sa"),
                allow.getGroups(0).getRules(0).getMatches(0).getPrincipalsList().stream().map(StringMatch::getExact).toList());
        await("pod1 names it", () -> lookup(uid("pod1")).stream().anyMatch(a -> a.getWorkload().getAuthorizationPoliciesList()
                .equals(List.of(policy))));
        await("ztunnels are pushed the policy", () -> updates.pushes.contains("ambient-policies " + policy));
    }

    @Test
    void withoutTheSwitchNoImplicitWaypointPolicy() throws Exception {
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        addPod("127.0.0.200", "waypoint-ns-pod", "namespace-wide", Map.of("gateway.istio.io/managed",
                "istio.io-mesh-controller", "gateway.networking.k8s.io/gateway-name", "waypoint-ns"), Map.of(), true, "Running");
        applyWaypointNs();
        await("pod1 bound to the waypoint", () -> lookup(uid("pod1")).stream().anyMatch(a -> a.getWorkload().hasWaypoint()));
        assertEquals(Map.of(), env.ambientIndexes().waypointPolicies());
        assertEquals(List.of(), lookup(uid("pod1")).getFirst().getWorkload().getAuthorizationPoliciesList());
    }

    /**
     * istiod's waypoints.go (gatewayToWaypointTransform, getGatewayAddress): a Gateway deployed
     * by hand (no managed Service) is a waypoint once its status has an address; the Hostname
     * address is preferred, else an IPAddress on the local network, with the HBONE port 15008;
     * its {@code istio.io/waypoint-for} label says what it serves. A Gateway without addresses
     * binds nothing.
     */
    @Test
    void aGatewayWithAStatusAddressIsAWaypointWithoutItsManagedService() throws Exception {
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1, labels: {istio.io/use-waypoint: hand-wp}}
                """);
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        await("pod indexed", () -> !lookup(uid("pod1")).isEmpty());
        ambient.gatewaysChanged(List.of(gateway("hand-wp", "")));
        // the controller's queue is in order: once pod2 is in, the Gateway has been read
        addPod("127.0.0.2", "pod2", "sa1", Map.of("app", "b"), Map.of(), true, "Running");
        await("pod2 indexed", () -> !lookup(uid("pod2")).isEmpty());
        assertFalse(lookup(uid("pod1")).getFirst().getWorkload().hasWaypoint(), "no status address: not ready");

        ambient.gatewaysChanged(List.of(gateway("hand-wp", """
                [{type: IPAddress, value: 10.0.0.9}, {type: Hostname, value: hand-wp.ns1.svc.cluster.local}]""")));
        GatewayAddress byHostname = GatewayAddress.newBuilder().setHboneMtlsPort(15008).setHostname(
                NamespacedHostname.newBuilder().setNamespace("ns1").setHostname("hand-wp.ns1.svc.cluster.local")).build();
        await("pod bound by the hostname address", () -> lookup(uid("pod1")).stream()
                .anyMatch(a -> a.getWorkload().getWaypoint().equals(byHostname)));

        ambient.gatewaysChanged(List.of(gateway("hand-wp", "[{type: IPAddress, value: 10.0.0.9}]")));
        GatewayAddress byIp = GatewayAddress.newBuilder().setHboneMtlsPort(15008).setAddress(NetworkAddress.newBuilder()
                .setNetwork(NETWORK).setAddress(ip("10.0.0.9"))).build();
        await("pod bound by the IP address", () -> lookup(uid("pod1")).stream()
                .anyMatch(a -> a.getWorkload().getWaypoint().equals(byIp)));

        ambient.gatewaysChanged(List.of());
        await("unbound once the Gateway is gone", () -> lookup(uid("pod1")).stream()
                .noneMatch(a -> a.getWorkload().hasWaypoint()));
    }

    /**
     * istiod's setupPolicyTest waypoint: the managed Service of {@code waypoint-ns} (all traffic,
     * 10.0.0.2) and ns1 naming it.
     */
    void applyWaypointNs() {
        addWaypoint("waypoint-ns", "10.0.0.2", "all");
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1, labels: {istio.io/use-waypoint: waypoint-ns}}
                """);
    }

    /** A Gateway {@code name} of class istio-waypoint in ns1 for all traffic, with these status addresses ("" for none). */
    static GatewayApiObject gateway(String name, String addresses) {
        String yaml = """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: %s, namespace: ns1, labels: {istio.io/waypoint-for: all}}
                spec:
                  gatewayClassName: istio-waypoint
                  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
                status: {addresses: %s}
                """.formatted(name, addresses.isEmpty() ? "[]" : addresses);
        return GatewayApiObject.fromJson(JsonParser.parseString(new Gson().toJson((Object) new Yaml().load(yaml))).getAsJsonObject());
    }

    static final GroupVersionKind SERVICE_ENTRY = new GroupVersionKind("networking.istio.io", "v1", "ServiceEntry");
    static final GroupVersionKind WORKLOAD_ENTRY = new GroupVersionKind("networking.istio.io", "v1", "WorkloadEntry");

    /** istiod's addWorkloadEntries: a WorkloadEntry of ns1 at this IP, its labels on metadata and spec. */
    void addWorkloadEntry(String ip, String name, Map<String, String> labels) {
        store.create(Config.of(WORKLOAD_ENTRY, NS, name, WorkloadEntry.newBuilder().setAddress(ip).setServiceAccount("sa1")
                .putAllLabels(labels).build()).withLabels(labels));
    }

    /**
     * istiod's addServiceEntry: one host and its addresses, port http 80 -> 8080; with endpoint
     * addresses inline endpoints (their http port 8081), else a workload selector of the labels.
     * Resolution STATIC: istiod's test leaves NONE, which validation refuses with endpoints.
     */
    void addServiceEntry(String host, String address, String name, String ns, Map<String, String> labels,
                         List<String> endpoints) {
        ServiceEntry.Builder se = ServiceEntry.newBuilder().addHosts(host).addAddresses(address)
                .addPorts(ServicePort.newBuilder().setName("http").setNumber(80).setTargetPort(8080))
                .setResolution(ServiceEntry.Resolution.STATIC);
        if (endpoints == null) {
            se.getWorkloadSelectorBuilder().putAllLabels(labels);
        } else {
            endpoints.forEach(ip -> se.addEndpoints(WorkloadEntry.newBuilder().setAddress(ip).putAllLabels(labels)
                    .putPorts("http", 8081)));
        }
        store.create(Config.of(SERVICE_ENTRY, ns, name, se.build()).withLabels(labels));
    }

    static String entryUid(String name) {
        return CLUSTER + "/networking.istio.io/WorkloadEntry/" + NS + "/" + name;
    }

    static Workload.Builder expectedEntry(String name, String ipText) {
        return Workload.newBuilder().setUid(entryUid(name)).setName(name).setNamespace(NS).addAddresses(ip(ipText))
                .setNetwork(NETWORK).setCanonicalName("a").setCanonicalRevision("latest").setServiceAccount("sa1")
                .setWorkloadType(WorkloadType.POD).setWorkloadName(name).setClusterId(CLUSTER)
                .setStatus(WorkloadStatus.HEALTHY);
    }

    static PortList port80(int target) {
        return PortList.newBuilder().addPorts(Port.newBuilder().setServicePort(80).setTargetPort(target)).build();
    }

    /**
     * istiod's TestAmbientIndex_ServiceEntry (ambientindex_serviceentry_test.go): inline endpoints
     * come and go with their entry; a WorkloadEntry and a pod share an address; a ServiceEntry
     * selects neither across namespaces, and in theirs reports exactly the workloads it selects.
     */
    @Test
    void serviceEntriesAndWorkloadEntries() throws Exception {
        String seUid = CLUSTER + "/networking.istio.io/ServiceEntry/ns1/name1/127.0.0.1";
        addServiceEntry("se.istio.io", "240.240.23.45", "name1", NS, Map.of(), List.of("127.0.0.1"));
        assertEvent(seUid, "ns1/se.istio.io");
        assertEquals(List.of(Address.newBuilder().setWorkload(Workload.newBuilder().setUid(seUid).setName("name1")
                .setNamespace(NS).addAddresses(ip("127.0.0.1")).setNetwork(NETWORK).setCanonicalName("name1")
                .setCanonicalRevision("latest").setWorkloadType(WorkloadType.POD).setWorkloadName("name1")
                .setClusterId(CLUSTER).setStatus(WorkloadStatus.HEALTHY)
                .putServices("ns1/se.istio.io", port80(8081))).build()), lookup(NETWORK + "/127.0.0.1"),
                "the inline endpoint's http port overrides the entry's target port");
        assertTrue(lookup("ns1/se.istio.io").getFirst().getService().getCanonical(), "the only service of its hostname");

        store.delete("ServiceEntry", NS, "name1", null);
        assertEvent(seUid, "ns1/se.istio.io");
        assertEquals(List.of(), lookup(NETWORK + "/127.0.0.1"));

        addWorkloadEntry("140.140.0.10", "name0", Map.of("app", "a"));
        assertEvent(entryUid("name0"));
        Address name0 = Address.newBuilder().setWorkload(expectedEntry("name0", "140.140.0.10")).build();
        assertEquals(List.of(name0), lookup(NETWORK + "/140.140.0.10"));

        addPod("140.140.0.10", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        assertEvent(uid("pod1"));
        assertEquals(2, lookup(NETWORK + "/140.140.0.10").size(), "the pod and the entry at one address");
        addPod("140.140.0.11", "pod2", "sa1", Map.of("app", "other"), Map.of(), true, "Running");
        assertEvent(uid("pod2"));
        addWorkloadEntry("240.240.34.56", "name1", Map.of("app", "a"));
        assertEvent(entryUid("name1"));
        addWorkloadEntry("240.240.34.57", "name2", Map.of("app", "other"));
        assertEvent(entryUid("name2"));

        // a ServiceEntry does not select across namespaces
        addServiceEntry("mismatched.istio.io", "240.240.23.45", "name1", "mismatched-ns", Map.of("app", "a"), null);
        assertEvent("mismatched-ns/mismatched.istio.io");

        addServiceEntry("se.istio.io", "240.240.23.45", "name1", NS, Map.of("app", "a"), null);
        // the workloads it selects, not pod2 or name2
        assertEvent(uid("pod1"), entryUid("name0"), entryUid("name1"), "ns1/se.istio.io");
        assertEquals(Map.of("ns1/se.istio.io", port80(8080)),
                lookup(entryUid("name0")).getFirst().getWorkload().getServicesMap());
        assertEquals(Map.of("ns1/se.istio.io", port80(8080)),
                lookup(uid("pod1")).getFirst().getWorkload().getServicesMap());
        assertEquals(Set.of("ns1/se.istio.io", entryUid("name0"), entryUid("name1"), uid("pod1")),
                ambient.index().lookup("ns1/se.istio.io").stream().map(AddressInfo::resourceName)
                        .collect(Collectors.toSet()), "the service and the workloads it selects");

        store.delete("WorkloadEntry", NS, "name1", null);
        assertEvent(entryUid("name1"));
    }

    /**
     * istiod's selectWorkloadServices: in a namespace a Kubernetes Service holds its hostname
     * over a ServiceEntry of the same hostname, which takes over when the Service goes.
     */
    @Test
    void aServiceHoldsItsHostnameOverAServiceEntry() throws Exception {
        String host = "svc1.ns1.svc.cluster.local";
        addServiceEntry(host, "240.240.0.9", "entry", NS, Map.of(), List.of("10.9.0.1"));
        String inline = CLUSTER + "/networking.istio.io/ServiceEntry/ns1/entry/10.9.0.1";
        assertEvent(inline, NS + "/" + host);
        api.apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: svc1, namespace: ns1}
                spec: {clusterIP: 10.0.0.1, ports: [{name: http, port: 80}]}
                """);
        // the Service replaces the entry's service; the entry, left with no service, sends no endpoint
        assertEvent(inline, NS + "/" + host);
        assertEquals(ip("10.0.0.1"), lookup(NS + "/" + host).getFirst().getService().getAddresses(0).getAddress());
        assertEquals(List.of(), lookup(inline));

        api.delete("apiVersion: v1\nkind: Service\nmetadata: {name: svc1, namespace: ns1}\n");
        assertEvent(inline, NS + "/" + host);
        assertEquals(ip("240.240.0.9"), lookup(NS + "/" + host).getFirst().getService().getAddresses(0).getAddress());
    }

    /** A waypoint {@code name} of ns1 as the deployment controller makes its Service, serving {@code trafficType}. */
    void addWaypoint(String name, String vip, String trafficType) {
        api.apply("""
                apiVersion: v1
                kind: Service
                metadata:
                  name: %1$s
                  namespace: ns1
                  labels: {gateway.networking.k8s.io/gateway-name: %1$s, gateway.istio.io/managed: istio.io-mesh-controller,
                           istio.io/waypoint-for: %3$s}
                spec:
                  clusterIP: %2$s
                  ports: [{name: mesh, port: 15008, appProtocol: hbone}]
                  selector: {gateway.networking.k8s.io/gateway-name: %1$s}
                """.formatted(name, vip, trafficType));
    }

    Workload workload(String name) {
        return lookup(uid(name)).getFirst().getWorkload();
    }

    Service service(String name) {
        return lookup(NS + "/" + name + ".ns1.svc.cluster.local").stream().filter(Address::hasService)
                .findFirst().orElseThrow().getService();
    }

    /**
     * istiod's TestAmbientIndex_WaypointForWorkloadTraffic: a pod and a service both labelled
     * {@code istio.io/use-waypoint: test-wp}; the pod takes the waypoint only when it is for
     * workload or all traffic, the service only when it is for service or all traffic.
     */
    @ParameterizedTest
    @CsvSource({"service, false, true", "all, true, true", "workload, true, false", "none, false, false"})
    void aWaypointServesTheKindsOfTrafficItsWaypointForNames(String trafficType, boolean pod, boolean service)
            throws Exception {
        addWaypoint("test-wp", "10.0.0.10", trafficType);
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a", "istio.io/use-waypoint", "test-wp"), Map.of(), true,
                "Running");
        api.apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: svc1, namespace: ns1, labels: {istio.io/use-waypoint: test-wp}}
                spec:
                  clusterIP: 10.0.0.1
                  ports: [{name: http, port: 80}]
                  selector: {app: a}
                """);
        await("pod and service indexed", () -> !lookup(uid("pod1")).isEmpty()
                && workload("pod1").getServicesMap().containsKey(NS + "/svc1.ns1.svc.cluster.local"));
        assertEquals(pod, workload("pod1").hasWaypoint(), workload("pod1").toString());
        assertEquals(service, service("svc1").hasWaypoint(), service("svc1").toString());
    }

    /**
     * istiod's WorkloadsForWaypoint (ByOwningWaypointHostname) and the WaypointsUpdated of
     * PushXdsAddress: a pod moved from one workload waypoint to another is listed under the new
     * one only, and the update names both, so the old waypoint's listeners drop the pod too.
     */
    @Test
    void aPodMovedBetweenWaypointsIsListedUnderTheNewOneAndItsUpdateNamesBoth() throws Exception {
        String a = NS + "/wp-a.ns1.svc.cluster.local";
        String b = NS + "/wp-b.ns1.svc.cluster.local";
        addWaypoint("wp-a", "10.0.0.2", "workload");
        addWaypoint("wp-b", "10.0.0.3", "workload");
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a", "istio.io/use-waypoint", "wp-a"), Map.of(), true,
                "Running");
        await("pod1 bound to wp-a", () -> ambient.index().workloadsForWaypoint(a).size() == 1
                && updates.waypointsChanged.contains(a));
        updates.waypointsChanged.clear();

        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a", "istio.io/use-waypoint", "wp-b"), Map.of(), true,
                "Running");
        await("pod1 moved to wp-b", () -> !ambient.index().workloadsForWaypoint(b).isEmpty()
                && updates.waypointsChanged.size() == 2);
        assertEquals(List.of(uid("pod1")), ambient.index().workloadsForWaypoint(b).stream()
                .map(AddressInfo::resourceName).toList());
        assertEquals(List.of(), ambient.index().workloadsForWaypoint(a));
        assertEquals(Set.of(a, b), Set.copyOf(updates.waypointsChanged));
    }

    /**
     * istiod's TestAmbientIndex_WaypointAddressAddedToWorkloads and fetchWaypointForInstance:
     * with the namespace on an all-traffic waypoint, its pods use it, but the waypoint's own pod
     * (an instance: its gateway-name label names the waypoint) has none; a pod's own label wins
     * over the namespace's ("none" opts out, a waypoint that is not ready binds nothing).
     */
    @Test
    void waypointsDoNotHaveWaypointsAndAPodsOwnLabelWins() throws Exception {
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: ns1, labels: {istio.io/use-waypoint: waypoint-ns}}
                """);
        addWaypoint("waypoint-ns", "10.0.0.2", "all");
        addWaypoint("waypoint-sa2", "10.0.0.3", "all");
        addPod("127.0.0.1", "pod1", "sa1", Map.of("app", "a"), Map.of(), true, "Running");
        addPod("127.0.0.4", "pod4", "sa2", Map.of("app", "b", "istio.io/use-waypoint", "waypoint-sa2"), Map.of(), true,
                "Running");
        addPod("127.0.0.5", "pod5", "sa1", Map.of("app", "c", "istio.io/use-waypoint", "none"), Map.of(), true,
                "Running");
        addPod("127.0.0.6", "pod6", "sa1", Map.of("app", "d", "istio.io/use-waypoint", "not-ready"), Map.of(), true,
                "Running");
        addPod("127.0.0.200", "waypoint-ns-pod", "namespace-wide", Map.of(
                "gateway.istio.io/managed", "istio.io-mesh-controller",
                "gateway.networking.k8s.io/gateway-name", "waypoint-ns"), Map.of(), true, "Running");
        await("pods indexed", () -> Stream.of("pod1", "pod4", "pod5", "pod6", "waypoint-ns-pod")
                .noneMatch(p -> lookup(uid(p)).isEmpty()) && workload("pod1").hasWaypoint());
        assertEquals("waypoint-ns.ns1.svc.cluster.local", workload("pod1").getWaypoint().getHostname().getHostname());
        assertEquals("waypoint-sa2.ns1.svc.cluster.local", workload("pod4").getWaypoint().getHostname().getHostname());
        assertFalse(workload("pod5").hasWaypoint(), "none opts out of the namespace's waypoint");
        assertFalse(workload("pod6").hasWaypoint(), "a waypoint that is not ready binds nothing");
        assertFalse(workload("waypoint-ns-pod").hasWaypoint(), "waypoints do not have waypoints");
    }
}
