package io.meshpilot.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.features.PilotFeatures;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * istiod's registerAmbient switches for sending HBONE (pilot/pkg/features/ambient.go): with
 * PILOT_ENABLE_AMBIENT their ambient defaults (sending and ingress waypoint routing on, preferring
 * off) or what the environment says; without it all off, whatever the environment says.
 */
class HboneSendTest {
    static HboneSend fromEnv(Map<String, String> env) {
        return HboneSend.of(PilotFeatures.fromEnv(env::get).ambient());
    }

    @Test
    void ambientDefaultsSendHboneAndRouteGatewaysToWaypoints() {
        assertEquals(new HboneSend(true, false, true), fromEnv(Map.of("PILOT_ENABLE_AMBIENT", "true")));
    }

    @Test
    void theSwitchesAreReadOnlyWithAmbient() {
        assertEquals(new HboneSend(false, true, false), fromEnv(Map.of("PILOT_ENABLE_AMBIENT", "true",
                "PILOT_ENABLE_SENDING_HBONE", "false", "PILOT_PREFER_SENDING_HBONE", "true",
                "ENABLE_INGRESS_WAYPOINT_ROUTING", "false")));
        assertEquals(HboneSend.OFF, fromEnv(Map.of("PILOT_ENABLE_SENDING_HBONE", "true",
                "PILOT_PREFER_SENDING_HBONE", "true")));
    }
}
