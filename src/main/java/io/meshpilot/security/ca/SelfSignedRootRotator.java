package io.meshpilot.security.ca;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * istiod's SelfSignedCARootCertRotator without the scheduling (the caller runs
 * {@link #rotateAndSave} every {@link #DEFAULT_CHECK_INTERVAL}): when the self-signed root has
 * less than the grace percentile of its lifetime left, or has expired, a new root certificate
 * is issued for the same key and subject, so that certificates signed under the old root still
 * verify against the new one.
 *
 * <p>As istiod re-reads its Secret at each check, {@link SelfSignedCaStore#checkRotation} re-reads
 * the directory under its lock (another instance may share it). Deviation: istiod's new trust bundle holds only the new root; here the
 * old root stays in {@link CaMaterial#roots()} until it expires, so a client that pinned the old
 * certificate keeps working while workloads renew.
 */
public final class SelfSignedRootRotator {
    /** CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL default. */
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofHours(1);
    /** CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE default. */
    public static final int DEFAULT_GRACE_PERIOD_PERCENTILE = 20;

    private final Duration caCertTtl;
    private final int gracePeriodPercentile;

    /**
     * @param caCertTtl             lifetime of a re-issued root (CITADEL_SELF_SIGNED_CA_CERT_TTL)
     * @param gracePeriodPercentile 0..100: rotate when less than this percent of the lifetime is left
     */
    public SelfSignedRootRotator(Duration caCertTtl, int gracePeriodPercentile) {
        Objects.requireNonNull(caCertTtl, "caCertTtl");
        if (caCertTtl.isNegative() || caCertTtl.isZero()) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_CA_CERT_TTL must be positive, got " + caCertTtl);
        }
        if (gracePeriodPercentile < 0 || gracePeriodPercentile > 100) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE must be 0..100, got "
                    + gracePeriodPercentile);
        }
        this.caCertTtl = caCertTtl;
        this.gracePeriodPercentile = gracePeriodPercentile;
    }

    /** As istiod's GetWaitTime: due once expired, or when time left is at most the grace period. */
    public boolean isDue(X509Certificate root, Instant now) {
        Instant notAfter = root.getNotAfter().toInstant();
        Duration left = Duration.between(now, notAfter);
        if (left.isNegative()) {
            return true;
        }
        Duration lifetime = Duration.between(root.getNotBefore().toInstant(), notAfter);
        Duration grace = Duration.ofSeconds(lifetime.toSeconds() * gracePeriodPercentile / 100);
        return left.compareTo(grace) <= 0;
    }

    /**
     * The rotated material, or empty when nothing is due. Only a self-signed root is rotated;
     * a plugged-in CA is the operator's to replace.
     */
    public Optional<CaMaterial> rotateIfDue(CaMaterial current, Instant now) {
        if (current.origin().kind() != CaMaterial.Kind.SELF_SIGNED || !current.chain().isEmpty()
                || !isDue(current.signingCertificate(), now)) {
            return Optional.empty();
        }
        return Optional.of(SelfSignedRoot.reissue(current, caCertTtl, now));
    }

    /**
     * {@link #rotateIfDue} against the directory's current state, the new root written there
     * before it is returned (see {@link SelfSignedCaStore#checkRotation}).
     */
    public Optional<CaMaterial> rotateAndSave(CaMaterial current, Path stateDir, Instant now) {
        return SelfSignedCaStore.checkRotation(stateDir, current, this, now);
    }
}
