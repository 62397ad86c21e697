package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.validation.EnvoyConfigCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden files: for each Istio sample in {@code src/test/resources/golden/samples} (Istio's
 * bookinfo samples, copied into the repository), applied on top of the embedded
 * bookinfo services, the complete LDS, RDS, CDS and EDS the server's generators give a
 * {@code productpage} sidecar and an ingress gateway, compared structurally (JSON trees) with
 * {@code golden/<sample>/<proxy>.json}. Each golden was reviewed against Istio's documented
 * behaviour: {@code golden/REVIEW.md}.
 * <p>
 * After an intended change: {@code ./mvnw test -Dtest=GoldenConfigTest -Dgolden.update=true},
 * then review the diff of the JSON files and update REVIEW.md.
 */
class GoldenConfigTest {
    static final Path HOME = Path.of(System.getProperty("meshpilot.home", "."));
    static final Path GOLDEN = HOME.resolve("src/test/resources/golden");
    static final boolean UPDATE = Boolean.getBoolean("golden.update");
    static final AtomicLong VERSIONS = new AtomicLong(1_000_000);

    /** The productpage pod of the Kubernetes sample (its address in {@link #BASE_WORKLOADS}). */
    static final Proxy PRODUCTPAGE = new Proxy("sidecar~10.10.0.1~productpage-v1-7c6d8b9f5-x2x4k.default~default.svc.cluster.local",
            Proxy.Type.SIDECAR, List.of("10.10.0.1"), "productpage-v1-7c6d8b9f5-x2x4k.default",
            "default.svc.cluster.local", "default", Map.of("app", "productpage", "version", "v1"), "Kubernetes",
            "1.24.0", "", "bookinfo-productpage", "", new Locality("us-east1", "us-east1-b", ""));
    /** Istio's default ingress gateway deployment (istio=ingressgateway in istio-system). */
    static final Proxy INGRESS = new Proxy("router~10.10.0.100~istio-ingressgateway-5d9b7c6f8-abcde.istio-system~istio-system.svc.cluster.local",
            Proxy.Type.ROUTER, List.of("10.10.0.100"), "istio-ingressgateway-5d9b7c6f8-abcde.istio-system",
            "istio-system.svc.cluster.local", "istio-system", Map.of("app", "istio-ingressgateway", "istio",
            "ingressgateway"), "Kubernetes", "1.24.0", "", "istio-ingressgateway-service-account", "",
            new Locality("us-east1", "us-east1-b", ""));

    /**
     * The embedded workloads all listen on 127.0.0.1 (one machine); here each gets its own
     * address, as pods have, so a sidecar's inbound side holds its own workload only.
     */
    static String baseWorkloads() throws Exception {
        String yaml = Files.readString(HOME.resolve("etc/config/bookinfo/workloads.yaml"));
        StringBuilder out = new StringBuilder();
        int next = 1;
        for (String line : yaml.split("\n", -1)) {
            out.append(line.contains("address: 127.0.0.1") ? line.replace("127.0.0.1", "10.10.0." + next++) : line)
                    .append('\n');
        }
        return out.toString();
    }

    /**
     * Routes to clusters that do not exist, by sample, as istiod generates them too (Envoy
     * answers 503 NC): hosts with no service, and subsets no DestinationRule defines because
     * the sample is applied without destination-rule-all.yaml. REVIEW.md explains each.
     */
    static final Map<String, Set<String>> EXPECTED_DANGLING = Map.ofEntries(
            Map.entry("certmanager-gateway", Set.of("outbound|8089||cert-manager-resolver.istio-system.svc.cluster.local")),
            Map.entry("virtual-service-all-v1", subsets("details:v1", "productpage:v1", "ratings:v1", "reviews:v1")),
            Map.entry("virtual-service-details-v2", subsets("details:v2")),
            Map.entry("virtual-service-ratings-db", subsets("ratings:v2", "reviews:v3")),
            Map.entry("virtual-service-ratings-mysql", subsets("ratings:v2-mysql", "reviews:v3")),
            Map.entry("virtual-service-ratings-mysql-vm", subsets("ratings:v2-mysql-vm", "reviews:v3")),
            Map.entry("virtual-service-ratings-test-abort", subsets("ratings:v1")),
            Map.entry("virtual-service-ratings-test-delay", subsets("ratings:v1")),
            Map.entry("virtual-service-reviews-50-v3", subsets("reviews:v1", "reviews:v3")),
            Map.entry("virtual-service-reviews-80-20", subsets("reviews:v1", "reviews:v2")),
            Map.entry("virtual-service-reviews-90-10", subsets("reviews:v1", "reviews:v2")),
            Map.entry("virtual-service-reviews-jason-v2-v3", subsets("reviews:v2", "reviews:v3")),
            Map.entry("virtual-service-reviews-test-v2", subsets("reviews:v1", "reviews:v2")),
            Map.entry("virtual-service-reviews-v2-v3", subsets("reviews:v2", "reviews:v3")),
            Map.entry("virtual-service-reviews-v3", subsets("reviews:v3")));

    /** Subset clusters of bookinfo services on 9080, as {@code service:subset}. */
    static Set<String> subsets(String... serviceSubsets) {
        Set<String> out = new TreeSet<>();
        for (String ss : serviceSubsets) {
            String[] p = ss.split(":");
            out.add("outbound|9080|" + p[1] + "|" + p[0] + ".default.svc.cluster.local");
        }
        return out;
    }

    static Stream<String> samples() throws Exception {
        try (Stream<Path> files = Files.list(GOLDEN.resolve("samples"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
        }
    }

    /** The copied samples are exactly the project's source samples, where the checkout sits beside them. */
    @Test
    void theSamplesAreTheSharedBookinfoSamples() throws Exception {
        Path shared = HOME.resolve("../shared/samples/bookinfo").normalize();
        Assumptions.assumeTrue(Files.isDirectory(shared), "no " + shared + " beside the checkout");
        List<String> names;
        try (Stream<Path> files = Files.list(shared)) {
            names = files.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertEquals(names, samples().toList(), "a sample was added or removed: copy it and generate its goldens");
        for (String n : names) {
            assertEquals(Files.readString(shared.resolve(n)), Files.readString(GOLDEN.resolve("samples").resolve(n)), n);
        }
    }

    @ParameterizedTest
    @MethodSource("samples")
    void productpageSidecarAndIngressGatewayMatchTheirGoldens(String sample) throws Exception {
        checkSample(GOLDEN.resolve("samples").resolve(sample));
    }

    /** Istio's security samples (not part of the shared bookinfo set): {@code golden/security-samples}. */
    static Stream<String> securitySamples() throws Exception {
        try (Stream<Path> files = Files.list(GOLDEN.resolve("security-samples"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("securitySamples")
    void securitySamplesMatchTheirGoldens(String sample) throws Exception {
        checkSample(GOLDEN.resolve("security-samples").resolve(sample));
    }

    /** EnvoyFilter examples of Istio's reference docs, adapted to bookinfo: {@code golden/envoyfilter-samples}. */
    static Stream<String> envoyFilterSamples() throws Exception {
        try (Stream<Path> files = Files.list(GOLDEN.resolve("envoyfilter-samples"))) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("envoyFilterSamples")
    void envoyFilterSamplesMatchTheirGoldens(String sample) throws Exception {
        checkSample(GOLDEN.resolve("envoyfilter-samples").resolve(sample));
    }

    private static void checkSample(Path sampleFile) throws Exception {
        String sample = sampleFile.getFileName().toString();
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(Files.readString(HOME.resolve("etc/config/bookinfo/services.yaml")));
            mesh.apply(baseWorkloads());
            mesh.apply(Files.readString(sampleFile));
            // a version of its own: the generators' caches are keyed by push version and shared in this JVM
            PushContext push = PushContext.build(mesh.registry, mesh.store, mesh.updates.index,
                    new MeshConfigLoader().defaults(), "cluster.local", VERSIONS.incrementAndGet());
            String dir = sample.substring(0, sample.length() - ".yaml".length());
            ProxyConfig sidecar = ProxyConfig.of(PRODUCTPAGE, push);
            ProxyConfig gateway = ProxyConfig.of(INGRESS, push);
            check(GOLDEN.resolve(dir).resolve("productpage.json"), sidecar.json());
            check(GOLDEN.resolve(dir).resolve("ingressgateway.json"), gateway.json());
            // acceptance 2: Envoy's proto constraints and cross-references; dangling routes only where REVIEW.md says
            Set<String> expected = EXPECTED_DANGLING.getOrDefault(dir, Set.of());
            assertEquals(List.of(), EnvoyConfigCheck.check(sidecar.typed()).unexpected(expected), dir + " productpage");
            assertEquals(List.of(), EnvoyConfigCheck.check(gateway.typed()).unexpected(expected), dir + " ingress");
            Set<String> dangling = new TreeSet<>();
            EnvoyConfigCheck.check(sidecar.typed()).dangling().forEach(d -> dangling.add(d.cluster()));
            EnvoyConfigCheck.check(gateway.typed()).dangling().forEach(d -> dangling.add(d.cluster()));
            assertEquals(expected, dangling, dir + ": the expected dangling references all occur");
        }
    }

    /** Compares as JSON trees (key order and whitespace do not matter); writes the file in update mode. */
    static void check(Path golden, JsonObject actual) throws Exception {
        String pretty = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(actual) + "\n";
        if (UPDATE) {
            Files.createDirectories(golden.getParent());
            Files.writeString(golden, pretty);
            return;
        }
        if (!Files.exists(golden)) {
            fail(golden + " is missing; generate it with -Dgolden.update=true and review it");
        }
        JsonElement expected = JsonParser.parseString(Files.readString(golden));
        String diff = firstDifference("", expected, actual);
        if (diff != null) {
            fail(HOME.relativize(golden) + " differs at " + diff
                    + "\n(if the change is intended: -Dgolden.update=true, review the diff and REVIEW.md)");
        }
        assertEquals(expected, actual);
    }

    /** The path of the first difference between two JSON trees, with both values; null when equal. */
    static String firstDifference(String path, JsonElement a, JsonElement b) {
        if (a.equals(b)) {
            return null;
        }
        if (a.isJsonObject() && b.isJsonObject()) {
            Set<String> keys = new TreeSet<>(a.getAsJsonObject().keySet());
            keys.addAll(b.getAsJsonObject().keySet());
            for (String k : keys) {
                JsonElement x = a.getAsJsonObject().get(k);
                JsonElement y = b.getAsJsonObject().get(k);
                if (x == null || y == null) {
                    return path + "." + k + ": expected " + x + ", got " + y;
                }
                String d = firstDifference(path + "." + k, x, y);
                if (d != null) {
                    return d;
                }
            }
        }
        if (a.isJsonArray() && b.isJsonArray()) {
            JsonArray x = a.getAsJsonArray();
            JsonArray y = b.getAsJsonArray();
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                String d = firstDifference(path + "[" + i + "]", x.get(i), y.get(i));
                if (d != null) {
                    return d;
                }
            }
            return path + ": expected " + x.size() + " elements, got " + y.size();
        }
        return path + ": expected " + abbreviate(a) + ", got " + abbreviate(b);
    }

    private static String abbreviate(JsonElement e) {
        String s = e.toString();
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    /**
     * One proxy's complete config from the server's generators, as a proxy fetches it: wildcard
     * LDS, the RDS names its listeners use, wildcard CDS, EDS for its EDS clusters.
     */
    record ProxyConfig(List<Any> listeners, List<Any> routes, List<Any> clusters, List<Any> endpoints) {
        static ProxyConfig of(Proxy proxy, PushContext push) throws Exception {
            Generators generators = Generators.standalone(new XdsCache(false));
            List<Any> lds = generators.forType(TypeUrls.LISTENER, proxy).generate(proxy, push, Set.of(), true);
            Set<String> routeNames = new TreeSet<>();
            for (Any a : lds) {
                for (var chain : a.unpack(Listener.class).getFilterChainsList()) {
                    for (var f : chain.getFiltersList()) {
                        if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                            var hcm = f.getTypedConfig().unpack(HttpConnectionManager.class);
                            if (hcm.hasRds()) {
                                routeNames.add(hcm.getRds().getRouteConfigName());
                            }
                        }
                    }
                }
            }
            List<Any> rds = generators.forType(TypeUrls.ROUTE, proxy).generate(proxy, push, routeNames, false);
            List<Any> cds = generators.forType(TypeUrls.CLUSTER, proxy).generate(proxy, push, Set.of(), true);
            Set<String> edsNames = new TreeSet<>();
            for (Any a : cds) {
                Cluster c = a.unpack(Cluster.class);
                if (c.getType() == Cluster.DiscoveryType.EDS) {
                    edsNames.add(c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
                            : c.getEdsClusterConfig().getServiceName());
                }
            }
            List<Any> eds = generators.forType(TypeUrls.ENDPOINT, proxy).generate(proxy, push, edsNames, false);
            return new ProxyConfig(lds, rds, cds, eds);
        }

        /** The same resources unpacked, for the validator. */
        io.meshpilot.networking.validation.ProxyConfig typed() throws Exception {
            return new io.meshpilot.networking.validation.ProxyConfig(unpack(listeners, Listener.class),
                    unpack(routes, RouteConfiguration.class),
                    unpack(clusters, Cluster.class),
                    unpack(endpoints, ClusterLoadAssignment.class));
        }

        private static <T extends Message> List<T> unpack(List<Any> in, Class<T> type)
                throws Exception {
            List<T> out = new ArrayList<>();
            for (Any a : in) {
                out.add(a.unpack(type));
            }
            return out;
        }

        JsonObject json() throws Exception {
            JsonObject o = new JsonObject();
            o.add("listeners", array(listeners));
            o.add("routes", array(routes));
            o.add("clusters", array(clusters));
            o.add("endpoints", array(endpoints));
            return o;
        }

        private static JsonArray array(List<Any> resources) throws Exception {
            JsonFormat.Printer printer = JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY);
            JsonArray out = new JsonArray();
            List<Any> sorted = new ArrayList<>(resources);
            for (Any a : sorted) {
                out.add(JsonParser.parseString(printer.print(a)));
            }
            return out;
        }
    }
}
