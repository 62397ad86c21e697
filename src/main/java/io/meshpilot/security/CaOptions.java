package io.meshpilot.security;

import io.meshpilot.security.ca.CaRootStore;
import java.time.Duration;
import java.util.List;

/**
 * What the CA is made from: istiod's CA flags and environment, narrowed to this component.
 *
 * @param rootCaDir              ROOT_CA_DIR: plugged-in CA files, used when present
 * @param rootStore              where a self-signed root is kept (--caStateDir embedded)
 * @param ecdsa                  --caKeyType EC: an ECDSA P-256 root instead of RSA
 * @param rsaKeySize             CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE
 * @param selfSignedTtl          CITADEL_SELF_SIGNED_CA_CERT_TTL
 * @param rootCheckInterval      CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL
 * @param gracePercentile        CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE
 * @param defaultWorkloadCertTtl DEFAULT_WORKLOAD_CERT_TTL (also istiod's own certificate's)
 * @param maxWorkloadCertTtl     MAX_WORKLOAD_CERT_TTL
 * @param servingNames           the DNS names istiod's own certificate is issued for
 * @param jwtRule                JWT_RULE: the OIDC token authenticator, empty for none
 */
public record CaOptions(String rootCaDir, CaRootStore rootStore, boolean ecdsa, int rsaKeySize, Duration selfSignedTtl,
                        Duration rootCheckInterval, int gracePercentile, Duration defaultWorkloadCertTtl,
                        Duration maxWorkloadCertTtl, List<String> servingNames, String jwtRule) {
    public CaOptions {
        servingNames = List.copyOf(servingNames);
    }
}
