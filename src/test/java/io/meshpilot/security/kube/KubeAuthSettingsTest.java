package io.meshpilot.security.kube;

import io.meshpilot.features.TrustedNodeAccounts;
import io.meshpilot.features.JwtPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.PilotFeatures;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** JWT_POLICY and CA_TRUSTED_NODE_ACCOUNTS as istiod reads them; a bad value fails start-up naming the variable. */
class KubeAuthSettingsTest {
    @Test
    void defaultsAreThirdPartyTokensAndNoNodeAccounts() {
        var auth = PilotFeatures.fromEnv(Map.<String, String>of()::get).kubeAuth();
        assertEquals(JwtPolicy.THIRD_PARTY, auth.jwtPolicy());
        assertEquals(List.of("istio-ca"), auth.jwtPolicy().audiences());
        assertTrue(auth.trustedNodeAccounts().isEmpty());
    }

    @Test
    void firstPartyPolicyAndNodeAccountsAreRead() {
        var auth = PilotFeatures.fromEnv(Map.of("JWT_POLICY", "first-party-jwt",
                "CA_TRUSTED_NODE_ACCOUNTS", "istio-system/ztunnel, kube-system/node-agent,")::get).kubeAuth();
        assertEquals(JwtPolicy.FIRST_PARTY, auth.jwtPolicy());
        assertEquals(List.of(), auth.jwtPolicy().audiences());
        assertEquals(Set.of(new TrustedNodeAccounts.Account("istio-system", "ztunnel"),
                new TrustedNodeAccounts.Account("kube-system", "node-agent")), auth.trustedNodeAccounts().accounts());
    }

    @Test
    void badValuesNameTheVariable() {
        var policy = assertThrows(IllegalArgumentException.class,
                () -> PilotFeatures.fromEnv(Map.of("JWT_POLICY", "jwt")::get));
        assertTrue(policy.getMessage().contains("JWT_POLICY=jwt"), policy.getMessage());
        for (String bad : List.of("ztunnel", "istio-system/zt/unnel", "Istio-System/ztunnel", "/ztunnel")) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> PilotFeatures.fromEnv(Map.of("CA_TRUSTED_NODE_ACCOUNTS", bad)::get), bad);
            assertTrue(e.getMessage().startsWith("CA_TRUSTED_NODE_ACCOUNTS: \"" + bad + "\""), e.getMessage());
        }
    }
}
