package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.meshpilot.features.PilotFeatures;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** istiod's AuthorizeDebugRequest table, and the two environment variables that change it. */
class DebugAuthorizerTest {
    static final List<String> SYSTEM = List.of("spiffe://cluster.local/ns/istio-system/sa/istiod");
    static final List<String> WORKLOAD = List.of("spiffe://cluster.local/ns/default/sa/sleep");
    final DebugAuthorizer defaults = new DebugAuthorizer(PilotFeatures.DebugAuth.DEFAULTS);

    @Test
    void theSystemNamespaceReadsEverything() {
        assertInstanceOf(DebugAuthorizer.Decision.Everything.class, defaults.decide(SYSTEM, "/debug/syncz", "istio-system"));
        assertInstanceOf(DebugAuthorizer.Decision.Everything.class, defaults.decide(SYSTEM, "/api/v1/server", "istio-system"));
        // the mesh root namespace is the system namespace when set
        assertInstanceOf(DebugAuthorizer.Decision.Forbidden.class, defaults.decide(SYSTEM, "/debug/syncz", "mesh-root"));
    }

    @Test
    void aWorkloadNamespaceReadsItsProxiesThroughThreeEndpoints() {
        for (String path : List.of("/debug/config_dump", "/debug/ndsz", "/debug/edsz")) {
            assertEquals(new DebugAuthorizer.Decision.OwnNamespace("default"), defaults.decide(WORKLOAD, path, "istio-system"));
        }
        for (String path : List.of("/debug/syncz", "/debug/adsz", "/debug", "/api/v1/server")) {
            assertInstanceOf(DebugAuthorizer.Decision.Forbidden.class, defaults.decide(WORKLOAD, path, "istio-system"), path);
        }
    }

    @Test
    void anIdentityOfAnotherFormIsForbidden() {
        var d = defaults.decide(List.of("spiffe://cluster.local/something"), "/debug/config_dump", "istio-system");
        assertInstanceOf(DebugAuthorizer.Decision.Forbidden.class, d);
    }

    @Test
    void allowedNamespacesAndTheSwitchFromTheEnvironment() {
        var features = PilotFeatures.fromEnv(Map.of("DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES", "ops, default")::get);
        assertEquals(new PilotFeatures.DebugAuth(true, Set.of("ops", "default")), features.debugAuth());
        // every endpoint, but by proxyID only the namespace's own proxies (istiod's getDebugConnection)
        assertEquals(new DebugAuthorizer.Decision.OwnNamespace("default"),
                new DebugAuthorizer(features.debugAuth()).decide(WORKLOAD, "/debug/syncz", "istio-system"));
        var off = PilotFeatures.fromEnv(Map.of("ENABLE_DEBUG_ENDPOINT_AUTH", "false")::get).debugAuth();
        assertInstanceOf(DebugAuthorizer.Decision.Everything.class,
                new DebugAuthorizer(off).decide(List.of("spiffe://cluster.local/x"), "/debug/syncz", "istio-system"));
        assertEquals(PilotFeatures.DebugAuth.DEFAULTS, PilotFeatures.fromEnv(Map.<String, String>of()::get).debugAuth());
    }
}
