package io.meshpilot.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.PilotFeatures.GatewayApi;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Gateway API variables are read as istiod reads them (pilot/pkg/features/experimental.go
 * and pilot.go at 86c9f01), so they are no longer named in the start-up warning; the two that
 * switch on APIs MeshPilot does not convert are warned about by name when turned on.
 */
class GatewayApiEnvTest {
    static final List<String> VARIABLES = List.of("PILOT_ENABLE_GATEWAY_API", "PILOT_ENABLE_GATEWAY_API_STATUS",
            "PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER", "PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER",
            "PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS", "PILOT_ENABLE_ALPHA_GATEWAY_API",
            "ENABLE_GATEWAY_API_INFERENCE_EXTENSION", "ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT",
            "PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME", "PILOT_GATEWAY_API_CONTROLLER_NAME",
            "PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API", "PILOT_ENABLE_STRICT_GATEWAY_MERGING");

    @Test
    void defaultsAreIstiods() {
        GatewayApi g = PilotFeatures.fromEnv(Map.<String, String>of()::get).gatewayApi();
        assertEquals(new GatewayApi(true, true, true, true, true, false, false, true, "istio",
                "istio.io/gateway-controller", true, true), g);
        assertEquals(List.of(), g.warnings());
    }

    @Test
    void everyVariableIsReadAndABadValueNamesIt() {
        GatewayApi g = PilotFeatures.fromEnv(Map.ofEntries(Map.entry("PILOT_ENABLE_GATEWAY_API", "false"),
                Map.entry("PILOT_ENABLE_GATEWAY_API_STATUS", "0"),
                Map.entry("PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER", "f"),
                Map.entry("PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER", "false"),
                Map.entry("PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS", "false"),
                Map.entry("PILOT_ENABLE_ALPHA_GATEWAY_API", "true"),
                Map.entry("ENABLE_GATEWAY_API_INFERENCE_EXTENSION", "true"),
                Map.entry("ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT", "false"),
                Map.entry("PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME", "mesh-gw"),
                Map.entry("PILOT_GATEWAY_API_CONTROLLER_NAME", "example.com/gateway"),
                Map.entry("PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API", "false"),
                Map.entry("PILOT_ENABLE_STRICT_GATEWAY_MERGING", "false"))::get).gatewayApi();
        assertEquals(new GatewayApi(false, false, false, false, false, true, true, false, "mesh-gw",
                "example.com/gateway", false, false), g);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                PilotFeatures.fromEnv(Map.of("PILOT_ENABLE_GATEWAY_API_STATUS", "yes")::get));
        assertTrue(e.getMessage().startsWith("PILOT_ENABLE_GATEWAY_API_STATUS=\"yes\""), e.getMessage());
    }

    @Test
    void theAlphaAndInferenceApisAreNamedAsNotConvertedWhenTurnedOn() {
        GatewayApi g = PilotFeatures.fromEnv(Map.of("PILOT_ENABLE_ALPHA_GATEWAY_API", "true",
                "ENABLE_GATEWAY_API_INFERENCE_EXTENSION", "true")::get).gatewayApi();
        assertEquals(2, g.warnings().size(), g.warnings().toString());
        assertTrue(g.warnings().get(0).startsWith("PILOT_ENABLE_ALPHA_GATEWAY_API=true"), g.warnings().toString());
        assertTrue(g.warnings().get(1).startsWith("ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true"), g.warnings().toString());
        assertFalse(PilotFeatures.fromEnv(Map.<String, String>of()::get).gatewayApi().alphaApis());
    }

    @Test
    void readSoNotWarned() {
        Map<String, String> env = new HashMap<>();
        VARIABLES.forEach(v -> env.put(v, "true"));
        env.put("PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME", "istio");
        env.put("PILOT_GATEWAY_API_CONTROLLER_NAME", "istio.io/gateway-controller");
        env.put("UNSAFE_ENABLE_ADMIN_ENDPOINTS", "true");
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(env::get);
        PilotFeatures.fromEnv(usage);
        assertEquals(List.of("UNSAFE_ENABLE_ADMIN_ENDPOINTS"),
                usage.unsupported().stream().map(EnvironmentUsage.Unsupported::name).toList());
    }
}
