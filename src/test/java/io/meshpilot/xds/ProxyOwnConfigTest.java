package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ProxyConfig istio-agent sends as {@code PROXY_CONFIG} (the workload's effective config: the
 * mesh default with the pod's {@code proxy.istio.io/config} over it) decides what istiod reads
 * through {@code ProxyConfigOrDefault}: the metadata-exchange headers mode (review s3 finding 7)
 * and the tracing sampling and tags of the legacy {@code enableTracing} tracing. Two productpage
 * sidecars in one scope, one with its own settings: only its listeners change, so the listener
 * cache does not share them. A PROXY_CONFIG that is not a ProxyConfig refuses the node, as
 * istiod's metadata parse does.
 */
class ProxyOwnConfigTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final Map<String, String> PRODUCTPAGE_META = Map.of("NAMESPACE", "default",
            "LABELS", "{\"app\":\"productpage\",\"version\":\"v1\"}");

    @TempDir
    static Path dir;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static Map<String, String> withProxyConfig(String json) {
        Map<String, String> m = new HashMap<>(PRODUCTPAGE_META);
        m.put("PROXY_CONFIG", json);
        return Map.copyOf(m);
    }

    static HttpConnectionManager reviewsHcm(AdsClient c) throws Exception {
        c.subscribe(TypeUrls.LISTENER, List.of());
        List<Listener> listeners = EnvoySidecarXdsTest.unpack(c.await(TypeUrls.LISTENER, WAIT), Listener.class);
        Listener reviews = listeners.stream().filter(l -> l.getName().equals("0.0.0.0_9080")).findFirst()
                .orElseThrow(() -> new AssertionError("no 0.0.0.0_9080"));
        return reviews.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
    }

    static String metadataExchange(HttpConnectionManager hcm) {
        return hcm.getHttpFiltersList().stream().filter(f -> f.getName().equals("istio.metadata_exchange"))
                .map(HttpFilter::toString).findFirst().orElseThrow(() -> new AssertionError("no istio.metadata_exchange"));
    }

    @Test
    void theProxysOwnProxyConfigDecidesMetadataExchangeHeadersAndTracing() throws Exception {
        int port = server.ports().get("grpc");
        try (AdsClient plain = new AdsClient(port, "sidecar~10.0.0.7~productpage-v1-a.default~default.svc.cluster.local",
                withProxyConfig("{\"discoveryAddress\":\"istiod.istio-system.svc:15012\"}"));
             AdsClient own = new AdsClient(port, "sidecar~10.0.0.8~productpage-v1-b.default~default.svc.cluster.local",
                     withProxyConfig("{\"discoveryAddress\":\"istiod.istio-system.svc:15012\",\"unknownFutureField\":1,"
                             + "\"proxyHeaders\":{\"metadataExchangeHeaders\":{\"mode\":\"IN_MESH\"}},"
                             + "\"tracing\":{\"sampling\":42,\"customTags\":{\"team\":{\"literal\":{\"value\":\"shop\"}}}}}"))) {
            HttpConnectionManager defaults = reviewsHcm(plain);
            HttpConnectionManager mine = reviewsHcm(own);

            assertFalse(metadataExchange(defaults).contains("skip_external_clusters"), metadataExchange(defaults));
            assertTrue(metadataExchange(mine).contains("skip_external_clusters"),
                    "IN_MESH from the proxy's own ProxyConfig: " + metadataExchange(mine));

            assertTrue(defaults.hasTracing() && mine.hasTracing(), "the mesh's enableTracing applies to both");
            assertEquals(42.0, mine.getTracing().getRandomSampling().getValue(), 1e-9);
            assertTrue(defaults.getTracing().getRandomSampling().getValue() != 42.0);
            assertTrue(mine.getTracing().getCustomTagsList().stream().anyMatch(t -> t.getTag().equals("team")
                    && t.getLiteral().getValue().equals("shop")), mine.getTracing().toString());
            assertTrue(defaults.getTracing().getCustomTagsList().stream().noneMatch(t -> t.getTag().equals("team")));
        }
    }

    @Test
    void aProxyConfigThatIsNotOneRefusesTheNode() throws Exception {
        int port = server.ports().get("grpc");
        try (AdsClient bad = new AdsClient(port, "sidecar~10.0.0.9~productpage-v1-c.default~default.svc.cluster.local",
                withProxyConfig("{\"concurrency\":\"many\"}"))) {
            bad.subscribe(TypeUrls.LISTENER, List.of());
            Await.until("the stream is refused", WAIT, () -> bad.error() != null);
            assertTrue(String.valueOf(bad.error()).contains("PROXY_CONFIG"), String.valueOf(bad.error()));
        }
        try (AdsClient good = new AdsClient(port, "sidecar~10.0.0.10~productpage-v1-d.default~default.svc.cluster.local",
                withProxyConfig("{}"))) {
            good.subscribe(TypeUrls.LISTENER, List.of());
            assertNotNull(good.await(TypeUrls.LISTENER, WAIT), "an empty ProxyConfig is a ProxyConfig");
            assertNull(good.error());
        }
    }
}
