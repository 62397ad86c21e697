package io.meshpilot.security.kube;

import io.meshpilot.features.TrustedNodeAccounts;
import io.meshpilot.features.JwtPolicy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.PilotFeatures;
import io.meshpilot.testing.CapturedLog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** JWT_POLICY and CA_TRUSTED_NODE_ACCOUNTS as istiod reads them: a bad JWT_POLICY fails start-up naming it, a bad node account is ignored. */
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
    void aBadPolicyNamesTheVariable() {
        var policy = assertThrows(IllegalArgumentException.class,
                () -> PilotFeatures.fromEnv(Map.of("JWT_POLICY", "jwt")::get));
        assertTrue(policy.getMessage().contains("JWT_POLICY=jwt"), policy.getMessage());
    }

    /** istiod's features.CATrustedNodeAccounts warns about an entry without a slash and ignores it; start-up goes on. */
    @Test
    void aNodeAccountWithoutASlashIsWarnedAboutAndIgnored() {
        try (CapturedLog log = new CapturedLog(TrustedNodeAccounts.class)) {
            var auth = PilotFeatures.fromEnv(Map.of("CA_TRUSTED_NODE_ACCOUNTS", "ztunnel,istio-system/ztunnel")::get)
                    .kubeAuth();
            assertEquals(Set.of(new TrustedNodeAccounts.Account("istio-system", "ztunnel")),
                    auth.trustedNodeAccounts().accounts());
            assertTrue(log.has("Invalid CA_TRUSTED_NODE_ACCOUNTS, ignoring: ztunnel"), log.lines().toString());
        }
    }
}
