package io.meshpilot.networking.envoyfilter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.http.lua.v3.Lua;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.networking.validation.ProtoConstraints;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An EnvoyFilter that puts an HTTP filter with {@code config_discovery} into a sidecar's
 * outbound listener and ADDs its config with an EXTENSION_CONFIG patch (the way istiod users
 * ship a filter over ECDS): over real ADS the listener names it, an ECDS subscription for that
 * name gets the patched TypedExtensionConfig, an edit of the EnvoyFilter pushes the new config
 * under a new version, its patch without a name is listed in /debug/push_status, and deleting
 * the file leaves ECDS with nothing for the name.
 */
class EnvoyFilterEcdsAdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String NAME = "shop.header-lua";
    static final String STATUS = "pilot_envoy_filter_status";

    @TempDir
    static Path dir;
    static Path config;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("web.yaml"), EnvoyFilterAdsTest.WEB_SERVICE_ENTRY);
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String envoyFilter(String header) {
        return """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: header-lua, namespace: shop}
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
                        name: %1$s
                        config_discovery:
                          config_source: {ads: {}, initial_fetch_timeout: 0s}
                          type_urls: [type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua]
                  - applyTo: EXTENSION_CONFIG
                    patch:
                      operation: ADD
                      value:
                        name: %1$s
                        typed_config:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
                          default_source_code:
                            inline_string: |
                              function envoy_on_request(handle)
                                handle:headers():add("%2$s", "1")
                              end
                  - applyTo: EXTENSION_CONFIG
                    patch:
                      operation: ADD
                      value:
                        typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}
                """.formatted(NAME, header);
    }

    static void write(String yaml) throws Exception {
        Path tmp = dir.resolve("ef.yaml.tmp");
        Files.writeString(tmp, yaml);
        Files.move(tmp, config.resolve("ef.yaml"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** The latest response of each type; each is ACKed with the names the test subscribes. */
    static final Map<String, DiscoveryResponse> LATEST = new ConcurrentHashMap<>();

    /** Waits until the latest response of {@code type} satisfies {@code ok}. */
    static DiscoveryResponse await(AdsClient c, String type, Predicate<DiscoveryResponse> ok) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            DiscoveryResponse latest = LATEST.get(type);
            if (latest != null && ok.test(latest)) {
                return latest;
            }
            DiscoveryResponse r = c.next(Duration.ofMillis(200));
            if (r != null) {
                c.ack(r, r.getTypeUrl().equals(TypeUrls.EXTENSION_CONFIG) ? List.of(NAME) : List.of());
                LATEST.put(r.getTypeUrl(), r);
            }
        }
        throw new AssertionError("no " + type + " response as expected; latest: " + LATEST.get(type));
    }

    static List<String> outboundHttpFilters(DiscoveryResponse lds) throws Exception {
        for (Any a : lds.getResourcesList()) {
            Listener l = a.unpack(Listener.class);
            if (l.getName().equals("0.0.0.0_80")) {
                return l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class)
                        .getHttpFiltersList().stream().map(f -> f.getName() + (f.hasConfigDiscovery() ? "(ecds)" : ""))
                        .toList();
            }
        }
        throw new AssertionError("no 0.0.0.0_80 listener");
    }

    static boolean references(DiscoveryResponse lds) {
        try {
            return outboundHttpFilters(lds).contains(NAME + "(ecds)");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The Lua source of the one extension config in {@code ecds}, "" when there is none. */
    static String luaSource(DiscoveryResponse ecds) {
        try {
            if (ecds.getResourcesCount() == 0) {
                return "";
            }
            assertEquals(1, ecds.getResourcesCount(), ecds.toString());
            TypedExtensionConfig c = ecds.getResources(0).unpack(TypedExtensionConfig.class);
            assertEquals(NAME, c.getName());
            assertEquals(List.of(), ProtoConstraints.violations(TypeUrls.EXTENSION_CONFIG, c));
            return c.getTypedConfig().unpack(Lua.class).getDefaultSourceCode().getInlineString();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The {@code pilot_envoy_filter_status} entries of /debug/push_status. */
    static JsonObject envoyFilterStatus() {
        Http.Reply r = Http.get(server.ports().get("http"), "/debug/push_status");
        assertEquals(200, r.status(), r.body());
        JsonObject status = JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("ProxyStatus");
        return status.has(STATUS) ? status.getAsJsonObject(STATUS) : new JsonObject();
    }

    @Test
    void anAddedExtensionConfigIsServedOverEcdsByNameAndFollowsEdits() throws Exception {
        write(envoyFilter("x-first"));
        try (AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local",
                Map.of("NAMESPACE", "shop"))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = await(c, TypeUrls.LISTENER, EnvoyFilterEcdsAdsTest::references);
            List<String> filters = outboundHttpFilters(lds);
            assertEquals(filters.indexOf("envoy.filters.http.router") - 1, filters.indexOf(NAME + "(ecds)"), filters.toString());

            c.subscribe(TypeUrls.EXTENSION_CONFIG, List.of(NAME));
            DiscoveryResponse first = await(c, TypeUrls.EXTENSION_CONFIG, r -> r.getResourcesCount() > 0);
            assertTrue(luaSource(first).contains("\"x-first\""), luaSource(first));

            JsonObject status = envoyFilterStatus();
            assertEquals(1, status.size(), status.toString());
            String message = status.getAsJsonObject("shop/header-lua configPatches[2]").get("message").getAsString();
            assertTrue(message.contains("no name"), message);

            // the edit reaches ECDS: a new version with the new config (nothing cached under the old patches)
            write(envoyFilter("x-second"));
            DiscoveryResponse second = await(c, TypeUrls.EXTENSION_CONFIG,
                    r -> luaSource(r).contains("\"x-second\""));
            assertNotEquals(first.getVersionInfo(), second.getVersionInfo());

            Files.delete(config.resolve("ef.yaml"));
            await(c, TypeUrls.EXTENSION_CONFIG, r -> r.getResourcesCount() == 0);
            await(c, TypeUrls.LISTENER, r -> !references(r));
            assertEquals(0, envoyFilterStatus().size());
            assertTrue(c.error() == null, String.valueOf(c.error()));
        }
    }
}
