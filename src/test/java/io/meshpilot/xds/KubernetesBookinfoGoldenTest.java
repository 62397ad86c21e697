package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.Config;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.model.Proxy;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Issue 20, acceptance 1: bookinfo as Kubernetes holds it. Real kubectl applies
 * {@code bookinfo-kube.yaml} (Services, ServiceAccounts, Deployments) and
 * {@code kube/bookinfo-workloads.yaml} (the Nodes, Pods and EndpointSlices Kubernetes'
 * controllers would create for those Deployments, since the stand-in runs none) to the API
 * server stand-in; a whole MeshPilot server in Kubernetes mode ({@code --kubeconfig},
 * {@code --registries Kubernetes}, no {@code --configDir}) reads them through its informers.
 * Then each of Istio's bookinfo samples is applied with kubectl, and a productpage sidecar and
 * the ingress gateway, connected over real ADS with the node metadata of
 * {@link GoldenConfigTest#PRODUCTPAGE} and {@link GoldenConfigTest#INGRESS}, must get the
 * clusters, endpoints, listeners and routes of the embedded bookinfo's golden files, except
 * for the differences {@link #expectedFromGolden} lists (and golden/REVIEW.md explains).
 * <p>
 * Not vacuous: there is no file config and no ServiceEntry registry content, so every service
 * and endpoint compared comes from the Kubernetes registry and every route from the CRD store;
 * {@link #anEndpointRemovedFromItsEndpointSliceLeavesTheSidecarsConfig} shows the endpoints
 * follow the EndpointSlices.
 * <p>
 * The stand-in and the server are shared by the class (each sample is applied, compared and
 * deleted; the other tests restore what they change), so the whole class takes seconds.
 */
class KubernetesBookinfoGoldenTest {
    static final Path WORKLOADS = GoldenConfigTest.HOME.resolve("src/test/resources/kube/bookinfo-workloads.yaml");
    static final Path BOOKINFO = GoldenConfigTest.GOLDEN.resolve("samples/bookinfo-kube.yaml");
    static final Duration CONVERGE = Duration.ofSeconds(30);

    /** Each pod's address, as its kubelet reports it in the pod's status (the stand-in runs no kubelet). */
    static final Map<String, String> POD_IPS = Map.of(
            "productpage-v1-7c6d8b9f5-x2x4k", "10.10.0.1",
            "details-v1-5f4d584748-hb2pq", "10.10.0.2",
            "reviews-v1-6d8bc58dd5-kzj5c", "10.10.0.3",
            "reviews-v2-7d7d8b5d9f-m8w2t", "10.10.0.4",
            "reviews-v3-85c99b9b8c-q4n7r", "10.10.0.5",
            "ratings-v1-7c8b9d6f4c-p9d3s", "10.10.0.6");

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH: bookinfo cannot be applied as in a cluster");
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
        kubectl = new Kubectl(binary.get(), api.writeKubeconfig(dir), dir.resolve("kubectl"));
        kubectl.run("apply", "-f", BOOKINFO.toString()).ok();
        kubectl.run("apply", "-f", WORKLOADS.toString()).ok();
        for (var pod : POD_IPS.entrySet()) {
            String ip = pod.getValue();
            kubectl.run("patch", "pod", pod.getKey(), "--subresource=status", "--type=merge", "-p",
                    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" + ip + "\",\"podIPs\":[{\"ip\":\"" + ip + "\"}],"
                            + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}").ok();
        }
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Kubernetes"));
        int at = flags.indexOf("--configDir");
        flags.remove(at + 1);
        flags.remove(at);
        server = MeshPilotServer.start(TestServers.args(flags, Map.of()));
        assertTrue(server.server().components().readiness().ready(), "ready once the informers listed the cluster: "
                + server.server().components().readiness().failing());
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

    static Stream<String> samples() throws Exception {
        return GoldenConfigTest.samples();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void productpageSidecarAndIngressGatewayGetTheEmbeddedGoldensConfig(String sample) throws Exception {
        Path file = GoldenConfigTest.GOLDEN.resolve("samples").resolve(sample);
        String dirName = sample.substring(0, sample.length() - ".yaml".length());
        // bookinfo-kube.yaml is the cluster's base here, applied once for the class
        boolean istioConfig = !sample.equals("bookinfo-kube.yaml");
        List<ObjectKey> objects = istioConfig ? ObjectKey.of(Files.readString(file)) : List.of();
        if (istioConfig) {
            kubectl.run("apply", "-f", file.toString()).ok();
        }
        try {
            await(sample + " read from the cluster", () -> storeHolds(objects));
            awaitGolden(GoldenConfigTest.GOLDEN.resolve(dirName).resolve("productpage.json"), GoldenConfigTest.PRODUCTPAGE);
            awaitGolden(GoldenConfigTest.GOLDEN.resolve(dirName).resolve("ingressgateway.json"), GoldenConfigTest.INGRESS);
        } finally {
            if (istioConfig) {
                kubectl.run("delete", "-f", file.toString()).ok();
                await(sample + " removed from the server", () -> storeHolds(List.of()));
            }
        }
    }

    /**
     * The endpoints are the EndpointSlices': one endpoint taken out of reviews' slice with
     * kubectl leaves the sidecar's reviews cluster, and comes back with it.
     */
    @Test
    void anEndpointRemovedFromItsEndpointSliceLeavesTheSidecarsConfig() throws Exception {
        String cluster = "outbound|9080||reviews.default.svc.cluster.local";
        // a push with what the informers listed may still be on its way just after start
        await("reviews' three endpoints", () -> endpoints(cluster)
                .equals(Set.of("10.10.0.3:9080", "10.10.0.4:9080", "10.10.0.5:9080")));
        kubectl.run("patch", "endpointslice", "reviews-c4h8w", "--type=json", "-p",
                "[{\"op\":\"remove\",\"path\":\"/endpoints/2\"}]").ok();
        try {
            await("reviews-v3 out of the sidecar's EDS", () -> endpoints(cluster)
                    .equals(Set.of("10.10.0.3:9080", "10.10.0.4:9080")));
        } finally {
            kubectl.run("apply", "-f", WORKLOADS.toString()).ok();
        }
        await("reviews-v3 back", () -> endpoints(cluster).size() == 3);
    }

    /**
     * Issue 20 acceptance 4, for the whole server: the API server is killed mid-watch; the
     * sidecar's config stays served (a proxy connecting meanwhile gets all of it); what changed
     * in the cluster while it was down (an endpoint gone from reviews' slice, a VirtualService
     * created) is served once it is back, without restarting MeshPilot.
     */
    @Test
    void acrossAnApiServerKillAndRestartTheConfigStaysServedAndConvergesToWhatChangedMeanwhile() throws Exception {
        String cluster = "outbound|9080||reviews.default.svc.cluster.local";
        Path reviewsV3 = GoldenConfigTest.GOLDEN.resolve("samples/virtual-service-reviews-v3.yaml");
        await("the default route to reviews and its three endpoints", () -> reviewsRoute().equals(cluster)
                && endpoints(cluster).size() == 3);
        api.kill(); // watches cut off mid-stream, nothing said to the clients
        try {
            assertEquals(Set.of("10.10.0.3:9080", "10.10.0.4:9080", "10.10.0.5:9080"), endpoints(cluster),
                    "served while the API server is down");
            // changed meanwhile, straight in the stopped API server's storage
            JsonObject slice = api.get("discovery.k8s.io/v1", "EndpointSlice", "default", "reviews-c4h8w").orElseThrow();
            slice.getAsJsonArray("endpoints").remove(2);
            slice.getAsJsonObject("metadata").remove("resourceVersion");
            api.apply(slice.toString());
            api.apply(Files.readString(reviewsV3));
        } finally {
            api.restart();
        }
        try {
            await("the slice changed meanwhile", () -> endpoints(cluster).equals(Set.of("10.10.0.3:9080", "10.10.0.4:9080")));
            await("the VirtualService created meanwhile", () -> reviewsRoute().equals(
                    "outbound|9080|v3|reviews.default.svc.cluster.local"));
        } finally {
            kubectl.run("delete", "-f", reviewsV3.toString()).ok();
            kubectl.run("apply", "-f", WORKLOADS.toString()).ok();
        }
        await("back to bookinfo", () -> storeHolds(List.of()) && endpoints(cluster).size() == 3);
    }

    /** The cluster of the productpage sidecar's first route to reviews. */
    static String reviewsRoute() {
        try {
            for (var any : fetch(GoldenConfigTest.PRODUCTPAGE).routes()) {
                var rc = any.unpack(RouteConfiguration.class);
                for (var vh : rc.getVirtualHostsList()) {
                    if (vh.getName().equals("reviews.default.svc.cluster.local:9080")) {
                        return vh.getRoutes(0).getRoute().getCluster();
                    }
                }
            }
            return "(no route to reviews)";
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The addresses of one EDS cluster of the productpage sidecar, as {@code ip:port}. */
    static Set<String> endpoints(String cluster) {
        try {
            Set<String> out = new TreeSet<>();
            for (var any : fetch(GoldenConfigTest.PRODUCTPAGE).endpoints()) {
                ClusterLoadAssignment cla = any.unpack(ClusterLoadAssignment.class);
                if (cla.getClusterName().equals(cluster)) {
                    cla.getEndpointsList().forEach(l -> l.getLbEndpointsList().forEach(e -> out.add(
                            e.getEndpoint().getAddress().getSocketAddress().getAddress() + ":"
                                    + e.getEndpoint().getAddress().getSocketAddress().getPortValue())));
                }
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Fetches the proxy's config over ADS until it equals the golden (after the expected
     * differences): a push of the sample's change may still be on its way when the store has it.
     */
    static void awaitGolden(Path golden, Proxy proxy) throws Exception {
        JsonObject expected = expectedFromGolden(JsonParser.parseString(Files.readString(golden)).getAsJsonObject());
        long deadline = System.nanoTime() + CONVERGE.toNanos();
        String difference;
        JsonObject actual;
        do {
            actual = fetch(proxy).json();
            difference = GoldenConfigTest.firstDifference("", expected, actual);
            if (difference == null) {
                return;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        // what was served, beside the test's other output, for a diff with the golden
        Path served = GoldenConfigTest.HOME.resolve("target/kube-golden").resolve(GoldenConfigTest.GOLDEN.relativize(golden));
        Files.createDirectories(served.getParent());
        Files.writeString(served, new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create()
                .toJson(actual) + "\n");
        Path adjusted = served.resolveSibling(served.getFileName().toString().replace(".json", ".expected.json"));
        Files.writeString(adjusted, new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create()
                .toJson(expected) + "\n");
        throw new AssertionError(GoldenConfigTest.HOME.relativize(golden) + " (Kubernetes mode, over ADS) differs at "
                + difference);
    }

    /**
     * The golden of the embedded bookinfo, turned into what the same mesh in Kubernetes gives.
     * Each difference has a reason in golden/REVIEW.md ("Kubernetes mode"):
     * <ol>
     * <li>Endpoint ports: the embedded WorkloadEntries map the service port to 19080-19085 (one
     * machine, one port each); bookinfo-kube.yaml's Services have no targetPort, so Kubernetes
     * targets the pods' containerPort 9080. That changes the endpoints' port, and the
     * productpage sidecar's inbound side (its listener filter chain match, inbound cluster,
     * stat prefix and http_inspector's disabled port range), which are keyed by the target port;
     * the disabled ranges stay in port order, so 9080 now comes before 15006.</li>
     * <li>Cluster IPs: a Kubernetes Service has the cluster IP its API server allocated (the
     * stand-in allocates as the real one does), and istiod adds a service's VIPs to its virtual
     * host's domains; the embedded ServiceEntries have no addresses. So each bookinfo virtual
     * host on 9080 has one more domain, its Service's {@code spec.clusterIP}, last.</li>
     * <li>Service names in the clusters' telemetry metadata ({@code istio.services[].name}): a
     * ServiceEntry's host is its name, a Kubernetes Service's name is its name
     * ({@code details.default.svc.cluster.local} becomes {@code details}; the samples'
     * ServiceEntries keep theirs).</li>
     * </ol>
     */
    static JsonObject expectedFromGolden(JsonObject golden) {
        JsonObject out = golden.deepCopy();
        rewrite(out);
        for (JsonElement cluster : out.getAsJsonArray("clusters")) {
            JsonObject istio = cluster.getAsJsonObject().has("metadata") ? cluster.getAsJsonObject()
                    .getAsJsonObject("metadata").getAsJsonObject("filterMetadata").getAsJsonObject("istio") : null;
            if (istio != null && istio.has("services")) {
                for (JsonElement svc : istio.getAsJsonArray("services")) {
                    String host = svc.getAsJsonObject().get("host").getAsString();
                    for (String service : List.of("details", "productpage", "ratings", "reviews")) {
                        if (host.equals(service + ".default.svc.cluster.local")) {
                            svc.getAsJsonObject().addProperty("name", service);
                        }
                    }
                }
            }
        }
        for (JsonElement rc : out.getAsJsonArray("routes")) {
            for (JsonElement vh : rc.getAsJsonObject().getAsJsonArray("virtualHosts")) {
                String name = vh.getAsJsonObject().get("name").getAsString();
                for (String service : List.of("details", "productpage", "ratings", "reviews")) {
                    if (name.equals(service + ".default.svc.cluster.local:9080")) {
                        vh.getAsJsonObject().getAsJsonArray("domains").add(clusterIp(service));
                    }
                }
            }
        }
        return out;
    }

    /** The cluster IP the API server gave a bookinfo Service. */
    static String clusterIp(String service) {
        JsonObject svc = api.get("v1", "Service", "default", service).orElseThrow();
        return svc.getAsJsonObject("spec").get("clusterIP").getAsString();
    }

    /** Difference 1, applied in place: the target port 1908x of the embedded workloads becomes 9080. */
    private static void rewrite(JsonElement e) {
        if (e.isJsonArray()) {
            JsonArray a = e.getAsJsonArray();
            for (int i = 0; i < a.size(); i++) {
                JsonElement v = a.get(i);
                if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isString()) {
                    a.set(i, new JsonPrimitive(targetPortInName(v.getAsString())));
                } else {
                    rewrite(v);
                }
            }
            return;
        }
        if (!e.isJsonObject()) {
            return;
        }
        JsonObject o = e.getAsJsonObject();
        if (o.has("orMatch")) {
            sortRulesByPort(o.getAsJsonObject("orMatch").getAsJsonArray("rules"));
        }
        for (String key : List.copyOf(o.keySet())) {
            JsonElement v = o.get(key);
            if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()) {
                int n = v.getAsInt();
                boolean endpointPort = key.equals("portValue") && n >= 19080 && n <= 19085;
                boolean inboundPort = (key.equals("destinationPort") || key.equals("start")) && n == 19080;
                if (endpointPort || inboundPort) {
                    o.addProperty(key, 9080);
                } else if (key.equals("end") && n == 19081) {
                    o.addProperty(key, 9081); // the exclusive end of http_inspector's range [19080, 19081)
                }
            } else if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isString()) {
                o.addProperty(key, targetPortInName(v.getAsString()));
            } else {
                rewrite(v);
            }
        }
    }

    /** Listener filters' disabled port ranges are in port order: 9080 now comes before 15006. */
    private static void sortRulesByPort(JsonArray rules) {
        rewrite(rules);
        List<JsonElement> sorted = new ArrayList<>(rules.asList());
        sorted.sort(Comparator.comparingInt((JsonElement r) -> r.getAsJsonObject().has("destinationPortRange")
                ? r.getAsJsonObject().getAsJsonObject("destinationPortRange").get("start").getAsInt() : Integer.MAX_VALUE));
        for (int i = 0; i < sorted.size(); i++) {
            rules.set(i, sorted.get(i));
        }
    }

    /** productpage's inbound names carry its target port: {@code inbound|19080||}, {@code 0.0.0.0_19080}. */
    private static String targetPortInName(String s) {
        return s.replace("|19080|", "|9080|").replace("_19080", "_9080");
    }

    /**
     * One proxy's whole config over a fresh ADS stream, asked for as Envoy asks: wildcard CDS,
     * EDS for its EDS clusters, wildcard LDS, RDS for the route names its listeners use; each
     * response ACKed.
     */
    static GoldenConfigTest.ProxyConfig fetch(Proxy proxy) throws Exception {
        Duration wait = Duration.ofSeconds(20);
        try (AdsClient ads = new AdsClient(server.ports().get("grpc"), proxy.id(), nodeMetadata(proxy),
                Locality.newBuilder().setRegion(proxy.locality().region()).setZone(proxy.locality().zone())
                        .setSubZone(proxy.locality().subzone()).build())) {
            ads.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = ads.await(TypeUrls.CLUSTER, wait);
            ads.ack(cds, List.of());
            List<String> edsNames = new ArrayList<>(new TreeSet<>(edsClusters(cds)));
            List<Any> endpoints = subscribed(ads, TypeUrls.ENDPOINT, edsNames, wait);
            ads.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = ads.await(TypeUrls.LISTENER, wait);
            ads.ack(lds, List.of());
            List<Any> routes = subscribed(ads, TypeUrls.ROUTE, new ArrayList<>(new TreeSet<>(routeNames(lds))), wait);
            return new GoldenConfigTest.ProxyConfig(lds.getResourcesList(), routes, cds.getResourcesList(), endpoints);
        }
    }

    /**
     * The resources of a subscription to {@code names}, ACKed. Envoy asks for no EDS or RDS
     * names when it has none to ask for (a gateway without listeners): such a request would
     * unsubscribe, and istiod answers it with nothing.
     */
    private static List<Any> subscribed(AdsClient ads, String type, List<String> names, Duration wait) throws Exception {
        if (names.isEmpty()) {
            return List.of();
        }
        ads.subscribe(type, names);
        DiscoveryResponse r = ads.await(type, wait);
        ads.ack(r, names);
        return r.getResourcesList();
    }

    /** The node metadata the Istio agent sends for this proxy. */
    static Map<String, String> nodeMetadata(Proxy proxy) {
        Map<String, String> md = new LinkedHashMap<>();
        md.put("NAMESPACE", proxy.namespace());
        JsonObject labels = new JsonObject();
        proxy.labels().forEach(labels::addProperty);
        md.put("LABELS", labels.toString());
        md.put("CLUSTER_ID", proxy.clusterId());
        md.put("ISTIO_VERSION", proxy.istioVersion());
        md.put("SERVICE_ACCOUNT", proxy.serviceAccount());
        md.put("INSTANCE_IPS", String.join(",", proxy.ips()));
        return md;
    }

    private static List<String> edsClusters(DiscoveryResponse cds) throws Exception {
        List<String> out = new ArrayList<>();
        for (var any : cds.getResourcesList()) {
            Cluster c = any.unpack(Cluster.class);
            if (c.getType() == Cluster.DiscoveryType.EDS) {
                out.add(c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
                        : c.getEdsClusterConfig().getServiceName());
            }
        }
        return out;
    }

    private static List<String> routeNames(DiscoveryResponse lds) throws Exception {
        List<String> out = new ArrayList<>();
        for (var any : lds.getResourcesList()) {
            for (var chain : any.unpack(Listener.class).getFilterChainsList()) {
                for (var f : chain.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        var hcm = f.getTypedConfig().unpack(HttpConnectionManager.class);
                        if (hcm.hasRds()) {
                            out.add(hcm.getRds().getRouteConfigName());
                        }
                    }
                }
            }
        }
        return out;
    }

    /** The server's config store holds exactly these Istio objects (all from the cluster: no --configDir). */
    static boolean storeHolds(List<ObjectKey> objects) {
        ConfigStore store = server.server().components().configs().store();
        Set<ObjectKey> held = new TreeSet<>();
        for (var schema : store.schemas()) {
            for (Config c : store.list(schema.kind(), null)) {
                held.add(new ObjectKey(c.gvk().kind(), c.namespace(), c.name()));
            }
        }
        return held.equals(new TreeSet<>(objects));
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, CONVERGE, condition);
    }

    /** An object of a YAML stream, namespaced objects without a namespace in {@code default} as kubectl puts them. */
    record ObjectKey(String kind, String namespace, String name) implements Comparable<ObjectKey> {
        static List<ObjectKey> of(String yaml) {
            List<ObjectKey> out = new ArrayList<>();
            for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
                if (doc instanceof Map<?, ?> m && m.get("metadata") instanceof Map<?, ?> meta) {
                    Object ns = meta.get("namespace");
                    out.add(new ObjectKey((String) m.get("kind"), ns == null ? "default" : (String) ns,
                            (String) meta.get("name")));
                }
            }
            return out;
        }

        @Override
        public int compareTo(ObjectKey o) {
            return toString().compareTo(o.toString());
        }
    }
}
