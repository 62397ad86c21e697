package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.AppProtocol;
import io.meshpilot.api.workload.Locality;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 point 1 for WorkloadEntries and ServiceEntries: a ztunnel-like delta ADS client
 * against a whole MeshPilot (Kubernetes mode, PILOT_ENABLE_AMBIENT) gets a WorkloadEntry and the
 * ServiceEntry selecting it, and a ServiceEntry's inline endpoint, applied with kubectl, as
 * istiod's ambient index builds them (workloads.go workloadEntryWorkloadBuilder and
 * serviceEntryWorkloadBuilder, services.go constructServiceEntries); a later change of the
 * WorkloadEntry arrives as a delta of that workload alone.
 */
class ZtunnelEntryAddressTest {
    static final String CLUSTER = ZtunnelAddressTest.CLUSTER;
    static final String VM_UID = CLUSTER + "/networking.istio.io/WorkloadEntry/vms/vm-1";
    static final String DB_UID = CLUSTER + "/networking.istio.io/ServiceEntry/vms/db/10.5.0.1";
    static final String VM_SERVICE = "vms/vm.example.com";
    static final String DB_SERVICE = "vms/db.example.com";

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = new Kubectl(Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH")),
                api.writeKubeconfig(dir), dir.resolve("kubectl"));
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: vms, labels: {istio.io/dataplane-mode: ambient}}
                """, "apply", "-f", "-").ok();
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

    static final Workload VM = Workload.newBuilder()
            .setUid(VM_UID).setName("vm-1").setNamespace("vms").setClusterId(CLUSTER)
            .addAddresses(ZtunnelAddressTest.ip(10, 4, 0, 1)).setServiceAccount("vm-sa")
            .setCanonicalName("vm").setCanonicalRevision("latest")
            .setWorkloadName("vm-1").setWorkloadType(WorkloadType.POD).setStatus(WorkloadStatus.HEALTHY)
            .setLocality(Locality.newBuilder().setRegion("region1").setZone("zone1"))
            // the ServiceEntry's port 80 targets 8080; the entry's own "http" port overrides it
            .putServices(VM_SERVICE, PortList.newBuilder()
                    .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(9090)).build())
            .build();

    static final Service VM_SE = Service.newBuilder()
            .setName("vm-svc").setNamespace("vms").setHostname("vm.example.com")
            .addAddresses(NetworkAddress.newBuilder().setAddress(ZtunnelAddressTest.ip(10, 200, 0, 10)))
            .addPorts(Port.newBuilder().setServicePort(80).setTargetPort(8080).setAppProtocol(AppProtocol.HTTP11))
            .setCanonical(true)
            .build();

    static final Workload DB = Workload.newBuilder()
            .setUid(DB_UID).setName("db").setNamespace("vms").setClusterId(CLUSTER)
            .addAddresses(ZtunnelAddressTest.ip(10, 5, 0, 1))
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

    static Address workload(Workload w) {
        return Address.newBuilder().setWorkload(w).build();
    }

    static Address service(Service s) {
        return Address.newBuilder().setService(s).build();
    }

    @Test
    void entriesArriveAsWorkloadsAndServicesAndAChangeAsADelta() throws Exception {
        kubectl.runWithInput("""
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
        Map<String, Address> expected = Map.of(VM_UID, workload(VM), VM_SERVICE, service(VM_SE),
                DB_UID, workload(DB), DB_SERVICE, service(DB_SE));
        try (DeltaAdsClient client = ZtunnelAddressTest.ztunnel(server, "")) {
            client.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            Map<String, Address> held = new TreeMap<>(ZtunnelAddressTest.byName(ZtunnelAddressTest.next(client)));
            // the entries may reach the index after the first answer: what follows adds to it
            long deadline = System.nanoTime() + ZtunnelAddressTest.WAIT.toNanos();
            while (!held.keySet().containsAll(expected.keySet()) && System.nanoTime() < deadline) {
                DeltaDiscoveryResponse r = client.next(Duration.ofSeconds(5));
                if (r != null) {
                    client.ack(r);
                    held.putAll(ZtunnelAddressTest.byName(r));
                }
            }
            assertEquals(expected, held);
            for (DeltaDiscoveryResponse r; (r = client.next(Duration.ofMillis(1500))) != null; client.ack(r)) {
                assertTrue(held.entrySet().containsAll(ZtunnelAddressTest.byName(r).entrySet()),
                        "only a repeat of what was sent: " + ZtunnelAddressTest.byName(r).keySet());
            }

            kubectl.run("patch", "workloadentry", "-n", "vms", "vm-1", "--type=merge", "-p",
                    "{\"spec\": {\"weight\": 5}}").ok();
            DeltaDiscoveryResponse changed = ZtunnelAddressTest.next(client);
            assertEquals(Map.of(VM_UID, workload(VM.toBuilder().setCapacity(
                            UInt32Value.of(5)).build())),
                    ZtunnelAddressTest.byName(changed), "a WorkloadEntry changed is a delta of that workload alone");

            kubectl.run("delete", "serviceentry", "-n", "vms", "db").ok();
            DeltaDiscoveryResponse removed = ZtunnelAddressTest.next(client);
            assertEquals(List.of(DB_UID, DB_SERVICE), removed.getRemovedResourcesList().stream().sorted().toList());
        }
    }
}
