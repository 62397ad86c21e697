package io.meshpilot.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * PILOT_ENABLE_METADATA_EXCHANGE and PILOT_MX_ADDITIONAL_LABELS are read as istiod reads them
 * (pilot/pkg/features/telemetry.go) and so no longer named in the start-up warning.
 */
class MetadataExchangeEnvTest {
    @Test
    void defaultsAreIstiods() {
        assertEquals(MetadataExchange.DEFAULTS, PilotFeatures.fromEnv(Map.<String, String>of()::get).metadataExchange());
        assertTrue(MetadataExchange.DEFAULTS.enabled());
    }

    @Test
    void labelsAreDeduplicatedAndSortedAndTheSwitchIsABoolean() {
        MetadataExchange mx = PilotFeatures.fromEnv(Map.of("PILOT_ENABLE_METADATA_EXCHANGE", "false",
                "PILOT_MX_ADDITIONAL_LABELS", "team,app.kubernetes.io/part-of,team")::get).metadataExchange();
        assertFalse(mx.enabled());
        assertEquals(List.of("app.kubernetes.io/part-of", "team"), mx.additionalLabels());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                PilotFeatures.fromEnv(Map.of("PILOT_ENABLE_METADATA_EXCHANGE", "maybe")::get));
        assertTrue(e.getMessage().startsWith("PILOT_ENABLE_METADATA_EXCHANGE=\"maybe\""), e.getMessage());
    }

    @Test
    void bothAreReadSoNotWarned() {
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(Map.of("PILOT_ENABLE_METADATA_EXCHANGE", "true",
                "PILOT_MX_ADDITIONAL_LABELS", "team", "UNSAFE_ENABLE_ADMIN_ENDPOINTS", "true")::get);
        PilotFeatures.fromEnv(usage);
        assertEquals(List.of("UNSAFE_ENABLE_ADMIN_ENDPOINTS"),
                usage.unsupported().stream().map(EnvironmentUsage.Unsupported::name).toList());
    }
}
