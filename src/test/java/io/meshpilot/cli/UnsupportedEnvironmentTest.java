package io.meshpilot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.EnvironmentUsage;
import io.meshpilot.features.EnvironmentUsage.Unsupported;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * istiod's variables that MeshPilot does not implement are named once at start-up; the ones
 * it reads, and the ones istiod does not define, are not.
 */
class UnsupportedEnvironmentTest {
    /** Parses the flags as start-up does and returns what it left unread. */
    private static List<Unsupported> unsupportedAfterParsing(Map<String, String> env, String... flags) {
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(env::get);
        Main.parseDiscoveryArgs(flags, usage);
        return usage.unsupported();
    }

    @Test
    void istiodChartVariablesWeDoNotImplementAreNamedWithTheirValues() {
        // a subset of what istiod's chart sets on the discovery container
        Map<String, String> env = Map.of(
                "PILOT_CERT_PROVIDER", "istiod",
                "PILOT_TRACE_SAMPLING", "1",
                "PILOT_ENABLE_GATEWAY_API", "true",
                "REVISION", "default",
                "POD_NAME", "istiod-abc",
                "POD_NAMESPACE", "istio-system",
                "PILOT_DEBOUNCE_AFTER", "200ms",
                "KUBECONFIG", "/tmp/none",
                "ENABLE_CA_SERVER", "false",
                "MY_OWN_VARIABLE", "x");
        env = new HashMap<>(env);
        env.put("UNSAFE_ENABLE_ADMIN_ENDPOINTS", "true");
        List<String> names = unsupportedAfterParsing(env).stream().map(Unsupported::name).toList();
        assertTrue(names.contains("UNSAFE_ENABLE_ADMIN_ENDPOINTS"), names.toString());
        for (String read : List.of("REVISION", "POD_NAME", "POD_NAMESPACE", "PILOT_DEBOUNCE_AFTER", "KUBECONFIG",
                "PILOT_CERT_PROVIDER", "PILOT_TRACE_SAMPLING", "ENABLE_CA_SERVER", "PILOT_ENABLE_GATEWAY_API")) {
            assertTrue(!names.contains(read), read + " is read by start-up, yet reported: " + names);
        }
        assertTrue(!names.contains("MY_OWN_VARIABLE"), "istiod does not define it: " + names);
        assertEquals(names.stream().sorted().toList(), names, "listed by name");
    }

    @Test
    void theStartupLineCarriesNameAndValueAndIsAbsentWhenAllIsRead() {
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(Map.of("UNSAFE_ENABLE_ADMIN_ENDPOINTS", "false")::get);
        Main.parseDiscoveryArgs(new String[0], usage);
        assertEquals("istiod environment variables not supported by MeshPilot, ignored: UNSAFE_ENABLE_ADMIN_ENDPOINTS=false",
                usage.unsupportedWarning());

        EnvironmentUsage clean = EnvironmentUsage.ofIstiod(Map.of("PILOT_DEBOUNCE_AFTER", "1s")::get);
        Main.parseDiscoveryArgs(new String[0], clean);
        assertNull(clean.unsupportedWarning());
    }
}
