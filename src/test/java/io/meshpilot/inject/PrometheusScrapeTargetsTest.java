package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonObject;
import io.meshpilot.mesh.MeshConfigLoader;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Scrape ports istiod's applyPrometheusMerge refuses: the agent's own port and the ports the
 * data plane owns, in {@code prometheus.istio.io/scrape-targets} or {@code prometheus.io/port}.
 */
class PrometheusScrapeTargetsTest {
    private static SidecarInjector.Outcome inject(Map<String, String> annotations) {
        SidecarInjector injector = new SidecarInjector(SidecarInjector.Settings::defaults, new MeshConfigLoader()::defaults,
                "", false, ns -> null);
        JsonObject pod = SidecarInjectionTableTest.with(SidecarInjectionTableTest.hello(), "annotations", annotations);
        return injector.inject(pod, "default", "/inject");
    }

    @Test
    void aTargetOnAReservedPortRefusesThePodNamingWhy() {
        var outcome = inject(Map.of("prometheus.istio.io/scrape-targets", "8080:/metrics,15090"));
        assertEquals(SidecarInjector.Kind.FAILED, outcome.kind());
        assertEquals("Pod injection failed: invalid prometheus scrape targets: target port 15090 is reserved for Istio"
                + " (Envoy Prometheus (already merged)) and cannot be scraped", outcome.message());
    }

    @Test
    void aLegacyPortOnTheAgentsPortOrNotANumberIsRefused() {
        assertEquals("Pod injection failed: invalid prometheus scrape configuration: invalid port \"http\"",
                inject(Map.of("prometheus.io/port", "http")).message());
        assertEquals(SidecarInjector.Kind.INJECTED, inject(Map.of("prometheus.io/port", "15020")).kind(),
                "the agent's port: already merged (a re-injection), left alone");
    }
}
