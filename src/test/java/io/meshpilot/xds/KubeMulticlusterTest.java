package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance 6 of the cluster-duties issue: two API servers as two clusters. MeshPilot runs
 * against cluster 1 ({@code --clusterID cluster1}); a remote Secret in cluster 1's istio-system
 * holds cluster 2's kubeconfig. A proxyless grpc-java client in cluster 1 reaches the
 * {@code reviews} backends of both clusters (one Service, endpoints from both, each in its
 * cluster's shard with that cluster's locality and network); a new kubeconfig in the Secret
 * replaces cluster 2's client; a Secret with a malformed kubeconfig is refused with a line naming
 * the Secret and key while the rest serves on, ready; deleting the Secret takes cluster 2's
 * endpoints out of the client's traffic.
 */
class KubeMulticlusterTest {
    static final String HOST = "reviews.test.svc.cluster.local";

    @TempDir
    Path dir;
    final List<FakeApiServer> apis = new ArrayList<>();
    MeshPilotServer server;
    ManagedChannel channel;
    final List<Server> backends = new ArrayList<>();

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        apis.forEach(FakeApiServer::stop);
        backends.forEach(Server::shutdownNow);
    }

    /** A cluster with istiod's namespace, one node in {@code region}, and a reviews pod served by {@code backend}. */
    FakeApiServer cluster(String region, String podName, String podIp, Server backend, String clusterIp) {
        FakeApiServer api = FakeApiServer.start();
        apis.add(api);
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: test}
                ---
                apiVersion: v1
                kind: Node
                metadata:
                  name: node-%1$s
                  labels: {topology.kubernetes.io/region: %1$s, topology.kubernetes.io/zone: %1$s-a}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: reviews, namespace: test}
                spec:
                  clusterIP: %2$s
                  selector: {app: reviews}
                  ports: [{name: grpc, port: 7070, targetPort: 7070}]
                """.formatted(region, clusterIp));
        api.apply(readyReviewsPod(podName, podIp, backend.getPort(), "node-" + region, ""));
        return api;
    }

    /**
     * A ready reviews pod in namespace test and its EndpointSlice on {@code port}, as the
     * kubelet and the EndpointSlice controller leave them.
     *
     * @param nodeName    "" for none
     * @param extraLabels more pod labels, flow-mapping entries after {@code app: reviews} (e.g. ", a: b")
     */
    static String readyReviewsPod(String podName, String podIp, int port, String nodeName, String extraLabels) {
        String node = nodeName.isEmpty() ? "" : "nodeName: " + nodeName;
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %1$s, namespace: test, labels: {app: reviews%5$s}}
                spec:
                  %4$s
                  serviceAccountName: reviews
                  containers: [{name: reviews, image: reviews}]
                status:
                  phase: Running
                  podIP: %2$s
                  conditions: [{type: Ready, status: "True"}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: %1$s, namespace: test, labels: {kubernetes.io/service-name: reviews}}
                addressType: IPv4
                ports: [{name: grpc, port: %3$d, protocol: TCP}]
                endpoints:
                - addresses: [%2$s]
                  conditions: {ready: true}
                  %4$s
                  targetRef: {kind: Pod, name: %1$s, namespace: test}
                """.formatted(podName, podIp, port, node, extraLabels);
    }

    /** istioctl create-remote-secret's shape: the kubeconfig under the cluster ID, base64 as the API holds it. */
    static String remoteSecret(String name, Map<String, String> kubeconfigs) {
        StringBuilder data = new StringBuilder();
        new TreeMap<>(kubeconfigs).forEach((id, kc) -> data.append("  ").append(id).append(": ")
                .append(Base64.getEncoder().encodeToString(kc.getBytes(StandardCharsets.UTF_8))).append('\n'));
        return """
                apiVersion: v1
                kind: Secret
                metadata:
                  name: %s
                  namespace: istio-system
                  labels: {istio/multiCluster: "true"}
                  annotations: {networking.istio.io/cluster: cluster2}
                data:
                %s""".formatted(name, data);
    }

    String kubeconfigOf(FakeApiServer api, String name) throws Exception {
        return Files.readString(api.writeKubeconfig(dir.resolve(name)));
    }

    Map<String, Integer> calls(int n) {
        Map<String, Integer> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            out.merge(ClientCalls.blockingUnaryCall(channel, ProxylessGrpcTest.WHO,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who"), 1, Integer::sum);
        }
        return out;
    }

    /** Waits (bounded) until 20 calls in a row reach exactly the backends {@code expected}. */
    void awaitServedBy(Set<String> expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<String, Integer> seen = calls(20);
        while (!seen.keySet().equals(expected) && System.nanoTime() < deadline) {
            seen = calls(20);
        }
        assertEquals(expected, seen.keySet(), "backends serving " + HOST + ": " + seen);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(30), condition);
    }

    /** /debug/endpointShardz for reviews: shard ({@code Kubernetes/<cluster>}) -> its endpoints. */
    Map<String, List<JsonObject>> shards() {
        JsonObject all = JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/endpointShardz").body())
                .getAsJsonObject();
        Map<String, List<JsonObject>> out = new TreeMap<>();
        if (!all.has(HOST)) {
            return out;
        }
        all.getAsJsonObject(HOST).getAsJsonObject("test").getAsJsonObject("Shards").entrySet().forEach(e -> {
            List<JsonObject> eps = new ArrayList<>();
            e.getValue().getAsJsonArray().forEach(ep -> eps.add(ep.getAsJsonObject()));
            if (!eps.isEmpty()) {
                out.put(e.getKey(), eps);
            }
        });
        return out;
    }

    List<JsonObject> reviewsInRegistry() {
        JsonArray all = JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/registryz").body())
                .getAsJsonArray();
        List<JsonObject> out = new ArrayList<>();
        for (JsonElement s : all) {
            if (s.getAsJsonObject().toString().contains("\"" + HOST + "\"")) {
                out.add(s.getAsJsonObject());
            }
        }
        return out;
    }

    @Test
    void clientInClusterOneReachesBothClustersUntilTheRemoteSecretGoes() throws Exception {
        Server a = ProxylessGrpcTest.backend("a");
        Server b = ProxylessGrpcTest.backend("b");
        Server c = ProxylessGrpcTest.backend("c");
        backends.addAll(List.of(a, b, c));
        FakeApiServer cluster1 = cluster("r1", "reviews-a", "127.0.0.2", a, "10.96.0.20");
        FakeApiServer cluster2 = cluster("r2", "reviews-b", "127.0.0.3", b, "10.200.0.20");
        // cluster 2 after a move to a new API server: the same Service, another pod
        FakeApiServer cluster2Moved = cluster("r2", "reviews-c", "127.0.0.4", c, "10.200.0.20");
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(),
                "--clusterID", "cluster1");
        NameResolverRegistry.getDefaultRegistry().register(
                XdsNameResolverProvider.createForTest("xds-mc", KubeProxylessGrpcTest.bootstrap(server.ports().get("grpc"))));
        channel = Grpc.newChannelBuilder("xds-mc:///" + HOST + ":7070", InsecureChannelCredentials.create()).build();
        awaitServedBy(Set.of("a"));

        cluster1.apply(remoteSecret("istio-remote-secret-cluster2", Map.of("cluster2", kubeconfigOf(cluster2, "c2"))));
        awaitServedBy(Set.of("a", "b"));
        // istiod's clusterz: the config cluster first, then the remote Secrets' clusters
        assertEquals("[" + CONFIG_CLUSTER + ",{\"id\":\"cluster2\",\"secretName\":\"istio-system/istio-remote-secret-cluster2\","
                + "\"syncStatus\":\"synced\"}]", clusterz());
        assertEquals(Map.of("local", 1.0, "remote", 1.0), managedClusters());

        // one Service of both clusters; each endpoint in its own cluster's shard, with its locality
        List<JsonObject> services = reviewsInRegistry();
        assertEquals(1, services.size(), "one reviews Service: " + services);
        assertEquals(Set.of("cluster1", "cluster2"), services.get(0).getAsJsonObject("clusterVIPs").getAsJsonObject("Addresses").keySet(),
                "its VIPs per cluster: " + services);
        Map<String, List<JsonObject>> shards = shards();
        assertEquals(Set.of("Kubernetes/cluster1", "Kubernetes/cluster2"), shards.keySet(), shards.toString());
        JsonObject remote = shards.get("Kubernetes/cluster2").get(0);
        assertEquals("127.0.0.3", remote.get("address").getAsString());
        assertEquals("r2/r2-a", remote.get("locality").getAsString());
        assertEquals("cluster2", remote.getAsJsonObject("labels").get("topology.istio.io/cluster").getAsString());
        assertEquals("cluster1", shards.get("Kubernetes/cluster1").get(0).getAsJsonObject("labels")
                .get("topology.istio.io/cluster").getAsString());
        assertEquals("", remote.get("network").getAsString());

        // cluster 2's network, from its own istio-system label, reaches its endpoints only
        cluster2.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system, labels: {topology.istio.io/network: net2}}
                """);
        await("cluster 2's endpoints in network net2", () -> {
            var s = shards();
            return s.containsKey("Kubernetes/cluster2")
                    && "net2".equals(s.get("Kubernetes/cluster2").get(0).get("network").getAsString());
        });
        assertEquals("", shards().get("Kubernetes/cluster1").get(0).get("network").getAsString());
        cluster2.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                """);

        // a new kubeconfig for cluster2 replaces its client: the moved API server's pod serves now
        cluster1.apply(remoteSecret("istio-remote-secret-cluster2", Map.of("cluster2",
                kubeconfigOf(cluster2Moved, "c2-moved"))));
        awaitServedBy(Set.of("a", "c"));

        // a malformed kubeconfig: one line naming the Secret and key; nothing else changes, still ready
        try (CapturedLog log = new CapturedLog(RemoteSecretController.class)) {
            cluster1.apply(remoteSecret("istio-remote-secret-broken", Map.of("cluster3", "clusters: [ {server: ")));
            await("the refusal of cluster3's kubeconfig", () -> log.has("SEVERE", "cluster_id=cluster3",
                    "secret=istio-system/istio-remote-secret-broken", "key cluster3", "kubeconfig cannot be loaded",
                    "not added"));
            // a kubeconfig that would run a program on the server is refused as istiod refuses it
            cluster1.apply(remoteSecret("istio-remote-secret-exec", Map.of("cluster4", """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: c4, cluster: {server: "http://127.0.0.1:1"}}]
                    contexts: [{name: c4, context: {cluster: c4, user: c4}}]
                    current-context: c4
                    users: [{name: c4, user: {exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}}]
                    """)));
            await("the refusal of cluster4's exec kubeconfig", () -> log.has("SEVERE", "cluster_id=cluster4",
                    "exec is not allowed"));
        }
        await("the broken Secrets handled", () -> server.server().components().remoteSecrets().remoteClusters().equals(
                Map.of("cluster2", "istio-system/istio-remote-secret-cluster2")));
        assertEquals(200, Http.get(server.ports().get("http"), "/ready").status(), "still ready");
        awaitServedBy(Set.of("a", "c"));

        // the Secret goes: cluster 2 and its endpoints leave the mesh, with a push
        cluster1.delete("v1", "Secret", "istio-system", "istio-remote-secret-cluster2");
        awaitServedBy(Set.of("a"));
        assertEquals(Set.of("Kubernetes/cluster1"), shards().keySet());
        assertEquals(Set.of("cluster1"), reviewsInRegistry().get(0).getAsJsonObject("clusterVIPs").getAsJsonObject("Addresses").keySet());
        assertTrue(server.server().components().remoteSecrets().remoteClusters().isEmpty());
        assertEquals("[" + CONFIG_CLUSTER + "]", clusterz());
        assertEquals(Map.of("local", 1.0, "remote", 0.0), managedClusters());
    }

    /** istiod_managed_clusters by cluster_type. */
    Map<String, Double> managedClusters() {
        var metrics = PrometheusTextParser.parse(
                Http.get(server.ports().get("monitoring"), "/metrics").body());
        Map<String, Double> out = new TreeMap<>();
        metrics.get("istiod_managed_clusters").samples().forEach(s -> out.put(s.labels().get("cluster_type"), s.value()));
        return out;
    }

    /** istiod's clusterz row of the config cluster (--clusterID), listed first in Kubernetes mode. */
    static final String CONFIG_CLUSTER = "{\"id\":\"cluster1\",\"secretName\":\"\",\"syncStatus\":\"synced\"}";

    String clusterz() {
        return Http.get(server.ports().get("http"), "/debug/clusterz").body();
    }

    @Test
    void anUnreachableRemoteClusterHoldsReadinessBackOnlyUntilPilotRemoteClusterTimeout() throws Exception {
        Server a = ProxylessGrpcTest.backend("a");
        backends.add(a);
        FakeApiServer cluster1 = cluster("r1", "reviews-a", "127.0.0.2", a, "10.96.0.20");
        FakeApiServer gone = FakeApiServer.start();
        String kubeconfig = kubeconfigOf(gone, "gone");
        gone.stop();
        cluster1.apply(remoteSecret("istio-remote-secret-gone", Map.of("cluster2", kubeconfig)));
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, Map.of("PILOT_REMOTE_CLUSTER_TIMEOUT", "1s"),
                "--kubeconfig", cluster1.writeKubeconfig(dir.resolve("c1")).toString(), "--clusterID", "cluster1");
        await("ready without cluster2", () -> Http.get(server.ports().get("http"), "/ready").status() == 200);
        assertEquals(Map.of("cluster2", "istio-system/istio-remote-secret-gone"),
                server.server().components().remoteSecrets().remoteClusters(), "cluster2 is registered, still syncing");
        assertFalse(server.server().components().registries().remoteClusters().registries().get(0).hasSynced());
        assertEquals("[" + CONFIG_CLUSTER + ",{\"id\":\"cluster2\",\"secretName\":\"istio-system/istio-remote-secret-gone\","
                + "\"syncStatus\":\"timeout\"}]", clusterz());
        assertEquals(Set.of("Kubernetes/cluster1"), shards().keySet());
    }

}
