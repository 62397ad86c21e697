package io.meshpilot.networking.envoyfilter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.networking.validation.ProtoConstraints;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An EnvoyFilter file in a running server's --configDir reaches a sidecar over real ADS: its
 * Lua HTTP filter sits before the router of the outbound HTTP listener and its cluster MERGE
 * changes the connect timeout; its patch with an unknown {@code @type} is left out (the
 * config the sidecar gets passes Envoy's proto constraints, so it ACKs) and listed in
 * {@code /debug/push_status}; deleting the file restores the original config.
 */
class EnvoyFilterAdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String WEB_CLUSTER = "outbound|80||web.shop.svc.cluster.local";
    static final String LUA = "envoy.filters.http.lua";
    static final String STATUS = "pilot_envoy_filter_status";
    /** The service the EnvoyFilter tests patch around: web.shop on 80 (HTTP), one endpoint. */
    static final String WEB_SERVICE_ENTRY = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: web, namespace: shop}
            spec:
              hosts: [web.shop.svc.cluster.local]
              location: MESH_INTERNAL
              ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}]
              resolution: STATIC
              endpoints: [{address: 10.0.0.1}]
            """;

    @TempDir
    static Path dir;
    static Path config;
    static MeshPilotServer server;
    static int grpc;
    static int http;
    static int monitoring;

    @BeforeAll
    static void start() throws Exception {
        config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("web.yaml"), WEB_SERVICE_ENTRY);
        server = TestServers.start(dir);
        grpc = server.ports().get("grpc");
        http = server.ports().get("http");
        monitoring = server.ports().get("monitoring");
    }

    /** The push-status gauge of skipped EnvoyFilter patches in /metrics. */
    static double gauge() {
        var f = PrometheusTextParser.parse(Http.get(monitoring, "/metrics").body()).get(STATUS);
        assertTrue(f != null && f.samples().size() == 1, STATUS + ": " + f);
        return f.samples().get(0).value();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static final String ENVOY_FILTER = """
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: lua-and-timeout, namespace: shop}
            spec:
              configPatches:
              - applyTo: HTTP_FILTER
                match:
                  context: SIDECAR_OUTBOUND
                  listener:
                    portNumber: 80
                    filterChain:
                      filter:
                        name: envoy.filters.network.http_connection_manager
                        subFilter: {name: envoy.filters.http.router}
                patch:
                  operation: INSERT_BEFORE
                  value:
                    name: envoy.filters.http.lua
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
                      default_source_code:
                        inline_string: |
                          function envoy_on_request(handle)
                            handle:headers():add("x-lua", "1")
                          end
              - applyTo: CLUSTER
                match:
                  context: SIDECAR_OUTBOUND
                  cluster: {service: web.shop.svc.cluster.local, portNumber: 80}
                patch:
                  operation: MERGE
                  value: {connect_timeout: 7s}
              - applyTo: HTTP_FILTER
                match:
                  context: SIDECAR_OUTBOUND
                  listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager}}}
                patch:
                  operation: INSERT_FIRST
                  value:
                    name: istio.stats
                    typed_config: {"@type": type.googleapis.com/stats.PluginConfig}
            """;

    /** The latest response of each type (each is ACKed by the client as it arrives). */
    static final Map<String, DiscoveryResponse> LATEST = new ConcurrentHashMap<>();

    /** Waits until the latest LDS and CDS responses satisfy {@code lds} and {@code cds}; returns them. */
    static Map<String, DiscoveryResponse> awaitConfig(AdsClient c, Predicate<DiscoveryResponse> lds,
                                                      Predicate<DiscoveryResponse> cds) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            DiscoveryResponse r = c.next(Duration.ofMillis(200));
            if (r != null) {
                LATEST.put(r.getTypeUrl(), r);
            }
            DiscoveryResponse l = LATEST.get(TypeUrls.LISTENER);
            DiscoveryResponse k = LATEST.get(TypeUrls.CLUSTER);
            if (l != null && k != null && lds.test(l) && cds.test(k)) {
                return Map.copyOf(LATEST);
            }
        }
        throw new AssertionError("the sidecar's config did not become as expected: " + LATEST.keySet());
    }

    static List<String> outboundHttpFilters(DiscoveryResponse lds) {
        try {
            for (Any a : lds.getResourcesList()) {
                Listener l = a.unpack(Listener.class);
                if (l.getName().equals("0.0.0.0_80")) {
                    HttpConnectionManager hcm = l.getFilterChains(0).getFilters(0).getTypedConfig()
                            .unpack(HttpConnectionManager.class);
                    return hcm.getHttpFiltersList().stream().map(HttpFilter::getName).toList();
                }
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no 0.0.0.0_80 listener");
    }

    static long webConnectTimeout(DiscoveryResponse cds) {
        try {
            for (Any a : cds.getResourcesList()) {
                Cluster c = a.unpack(Cluster.class);
                if (c.getName().equals(WEB_CLUSTER)) {
                    return c.getConnectTimeout().getSeconds();
                }
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no " + WEB_CLUSTER);
    }

    /** What Envoy would reject in these resources (its proto constraints, as the goldens are checked). */
    static List<String> violations(DiscoveryResponse r) throws Exception {
        List<String> out = new ArrayList<>();
        for (Any a : r.getResourcesList()) {
            var m = r.getTypeUrl().equals(TypeUrls.LISTENER) ? a.unpack(Listener.class) : a.unpack(Cluster.class);
            ProtoConstraints.violations(r.getTypeUrl(), m).forEach(v -> out.add(v.toString()));
        }
        return out;
    }

    static JsonObject envoyFilterStatus() {
        Http.Reply r = Http.get(http, "/debug/push_status");
        assertEquals(200, r.status(), r.body());
        JsonObject status = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("ProxyStatus");
        return status.has(STATUS) ? status.getAsJsonObject(STATUS) : new JsonObject();
    }

    @Test
    void patchesReachTheSidecarTheBadOneIsReportedAndDeletingRestores() throws Exception {
        try (AdsClient c = new AdsClient(grpc, "sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local",
                Map.of("NAMESPACE", "shop"))) {
            c.autoAnswer(null);
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.subscribe(TypeUrls.LISTENER, List.of());
            var first = awaitConfig(c, r -> true, r -> true);
            List<String> original = outboundHttpFilters(first.get(TypeUrls.LISTENER));
            long originalTimeout = webConnectTimeout(first.get(TypeUrls.CLUSTER));
            assertFalse(original.contains(LUA), original.toString());
            assertEquals(0, envoyFilterStatus().size());

            Path tmp = dir.resolve("ef.yaml.tmp");
            Files.writeString(tmp, ENVOY_FILTER);
            Files.move(tmp, config.resolve("ef.yaml"), StandardCopyOption.ATOMIC_MOVE);

            var patched = awaitConfig(c, r -> outboundHttpFilters(r).contains(LUA), r -> webConnectTimeout(r) == 7);
            DiscoveryResponse patchedLds = patched.get(TypeUrls.LISTENER);
            List<String> filters = outboundHttpFilters(patchedLds);
            assertEquals(filters.indexOf("envoy.filters.http.router") - 1, filters.indexOf(LUA), filters.toString());
            assertFalse(filters.contains("istio.stats"), "the unconvertible patch is skipped: " + filters);
            assertEquals(List.of(), violations(patchedLds));
            assertEquals(List.of(), violations(patched.get(TypeUrls.CLUSTER)));

            JsonObject status = envoyFilterStatus();
            assertEquals(1, status.size(), status.toString());
            String message = status.getAsJsonObject("shop/lua-and-timeout configPatches[2]").get("message").getAsString();
            assertTrue(message.contains("unknown @type type.googleapis.com/stats.PluginConfig"), message);
            assertEquals(1, gauge());

            Files.delete(config.resolve("ef.yaml"));
            awaitConfig(c, r -> outboundHttpFilters(r).equals(original), r -> webConnectTimeout(r) == originalTimeout);
            assertEquals(0, envoyFilterStatus().size());
            assertEquals(0, gauge());
            assertTrue(c.error() == null, String.valueOf(c.error()));
        }
    }
}
