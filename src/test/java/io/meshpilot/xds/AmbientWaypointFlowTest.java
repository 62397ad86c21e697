package io.meshpilot.xds;

import static io.meshpilot.xds.KubeWaypointProxyTest.awaitResources;
import static io.meshpilot.xds.KubeWaypointProxyTest.chain;
import static io.meshpilot.xds.KubeWaypointProxyTest.routes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.TunnelProtocol;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.ProxyAgentNode;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.bootstrap.MeshPilotServer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35: one request's path through ambient mode, link by link, as ztunnel and the waypoint
 * each learn it from the same MeshPilot server. The namespace {@code shop} is enrolled
 * ({@code istio.io/dataplane-mode: ambient}) and names the waypoint {@code waypoint}
 * ({@code istio.io/use-waypoint}); a client of Service {@code reviews} (VIP 10.96.0.10:9080, one
 * captured pod) is followed:
 * <ol>
 *   <li>ztunnel finds the VIP's Service, and in it the waypoint by hostname with the HBONE port
 *       (its Address type);</li>
 *   <li>ztunnel resolves that hostname to the waypoint's own Service (made by the deployment
 *       controller from the {@code waypoint} template) and its pod, which ztunnel does not capture,
 *       so it is dialled directly on 15008;</li>
 *   <li>the waypoint's Envoy, the pod of that Deployment, terminates HBONE on 15008 and selects
 *       the reviews chain by the VIP:port the CONNECT names (its LDS);</li>
 *   <li>that chain's cluster reaches reviews' pod over HBONE again (its CDS and EDS), to the
 *       address ztunnel holds for the pod.</li>
 * </ol>
 * Each link is checked against the one before it, so a disagreement between the two views (a
 * hostname ztunnel cannot resolve, a port the waypoint does not listen on, a VIP without a chain)
 * fails here even where each view alone matches istiod.
 */
class AmbientWaypointFlowTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String NS = "shop";
    static final String REVIEWS_VIP = "10.96.0.10";
    static final String REVIEWS_POD_IP = "10.0.1.10";
    static final String WAYPOINT_POD_IP = WaypointGatewayEndToEndTest.POD_IP;
    static final String REVIEWS_KEY = "shop/reviews.shop.svc.cluster.local";
    static final String WAYPOINT_HOST = "waypoint.shop.svc.cluster.local";

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
        kubectl.run("create", "-f", GatewayApiEndToEndTest.CRDS.toAbsolutePath().toString()).ok();
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: reviews, namespace: shop}
                spec:
                  clusterIP: %1$s
                  clusterIPs: [%1$s]
                  ipFamilies: [IPv4]
                  selector: {app: reviews}
                  ports: [{name: http, port: 9080, targetPort: 9080}]
                ---
                apiVersion: v1
                kind: Pod
                metadata:
                  name: reviews-0
                  namespace: shop
                  labels: {app: reviews}
                  annotations: {ambient.istio.io/redirection: enabled}
                spec:
                  serviceAccountName: reviews
                  containers: [{name: app, image: app}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: reviews-0, namespace: shop, labels: {kubernetes.io/service-name: reviews}}
                addressType: IPv4
                ports: [{name: http, port: 9080, protocol: TCP}]
                endpoints:
                - addresses: [%2$s]
                  conditions: {ready: true}
                  targetRef: {kind: Pod, name: reviews-0, namespace: shop}
                """.formatted(REVIEWS_VIP, REVIEWS_POD_IP), "apply", "-f", "-").ok();
        // the kubelet's report: a create's status is not kept
        kubectl.run("patch", "pod", "-n", NS, "reviews-0", "--subresource=status", "--type=merge", "-p", """
                {"status": {"phase": "Running", "podIP": "%1$s", "podIPs": [{"ip": "%1$s"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}}""".formatted(REVIEWS_POD_IP)).ok();
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

    @Test
    void aRequestToTheServiceFindsTheWaypointThroughZtunnelAndTheWaypointRoutesItToThePod() throws Exception {
        // the waypoint as istioctl waypoint apply writes it, its Deployment's pod as the ReplicaSet makes it
        kubectl.runWithInput(WaypointGatewayEndToEndTest.WAYPOINT_GATEWAY, "apply", "-f", "-").ok();
        Await.until("the waypoint's Deployment", WAIT, () -> get("deployment", "waypoint").isPresent());
        JsonObject template = get("deployment", "waypoint").orElseThrow().getAsJsonObject("spec")
                .getAsJsonObject("template");
        JsonObject waypointPod = WaypointGatewayEndToEndTest.runPod(kubectl, template, "waypoint-5d8f9c7b6-k2m4p");

        try (DeltaAdsClient ztunnel = ztunnel()) {
            ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            Map<String, Address> held = awaitAddresses(ztunnel, a -> a.containsKey(REVIEWS_KEY)
                    && a.get(REVIEWS_KEY).getService().hasWaypoint() && workloadAt(a, WAYPOINT_POD_IP).isPresent()
                    && workloadAt(a, REVIEWS_POD_IP).isPresent() && a.containsKey(NS + "/" + WAYPOINT_HOST));

            // 1. the VIP's Service names its waypoint by hostname, with the HBONE port
            Service reviews = serviceAt(held, REVIEWS_VIP).orElseThrow(() -> new AssertionError(
                    "ztunnel holds no Service for " + REVIEWS_VIP + ": " + held.keySet()));
            assertEquals(NS, reviews.getWaypoint().getHostname().getNamespace(), reviews.toString());
            assertEquals(WAYPOINT_HOST, reviews.getWaypoint().getHostname().getHostname(), reviews.toString());
            int hbonePort = reviews.getWaypoint().getHboneMtlsPort();
            assertEquals(15008, hbonePort);

            // 2. that hostname is the waypoint's Service, whose endpoint is the waypoint's pod, not captured
            Service waypointService = held.get(reviews.getWaypoint().getHostname().getNamespace() + "/"
                    + reviews.getWaypoint().getHostname().getHostname()).getService();
            String waypointVip = get("service", "waypoint").orElseThrow().getAsJsonObject("spec").get("clusterIP")
                    .getAsString();
            assertEquals(List.of(ip(waypointVip)), waypointService.getAddressesList().stream()
                    .map(NetworkAddress::getAddress).toList());
            assertTrue(waypointService.getPortsList().stream().anyMatch(p -> p.getServicePort() == hbonePort),
                    "the waypoint's Service has the HBONE port: " + waypointService.getPortsList());
            Workload waypoint = workloadAt(held, WAYPOINT_POD_IP).orElseThrow();
            assertEquals(TunnelProtocol.NONE, waypoint.getTunnelProtocol(), "ztunnel does not capture the waypoint");
            Port toWaypoint = waypoint.getServicesOrThrow(NS + "/" + WAYPOINT_HOST).getPortsList().stream()
                    .filter(p -> p.getServicePort() == hbonePort).findFirst().orElseThrow();
            assertEquals(15008, toWaypoint.getTargetPort(), "ztunnel dials the waypoint pod on 15008");

            // 3. the waypoint pod's Envoy terminates HBONE on that port and has a chain for the VIP:port
            ProxyAgentNode node = ProxyAgentNode.of(waypointPod, WAYPOINT_POD_IP);
            try (AdsClient envoy = new AdsClient(server.ports().get("grpc"), node.nodeId(), node.metadata())) {
                envoy.subscribe(TypeUrls.LISTENER, List.of());
                String chainName = "inbound-vip|9080|http|reviews.shop.svc.cluster.local";
                Map<String, Listener> listeners = KubeWaypointProxyTest.awaitListeners(envoy,
                        l -> chain(l.get("main_internal"), chainName).isPresent());
                assertEquals(toWaypoint.getTargetPort(), listeners.get("connect_terminate").getAddress()
                        .getSocketAddress().getPortValue(), "the waypoint listens where ztunnel dials");
                String cluster = routes(chain(listeners.get("main_internal"), chainName).orElseThrow()).get(0).get(0);
                assertEquals(chainName, cluster);

                // 4. the chain's cluster reaches the pod ztunnel holds, over HBONE
                envoy.subscribe(TypeUrls.CLUSTER, List.of());
                Map<String, Cluster> clusters = awaitResources(envoy, TypeUrls.CLUSTER, Cluster.class, Cluster::getName,
                        c -> c.containsKey(cluster));
                assertEquals(Cluster.DiscoveryType.EDS, clusters.get(cluster).getType());
                assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, clusters.get("connect_originate").getType());
                envoy.subscribe(TypeUrls.ENDPOINT, List.of(cluster));
                ClusterLoadAssignment cla = awaitResources(envoy, TypeUrls.ENDPOINT, ClusterLoadAssignment.class,
                        ClusterLoadAssignment::getClusterName, e -> e.containsKey(cluster)).get(cluster);
                var internal = cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getEnvoyInternalAddress();
                assertEquals("connect_originate", internal.getServerListenerName());
                Workload pod = workloadAt(held, REVIEWS_POD_IP).orElseThrow();
                assertEquals(TunnelProtocol.HBONE, pod.getTunnelProtocol(), "ztunnel captures reviews' pod");
                assertEquals(REVIEWS_POD_IP + ":" + pod.getServicesOrThrow(REVIEWS_KEY).getPorts(0).getTargetPort(),
                        internal.getEndpointId(), "the waypoint dials the pod at the address and port ztunnel holds");
            }
        }
    }

    Optional<JsonObject> get(String kind, String name) {
        var r = kubectl.run("get", kind, name, "-n", NS, "-o", "json");
        return r.exit() == 0 ? Optional.of(JsonParser.parseString(r.stdout()).getAsJsonObject()) : Optional.empty();
    }

    static DeltaAdsClient ztunnel() {
        return ZtunnelAddressTest.ztunnel(server.ports().get("grpc"), "");
    }

    /** Applies ztunnel's Address deltas (ACKing each) until what it holds satisfies {@code expected}. */
    static Map<String, Address> awaitAddresses(DeltaAdsClient client, Predicate<Map<String, Address>> expected)
            throws InterruptedException, InvalidProtocolBufferException {
        Map<String, Address> held = new HashMap<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        DeltaDiscoveryResponse r;
        while ((r = client.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) != null) {
            client.ack(r);
            for (Resource res : r.getResourcesList()) {
                held.put(res.getName(), res.getResource().unpack(Address.class));
            }
            r.getRemovedResourcesList().forEach(held::remove);
            if (expected.test(held)) {
                return held;
            }
        }
        throw new AssertionError("ztunnel's addresses not as expected within " + WAIT.toSeconds() + " s; it holds "
                + held.keySet());
    }

    static Optional<Workload> workloadAt(Map<String, Address> held, String ip) {
        ByteString address = ip(ip);
        return held.values().stream().filter(Address::hasWorkload).map(Address::getWorkload)
                .filter(w -> w.getAddressesList().contains(address)).findFirst();
    }

    static Optional<Service> serviceAt(Map<String, Address> held, String vip) {
        ByteString address = ip(vip);
        return held.values().stream().filter(Address::hasService).map(Address::getService)
                .filter(s -> s.getAddressesList().stream().anyMatch(a -> a.getAddress().equals(address))).findFirst();
    }

    static ByteString ip(String ip) {
        try {
            return ByteString.copyFrom(InetAddress.getByName(ip).getAddress());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(ip, e);
        }
    }
}
