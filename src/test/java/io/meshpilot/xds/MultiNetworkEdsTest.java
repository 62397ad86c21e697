package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance 6 of the edges issue: a multi-primary, multi-network mesh of three clusters on two
 * networks, each cluster an API server stand-in. MeshPilot runs against cluster 1 and reads
 * clusters 2 and 3 through remote Secrets. Networks come from each of istiod's sources: cluster
 * 1's from its istio-system label, cluster 2's from meshNetworks {@code fromRegistry}, cluster
 * 3's pods from their own {@code topology.istio.io/network} label. Cluster 3 runs the east-west
 * gateway of network 2: a LoadBalancer Service labelled with the network, listening on 15443.
 * A proxy in network 1 gets split-horizon EDS: the endpoints of clusters 1 and 2 directly, the
 * gateway in place of cluster 3's two endpoints, weighted 2; a proxy in network 2 sees the
 * reverse (network 1 has no gateway, so its endpoints stay direct, as istiod sends them to
 * sidecars); a proxy whose REQUESTED_NETWORK_VIEW is network 1 sees network 1 only. When the
 * gateway goes, nothing routes through it any more.
 */
class MultiNetworkEdsTest {
    static final String HOST = "reviews.test.svc.cluster.local";
    static final String CLUSTER = "outbound|7070||" + HOST;

    @TempDir
    Path dir;
    final List<FakeApiServer> apis = new ArrayList<>();
    final List<AdsClient> clients = new ArrayList<>();
    MeshPilotServer server;

    @AfterEach
    void stop() {
        clients.forEach(AdsClient::close);
        if (server != null) {
            server.close();
        }
        apis.forEach(FakeApiServer::stop);
    }

    /**
     * A cluster with a reviews Service and one pod per address (mTLS-capable, as injected pods
     * are), istio-system labelled with {@code systemNetwork} (none when empty) and the pods
     * with {@code podNetwork} (none when empty).
     */
    FakeApiServer cluster(String name, String systemNetwork, String podNetwork, String... podIps) {
        FakeApiServer api = FakeApiServer.start();
        apis.add(api);
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system, labels: {%s}}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: test}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: reviews, namespace: test}
                spec:
                  clusterIP: 10.96.0.20
                  selector: {app: reviews}
                  ports: [{name: grpc, port: 7070, targetPort: 7070}]
                """.formatted(systemNetwork.isEmpty() ? "" : "topology.istio.io/network: " + systemNetwork));
        for (int i = 0; i < podIps.length; i++) {
            api.apply(KubeMulticlusterTest.readyReviewsPod("reviews-" + name + "-" + i, podIps[i], 7070, "",
                    ", security.istio.io/tlsMode: istio"
                            + (podNetwork.isEmpty() ? "" : ", topology.istio.io/network: " + podNetwork)));
        }
        return api;
    }

    /** Istio's multi-network east-west gateway Service (samples/multicluster gen-eastwest-gateway) with its LB address. */
    static String eastWestGateway(String network, String lbIp) {
        return """
                apiVersion: v1
                kind: Service
                metadata:
                  name: istio-eastwestgateway
                  namespace: istio-system
                  labels: {istio: eastwestgateway, topology.istio.io/network: %s}
                spec:
                  type: LoadBalancer
                  clusterIP: 10.96.0.99
                  selector: {istio: eastwestgateway}
                  ports:
                  - {name: status-port, port: 15021, targetPort: 15021}
                  - {name: tls, port: 15443, targetPort: 15443}
                status:
                  loadBalancer:
                    ingress: [{ip: %s}]
                """.formatted(network, lbIp);
    }

    AdsClient proxyIn(String network, String ip) {
        return proxyIn(Map.of("NAMESPACE", "test", "NETWORK", network), ip);
    }

    AdsClient proxyIn(Map<String, String> metadata, String ip) {
        AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~" + ip + "~productpage.test~test.svc.cluster.local",
                metadata);
        clients.add(c);
        c.subscribe(TypeUrls.ENDPOINT, List.of(CLUSTER));
        return c;
    }

    /** Each client's newest assignment of reviews: address:port -> weight (or what the test reads). */
    final Map<AdsClient, Map<String, Integer>> latest = new HashMap<>();

    /**
     * Reads (and ACKs, keeping the subscription) the client's responses until its newest
     * assignment (address:port -> weight) is {@code expected}; fails with the one it last had.
     */
    void awaitEndpoints(AdsClient c, Map<String, Integer> expected) throws Exception {
        awaitAssignment(c, expected, (l, e) -> e.getLoadBalancingWeight().getValue());
    }

    /** As {@link #awaitEndpoints}, each endpoint's value read by {@code value} from its locality group and itself. */
    void awaitAssignment(AdsClient c, Map<String, Integer> expected,
                         BiFunction<LocalityLbEndpoints, LbEndpoint, Integer> value) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!expected.equals(latest.get(c)) && System.nanoTime() < deadline) {
            DiscoveryResponse r = c.next(Duration.ofMillis(100));
            if (r == null || !r.getTypeUrl().equals(TypeUrls.ENDPOINT)) {
                continue;
            }
            c.ack(r, List.of(CLUSTER));
            Map<String, Integer> weights = new TreeMap<>();
            for (var resource : r.getResourcesList()) {
                for (LocalityLbEndpoints l : resource.unpack(ClusterLoadAssignment.class).getEndpointsList()) {
                    for (LbEndpoint e : l.getLbEndpointsList()) {
                        var a = e.getEndpoint().getAddress().getSocketAddress();
                        weights.put(a.getAddress() + ":" + a.getPortValue(), value.apply(l, e));
                    }
                }
            }
            latest.put(c, weights);
        }
        assertEquals(expected, latest.get(c), "the newest assignment of " + CLUSTER);
    }

    @Test
    void aProxyGetsTheOtherNetworksEastWestGatewayWeightedByItsEndpointsUntilTheGatewayGoes() throws Exception {
        FakeApiServer cluster1 = cluster("c1", "net1", "", "127.0.0.2");
        FakeApiServer cluster2 = cluster("c2", "", "", "127.0.0.3");
        FakeApiServer cluster3 = cluster("c3", "", "net2", "127.0.0.4", "127.0.0.5");
        cluster3.apply(eastWestGateway("net2", "192.0.2.10"));
        // --networksConfig, as istiod reads the meshNetworks file its chart mounts
        Files.writeString(dir.resolve("meshNetworks"), """
                networks:
                  net1:
                    endpoints: [{fromRegistry: cluster2}]
                    gateways: []
                """);
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(),
                "--clusterID", "cluster1");
        cluster1.apply(KubeMulticlusterTest.remoteSecret("istio-remote-secret-cluster2",
                Map.of("cluster2", Files.readString(cluster2.writeKubeconfig(dir.resolve("c2"))))));
        cluster1.apply(KubeMulticlusterTest.remoteSecret("istio-remote-secret-cluster3",
                Map.of("cluster3", Files.readString(cluster3.writeKubeconfig(dir.resolve("c3"))))));

        // network 1: its own endpoints directly, network 2's two behind its gateway (weight 2)
        AdsClient net1 = proxyIn("net1", "127.0.1.1");
        awaitEndpoints(net1, Map.of("127.0.0.2:7070", 1, "127.0.0.3:7070", 1, "192.0.2.10:15443", 2));
        // network 2: its own directly; network 1 has no gateway, so its endpoints stay direct (istiod's sidecar rule)
        AdsClient net2 = proxyIn("net2", "127.0.1.2");
        awaitEndpoints(net2, Map.of("127.0.0.2:7070", 1, "127.0.0.3:7070", 1, "127.0.0.4:7070", 1,
                "127.0.0.5:7070", 1));

        // a proxy asking to see network 1 only (istiod's REQUESTED_NETWORK_VIEW) gets neither network 2 nor its gateway
        AdsClient net1Only = proxyIn(Map.of("NAMESPACE", "test", "NETWORK", "net1", "REQUESTED_NETWORK_VIEW", "net1"),
                "127.0.1.3");
        awaitEndpoints(net1Only, Map.of("127.0.0.2:7070", 1, "127.0.0.3:7070", 1));

        // istiod's /debug/networkz: the gateway, from cluster 3's registry
        JsonArray gateways = JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/networkz").body())
                .getAsJsonArray();
        assertEquals(1, gateways.size(), gateways.toString());
        JsonObject gw = gateways.get(0).getAsJsonObject();
        assertEquals("net2", gw.get("Network").getAsString());
        assertEquals("cluster3", gw.get("Cluster").getAsString());
        assertEquals("192.0.2.10", gw.get("Addr").getAsString());
        assertEquals(15443, gw.get("Port").getAsInt());

        // a new load balancer address replaces the gateway's
        cluster3.apply(eastWestGateway("net2", "192.0.2.11"));
        awaitEndpoints(net1, Map.of("127.0.0.2:7070", 1, "127.0.0.3:7070", 1, "192.0.2.11:15443", 2));

        // the gateway goes: no proxy is sent to it; with no gateway left, every endpoint is direct again
        cluster3.delete("v1", "Service", "istio-system", "istio-eastwestgateway");
        awaitEndpoints(net1, Map.of("127.0.0.2:7070", 1, "127.0.0.3:7070", 1, "127.0.0.4:7070", 1,
                "127.0.0.5:7070", 1));
        assertEquals("[]", Http.get(server.ports().get("http"), "/debug/networkz").body().strip());
    }

    @Test
    void theSamePodAddressInTwoNetworksReachesEachProxyByItsOwnNetwork() throws Exception {
        // overlapping pod ranges: network 1's pod and network 2's pod share 127.0.0.2:7070
        FakeApiServer cluster1 = cluster("c1", "net1", "", "127.0.0.2");
        FakeApiServer cluster3 = cluster("c3", "", "net2", "127.0.0.2");
        cluster3.apply(eastWestGateway("net2", "192.0.2.10"));
        server = TestServers.start(dir, "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(),
                "--clusterID", "cluster1");
        cluster1.apply(KubeMulticlusterTest.remoteSecret("istio-remote-secret-cluster3",
                Map.of("cluster3", Files.readString(cluster3.writeKubeconfig(dir.resolve("c3"))))));

        // network 1: its own pod directly and network 2's behind the gateway, whichever shard comes first
        AdsClient net1 = proxyIn("net1", "127.0.1.1");
        awaitEndpoints(net1, Map.of("127.0.0.2:7070", 1, "192.0.2.10:15443", 1));
        // network 2: network 1 has no gateway, so both pods would be direct at one address: it is sent once
        AdsClient net2 = proxyIn("net2", "127.0.1.2");
        awaitEndpoints(net2, Map.of("127.0.0.2:7070", 1));
    }

    /**
     * A load balancer that publishes a hostname (AWS ELBs do) is resolved by the control plane,
     * as istiod does with RESOLVE_HOSTNAME_GATEWAYS (on by default; model/network.go
     * resolveHostnameGateways): one gateway per address the name resolves to.
     */
    @Test
    void aGatewayLoadBalancerGivenByHostnameIsResolved() throws Exception {
        FakeApiServer cluster1 = cluster("c1", "net1", "", "127.0.0.2");
        FakeApiServer cluster3 = cluster("c3", "", "net2", "127.0.0.4");
        cluster3.apply(eastWestGateway("net2", "192.0.2.10").replace("ingress: [{ip: 192.0.2.10}]",
                "ingress: [{hostname: localhost}]"));
        server = TestServers.start(dir, "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(),
                "--clusterID", "cluster1");
        cluster1.apply(KubeMulticlusterTest.remoteSecret("istio-remote-secret-cluster3",
                Map.of("cluster3", Files.readString(cluster3.writeKubeconfig(dir.resolve("c3"))))));

        // one gateway per address of the name; every weight scaled by their number
        List<String> addresses = new ArrayList<>();
        for (InetAddress a : InetAddress.getAllByName("localhost")) {
            addresses.add(a.getHostAddress());
        }
        Map<String, Integer> expected = new HashMap<>(Map.of("127.0.0.2:7070", addresses.size()));
        addresses.forEach(a -> expected.put(a + ":15443", 1));
        AdsClient net1 = proxyIn("net1", "127.0.1.1");
        awaitEndpoints(net1, expected);
    }

    /**
     * A gateway endpoint carries its gateway's cluster and network as labels (istiod's
     * ep_filters.go AugmentLabels(nil, gw.Cluster, "", "", gw.Network)), so a failover priority
     * on {@code topology.istio.io/cluster} ranks it: a proxy of cluster 3 in network 1 prefers
     * the gateway into cluster 3 over network 1's own pod.
     */
    @Test
    void aGatewayEndpointCarriesItsClusterForFailoverPriority() throws Exception {
        FakeApiServer cluster1 = cluster("c1", "net1", "", "127.0.0.2");
        FakeApiServer cluster3 = cluster("c3", "", "net2", "127.0.0.4");
        cluster3.apply(eastWestGateway("net2", "192.0.2.10"));
        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/reviews.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews, namespace: test}
                spec:
                  host: reviews.test.svc.cluster.local
                  trafficPolicy:
                    outlierDetection: {consecutive5xxErrors: 3}
                    loadBalancer: {localityLbSetting: {failoverPriority: [topology.istio.io/cluster]}}
                """);
        server = TestServers.start(dir, "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(),
                "--clusterID", "cluster1");
        cluster1.apply(KubeMulticlusterTest.remoteSecret("istio-remote-secret-cluster3",
                Map.of("cluster3", Files.readString(cluster3.writeKubeconfig(dir.resolve("c3"))))));

        AdsClient c = proxyIn(Map.of("NAMESPACE", "test", "NETWORK", "net1", "CLUSTER_ID", "cluster3"), "127.0.1.1");
        awaitAssignment(c, Map.of("127.0.0.2:7070", 1, "192.0.2.10:15443", 0), (l, e) -> l.getPriority());
    }
}
