package io.meshpilot.networking.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PILOT_TRACE_SAMPLING as istiod reads it (pilot/pkg/features/telemetry.go TraceSampling: a
 * percentage, outside 0..100 warned and 1.0) and uses it (networking/core/tracing.go
 * proxyConfigSamplingValue: the random sampling of every connection manager whose ProxyConfig
 * leaves {@code tracing.sampling} at 0). istiod's chart sets it on every install.
 */
class PilotTraceSamplingTest {
    private static final String SIDECAR = "sidecar~10.9.0.1~reviews-v1-abc.default~default.svc.cluster.local";

    @Test
    void theVariableIsTheSamplingOfEveryConnectionManagerWithoutAProxyConfigSampling(@TempDir Path dir)
            throws Exception {
        TestServers.copyBookinfo(dir);
        Files.writeString(dir.resolve("mesh"), "enableTracing: true\n");
        assertEquals(Set.of(42.5), randomSamplings(dir, Map.of("PILOT_TRACE_SAMPLING", "42.5")));
    }

    @Test
    void theProxyConfigSamplingWinsOverTheVariable(@TempDir Path dir) throws Exception {
        TestServers.copyBookinfo(dir);
        Files.writeString(dir.resolve("mesh"), "defaultConfig: {tracing: {sampling: 7}}\n");
        assertEquals(Set.of(7.0), randomSamplings(dir, Map.of("PILOT_TRACE_SAMPLING", "42.5")));
    }

    @Test
    void outOfRangeIsWarnedAndOnePercentAsIstiod() {
        for (String value : List.of("100.5", "-1")) {
            PilotFeatures f = PilotFeatures.fromEnv(Map.of("PILOT_TRACE_SAMPLING", value)::get);
            assertEquals(1.0, f.traceSampling().percent(), value);
            assertEquals("PILOT_TRACE_SAMPLING out of range: " + value + " (0 to 100), using 1.0",
                    f.traceSampling().warning().orElseThrow());
        }
        PilotFeatures inRange = PilotFeatures.fromEnv(Map.of("PILOT_TRACE_SAMPLING", "100")::get);
        assertEquals(100.0, inRange.traceSampling().percent());
        assertFalse(inRange.traceSampling().warning().isPresent());
        assertEquals(1.0, PilotFeatures.fromEnv(Map.<String, String>of()::get).traceSampling().percent());
    }

    @Test
    void aValueThatIsNoNumberStopsStartUpNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PilotFeatures.fromEnv(Map.of("PILOT_TRACE_SAMPLING", "half")::get));
        assertTrue(e.getMessage().startsWith("PILOT_TRACE_SAMPLING=\"half\""), e.getMessage());
    }

    /** The random sampling of every HCM in the sidecar's LDS, fetched over ADS. */
    private static Set<Double> randomSamplings(Path dir, Map<String, String> env) throws Exception {
        try (MeshPilotServer server = TestServers.start(dir, env);
             AdsClient ads = new AdsClient(server.ports().get("grpc"), SIDECAR, Map.of())) {
            ads.autoAnswer("");
            ads.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = ads.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
            Set<Double> samplings = new TreeSet<>();
            for (HttpConnectionManager hcm : connectionManagers(lds)) {
                if (hcm.hasTracing()) {
                    samplings.add(hcm.getTracing().getRandomSampling().getValue());
                }
            }
            assertFalse(samplings.isEmpty(), "no traced connection manager in " + lds.getResourcesCount() + " listeners");
            return samplings;
        }
    }

    private static List<HttpConnectionManager> connectionManagers(DiscoveryResponse lds) throws Exception {
        List<HttpConnectionManager> out = new ArrayList<>();
        for (Any resource : lds.getResourcesList()) {
            Listener l = resource.unpack(Listener.class);
            List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
            if (l.hasDefaultFilterChain()) {
                chains.add(l.getDefaultFilterChain());
            }
            for (FilterChain chain : chains) {
                for (Filter f : chain.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        out.add(f.getTypedConfig().unpack(HttpConnectionManager.class));
                    }
                }
            }
        }
        return out;
    }
}
