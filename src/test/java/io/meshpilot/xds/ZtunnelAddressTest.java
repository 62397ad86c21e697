package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.AppProtocol;
import io.meshpilot.api.workload.IPFamilies;
import io.meshpilot.api.workload.Locality;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.TunnelProtocol;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, acceptance 1: a ztunnel-like client (grpc-java delta ADS, ztunnel's node id and
 * NODE_NAME, our copies of the workload API protos) against a whole MeshPilot in Kubernetes mode
 * with PILOT_ENABLE_AMBIENT, over the API server stand-in, objects applied with kubectl. It gets
 * every pod and the Service as istiod's ambient index builds them (pilot/pkg/serviceregistry/ambient
 * workloads.go podWorkloadBuilder, services.go constructService), an added pod as a delta of that
 * workload alone, a deleted pod in {@code removed_resources}, and on demand what it names.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the on-demand case changes a pod the wildcard one expects as created
class ZtunnelAddressTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String CLUSTER = "Kubernetes";
    static final String ECHO_KEY = "ambient/echo.ambient.svc.cluster.local";

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: ambient, labels: {istio.io/dataplane-mode: ambient}}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: legacy}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: hidden, labels: {istio-discovery: disabled}}
                ---
                apiVersion: v1
                kind: Node
                metadata:
                  name: node1
                  labels: {topology.kubernetes.io/region: region1, topology.kubernetes.io/zone: zone1}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: echo, namespace: ambient}
                spec:
                  clusterIP: 10.96.0.10
                  clusterIPs: [10.96.0.10]
                  ipFamilies: [IPv4]
                  selector: {app: echo}
                  ports:
                  - {name: http, port: 80, targetPort: http}
                  - {name: tcp, port: 9000, targetPort: 9000}
                ---
                """, "apply", "-f", "-").ok();
        startPod("ambient", "echo-1", "10.1.0.1");
        startPod("ambient", "echo-2", "10.1.0.2");
        startPod("legacy", "old-1", "10.2.0.1");
        startPod("hidden", "secret-1", "10.3.0.1");
        // the mesh leaves the namespaces labelled istio-discovery=disabled out (discoverySelectors)
        Files.writeString(dir.resolve("mesh"), """
                discoverySelectors:
                - matchExpressions:
                  - {key: istio-discovery, operator: NotIn, values: [disabled]}
                """);
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, dir.resolve("kubeconfig")),
                Map.of("PILOT_ENABLE_AMBIENT", "true")));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    /**
     * A pod on node1 serving port "http" on 8080, made ready and given its IP through the status
     * subresource as the kubelet does (a create's status is dropped); in the ambient namespace it
     * carries the redirection annotation istio-cni writes on the pods it captures for ztunnel.
     */
    static void startPod(String ns, String name, String ip) {
        String captured = ns.equals("ambient") ? "annotations: {ambient.istio.io/redirection: enabled}" : "";
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %2$s
                  namespace: %1$s
                  labels: {app: echo, version: v1}
                  %3$s
                spec:
                  nodeName: node1
                  serviceAccountName: echo
                  containers: [{name: app, image: app, ports: [{name: http, containerPort: 8080}]}]
                """.formatted(ns, name, captured), "apply", "-f", "-").ok();
        kubectl.run("patch", "pod", "-n", ns, name, "--subresource=status", "--type=merge", "-p", """
                {"status": {"phase": "Running", "podIP": "%1$s", "podIPs": [{"ip": "%1$s"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}}""".formatted(ip)).ok();
    }

    static DeltaAdsClient ztunnel(String node) {
        return ztunnel(server.ports().get("grpc"), node);
    }

    /** A ztunnel's delta ADS client on the server's plaintext xDS {@code port}; {@code node} "" leaves NODE_NAME out. */
    static DeltaAdsClient ztunnel(int port, String node) {
        Struct.Builder md = Struct.newBuilder()
                .putFields("NAMESPACE", Value.newBuilder().setStringValue("istio-system").build())
                .putFields("NAME", Value.newBuilder().setStringValue("ztunnel-x").build())
                .putFields("INSTANCE_IPS", Value.newBuilder().setStringValue("10.0.0.5").build());
        if (!node.isEmpty()) {
            md.putFields("NODE_NAME", Value.newBuilder().setStringValue(node).build());
        }
        return new DeltaAdsClient(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .build(), Node.newBuilder().setId("ztunnel~10.0.0.5~ztunnel-x.istio-system~istio-system.svc.cluster.local")
                .setMetadata(md).build());
    }

    static String uid(String ns, String name) {
        return CLUSTER + "//Pod/" + ns + "/" + name;
    }

    static ByteString ip(int a, int b, int c, int d) {
        return ByteString.copyFrom(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
    }

    /** What istiod sends for a pod of {@link #pod} selected by nothing. */
    static Workload.Builder expectedPod(String ns, String name, ByteString address) {
        return Workload.newBuilder()
                .setUid(uid(ns, name)).setName(name).setNamespace(ns).addAddresses(address)
                .setServiceAccount("echo").setNode("node1").setClusterId(CLUSTER)
                .setCanonicalName("echo").setCanonicalRevision("v1")
                .setWorkloadType(WorkloadType.POD).setWorkloadName(name)
                .setStatus(WorkloadStatus.HEALTHY)
                .setLocality(Locality.newBuilder().setRegion("region1").setZone("zone1"));
    }

    /** An echo pod: captured (HBONE) and in the Service, its named target port resolved to 8080. */
    static Workload expectedEcho(String name, ByteString address) {
        return expectedPod("ambient", name, address).setTunnelProtocol(TunnelProtocol.HBONE)
                .putServices(ECHO_KEY, PortList.newBuilder()
                        .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(8080))
                        .addPorts(Port.newBuilder().setServicePort(9000).setTargetPort(9000)).build())
                .build();
    }

    static final Service ECHO_SERVICE = Service.newBuilder()
            .setName("echo").setNamespace("ambient").setHostname("echo.ambient.svc.cluster.local")
            .addAddresses(NetworkAddress.newBuilder().setAddress(ip(10, 96, 0, 10)))
            .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(0).setAppProtocol(AppProtocol.HTTP11))
            .addPorts(Port.newBuilder().setServicePort(9000).setTargetPort(9000).setAppProtocol(AppProtocol.TCP))
            .setIpFamilies(IPFamilies.IPV4_ONLY)
            .setCanonical(true)
            .build();

    static Map<String, Address> byName(DeltaDiscoveryResponse r) throws InvalidProtocolBufferException {
        Map<String, Address> out = new TreeMap<>();
        for (Resource res : r.getResourcesList()) {
            out.put(res.getName(), res.getResource().unpack(Address.class));
        }
        return out;
    }

    static DeltaDiscoveryResponse next(DeltaAdsClient client) throws InterruptedException {
        DeltaDiscoveryResponse r = client.next(WAIT);
        assertNotNull(r, "no Address response");
        assertEquals(TypeUrls.ADDRESS, r.getTypeUrl());
        client.ack(r);
        return r;
    }

    static Address workload(Workload w) {
        return Address.newBuilder().setWorkload(w).build();
    }

    @Test
    @Order(1)
    void wildcardGetsEveryPodAndServiceThenOnlyWhatChanges() throws Exception {
        try (DeltaAdsClient client = ztunnel("")) {
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            DeltaDiscoveryResponse first = next(client);
            Map<String, Address> got = byName(first);
            assertEquals(Map.of(
                    uid("ambient", "echo-1"), workload(expectedEcho("echo-1", ip(10, 1, 0, 1))),
                    uid("ambient", "echo-2"), workload(expectedEcho("echo-2", ip(10, 1, 0, 2))),
                    // not enrolled: sent as istiod sends it (ztunnel must know it is no HBONE peer)
                    uid("legacy", "old-1"), workload(expectedPod("legacy", "old-1", ip(10, 2, 0, 1)).build()),
                    ECHO_KEY, Address.newBuilder().setService(ECHO_SERVICE).build()), got);
            assertEquals(List.of(), first.getRemovedResourcesList());
            // the index's start-up build may still be pushed: the addresses it names are sent again
            // (pushes do not look at what the client holds), with nothing new in them
            for (DeltaDiscoveryResponse r; (r = client.next(Duration.ofMillis(1500))) != null; client.ack(r)) {
                assertTrue(got.entrySet().containsAll(byName(r).entrySet()), "only a repeat of the first answer: "
                        + byName(r).keySet());
            }

            startPod("ambient", "echo-3", "10.1.0.3"); // no IP, no workload: the status patch adds it
            DeltaDiscoveryResponse added = next(client);
            assertEquals(Map.of(uid("ambient", "echo-3"), workload(expectedEcho("echo-3", ip(10, 1, 0, 3)))),
                    byName(added), "a pod added is a delta of that workload alone");

            kubectl.run("delete", "pod", "-n", "ambient", "echo-3").ok();
            DeltaDiscoveryResponse removed = next(client);
            assertEquals(List.of(), removed.getResourcesList());
            assertEquals(List.of(uid("ambient", "echo-3")), removed.getRemovedResourcesList());
        }
    }

    @Test
    @Order(2)
    void reconnectSendsOnlyWhatTheClientDoesNotHold() throws Exception {
        Map<String, String> held = new TreeMap<>();
        try (DeltaAdsClient client = ztunnel("")) {
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            next(client).getResourcesList().forEach(r -> held.put(r.getName(), r.getVersion()));
        }
        String gone = uid("ambient", "deleted-while-away");
        try (DeltaAdsClient client = ztunnel("")) {
            // istiod's appendAddress: what the client reports holding at the current version is not sent again
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS)
                    .putInitialResourceVersions(uid("ambient", "echo-1"), held.get(uid("ambient", "echo-1")))
                    .putInitialResourceVersions(uid("ambient", "echo-2"), "stale")
                    .putInitialResourceVersions(gone, "1"));
            DeltaDiscoveryResponse again = next(client);
            List<String> sent = again.getResourcesList().stream().map(Resource::getName).toList();
            assertTrue(!sent.contains(uid("ambient", "echo-1")) && sent.contains(uid("ambient", "echo-2")),
                    "held at its version: not sent; at another: sent " + sent);
            assertEquals(List.of(gone), again.getRemovedResourcesList());
        }
    }

    @Test
    @Order(3)
    void onDemandAnswersWhatIsNamedAndGrowsBySentWorkloads() throws Exception {
        try (DeltaAdsClient client = ztunnel("")) {
            // ztunnel's on-demand start: subscribe and unsubscribe "*", i.e. to nothing
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS)
                    .addResourceNamesSubscribe("*").addResourceNamesUnsubscribe("*"));
            DeltaDiscoveryResponse empty = next(client);
            assertEquals(0, empty.getResourcesCount());

            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS)
                    .addResourceNamesSubscribe("/10.96.0.10").addResourceNamesSubscribe("/10.9.9.9"));
            DeltaDiscoveryResponse byVip = next(client);
            assertEquals(List.of(uid("ambient", "echo-1"), uid("ambient", "echo-2"), ECHO_KEY),
                    byVip.getResourcesList().stream().map(Resource::getName).sorted().toList(),
                    "a VIP resolves to its service and the service's workloads");
            Map<String, List<String>> aliases = byVip.getResourcesList().stream()
                    .collect(Collectors.toMap(Resource::getName, Resource::getAliasesList));
            assertEquals(List.of("/10.96.0.10"), aliases.get(ECHO_KEY));
            assertEquals(List.of("/10.1.0.1"), aliases.get(uid("ambient", "echo-1")));
            assertEquals(List.of("/10.9.9.9"), byVip.getRemovedResourcesList(), "a name that resolves to nothing");

            // the pods sent joined the subscription: a change of one is pushed
            kubectl.run("label", "pod", "-n", "ambient", "echo-1", "version=v2", "--overwrite").ok();
            DeltaDiscoveryResponse changed = next(client);
            Map<String, Address> got = byName(changed);
            assertEquals(List.of(uid("ambient", "echo-1")), List.copyOf(got.keySet()));
            assertEquals("v2", got.get(uid("ambient", "echo-1")).getWorkload().getCanonicalRevision());
        }
    }

    @Test
    void onDemandWithNodeNameGetsTheNodesWorkloads() throws Exception {
        try (DeltaAdsClient client = ztunnel("node1")) {
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS)
                    .addResourceNamesSubscribe("*").addResourceNamesUnsubscribe("*"));
            DeltaDiscoveryResponse first = next(client);
            assertTrue(first.getResourcesList().stream().map(Resource::getName).toList()
                            .containsAll(List.of(uid("ambient", "echo-1"), uid("ambient", "echo-2"), uid("legacy", "old-1"))),
                    "istiod sends an on-demand ztunnel every workload on its node: " + first.getResourcesList().stream()
                            .map(Resource::getName).toList());
        }
    }

    static final String VM_UID = CLUSTER + "/networking.istio.io/WorkloadEntry/vms/vm-1";
    static final String DB_UID = CLUSTER + "/networking.istio.io/ServiceEntry/vms/db/10.5.0.1";
    static final String VM_SERVICE = "vms/vm.example.com";
    static final String DB_SERVICE = "vms/db.example.com";

    static final Workload VM = Workload.newBuilder()
            .setUid(VM_UID).setName("vm-1").setNamespace("vms").setClusterId(CLUSTER)
            .addAddresses(ip(10, 4, 0, 1)).setServiceAccount("vm-sa")
            .setCanonicalName("vm").setCanonicalRevision("latest")
            .setWorkloadName("vm-1").setWorkloadType(WorkloadType.POD).setStatus(WorkloadStatus.HEALTHY)
            .setLocality(Locality.newBuilder().setRegion("region1").setZone("zone1"))
            // the ServiceEntry's port 80 targets 8080; the entry's own "http" port overrides it
            .putServices(VM_SERVICE, PortList.newBuilder()
                    .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(9090)).build())
            .build();

    static final Service VM_SE = Service.newBuilder()
            .setName("vm-svc").setNamespace("vms").setHostname("vm.example.com")
            .addAddresses(NetworkAddress.newBuilder().setAddress(ip(10, 200, 0, 10)))
            .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(8080).setAppProtocol(AppProtocol.HTTP11))
            .setCanonical(true)
            .build();

    static final Workload DB = Workload.newBuilder()
            .setUid(DB_UID).setName("db").setNamespace("vms").setClusterId(CLUSTER)
            .addAddresses(ip(10, 5, 0, 1))
            .setCanonicalName("db").setCanonicalRevision("latest")
            .setWorkloadName("db").setWorkloadType(WorkloadType.POD).setStatus(WorkloadStatus.HEALTHY)
            .putServices(DB_SERVICE, PortList.newBuilder()
                    .addPorts(Port.newBuilder().setServicePort(5432).setTargetPort(5432)).build())
            .build();

    static final Service DB_SE = Service.newBuilder()
            .setName("db").setNamespace("vms").setHostname("db.example.com")
            .addPorts(Port.newBuilder().setServicePort(5432).setTargetPort(5432).setAppProtocol(AppProtocol.TCP))
            .setCanonical(true)
            .build();

    static Address serviceAddress(Service s) {
        return Address.newBuilder().setService(s).build();
    }

    /**
     * WorkloadEntries and ServiceEntries (issue 35 point 1): a WorkloadEntry and the ServiceEntry
     * selecting it, and a ServiceEntry's inline endpoint, applied with kubectl, as istiod's ambient
     * index builds them (workloads.go workloadEntryWorkloadBuilder and serviceEntryWorkloadBuilder,
     * services.go constructServiceEntries); a later change of the WorkloadEntry is a delta of that
     * workload alone, the entry's deletion a removal of its endpoint and service.
     */
    @Test
    @Order(4)
    void entriesArriveAsWorkloadsAndServicesAndAChangeAsADelta() throws Exception {
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: vms, labels: {istio.io/dataplane-mode: ambient}}
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: vm-svc, namespace: vms}
                spec:
                  hosts: [vm.example.com]
                  addresses: [10.200.0.10]
                  ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}]
                  resolution: STATIC
                  workloadSelector: {labels: {app: vm}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: vm-1, namespace: vms, labels: {app: vm}}
                spec:
                  address: 10.4.0.1
                  serviceAccount: vm-sa
                  locality: region1/zone1
                  ports: {http: 9090}
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: db, namespace: vms}
                spec:
                  hosts: [db.example.com]
                  ports: [{number: 5432, name: tcp, protocol: TCP}]
                  resolution: STATIC
                  endpoints: [{address: 10.5.0.1}]
                """, "apply", "-f", "-").ok();
        Map<String, Address> expected = Map.of(VM_UID, workload(VM), VM_SERVICE, serviceAddress(VM_SE),
                DB_UID, workload(DB), DB_SERVICE, serviceAddress(DB_SE));
        try (DeltaAdsClient client = ztunnel("")) {
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            Map<String, Address> held = new TreeMap<>(byName(next(client)));
            // the entries may reach the index after the first answer: what follows adds to it
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!held.keySet().containsAll(expected.keySet()) && System.nanoTime() < deadline) {
                DeltaDiscoveryResponse r = client.next(Duration.ofSeconds(5));
                if (r != null) {
                    client.ack(r);
                    held.putAll(byName(r));
                }
            }
            assertEquals(expected, held.entrySet().stream().filter(e -> expected.containsKey(e.getKey()))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
            for (DeltaDiscoveryResponse r; (r = client.next(Duration.ofMillis(1500))) != null; client.ack(r)) {
                assertTrue(held.entrySet().containsAll(byName(r).entrySet()),
                        "only a repeat of what was sent: " + byName(r).keySet());
            }

            kubectl.run("patch", "workloadentry", "-n", "vms", "vm-1", "--type=merge", "-p",
                    "{\"spec\": {\"weight\": 5}}").ok();
            DeltaDiscoveryResponse changed = next(client);
            assertEquals(Map.of(VM_UID, workload(VM.toBuilder().setCapacity(UInt32Value.of(5)).build())),
                    byName(changed), "a WorkloadEntry changed is a delta of that workload alone");

            kubectl.run("delete", "serviceentry", "-n", "vms", "db").ok();
            DeltaDiscoveryResponse removed = next(client);
            assertEquals(List.of(DB_UID, DB_SERVICE), removed.getRemovedResourcesList().stream().sorted().toList());
        }
    }
}
