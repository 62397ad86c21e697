package io.meshpilot.kube;

import java.time.Duration;

/**
 * How long a Lease is held and how often it is renewed and retried. istiod derives all
 * three from one TTL (30s): the holder gives up when it cannot renew within half of it, and
 * tries every quarter; a follower takes a Lease nobody renewed for the whole TTL.
 *
 * @param leaseDuration how long a Lease nobody renews stays held (istiod: 30s)
 * @param renewDeadline how long the holder keeps trying to renew before it stops leading
 * @param retryPeriod   how often acquiring and renewing are tried
 */
public record ElectionTimings(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    /** istiod's TTL for every election. */
    public static final Duration ISTIOD_TTL = Duration.ofSeconds(30);

    public ElectionTimings {
        if (leaseDuration.compareTo(Duration.ofSeconds(1)) < 0) {
            // a Lease holds whole seconds (spec.leaseDurationSeconds)
            throw new IllegalArgumentException("leader election lease duration must be at least 1s, not " + leaseDuration);
        }
        if (renewDeadline.compareTo(leaseDuration) >= 0 || retryPeriod.compareTo(renewDeadline) >= 0
                || retryPeriod.isNegative() || retryPeriod.isZero()) {
            throw new IllegalArgumentException("leader election timings must satisfy 0 < retry < renew deadline < lease duration: "
                    + this);
        }
    }

    /** istiod's rule: renew deadline TTL/2, retry period TTL/4. */
    public static ElectionTimings fromTtl(Duration ttl) {
        return new ElectionTimings(ttl, ttl.dividedBy(2), ttl.dividedBy(4));
    }

    /** istiod's timings: 30s / 15s / 7.5s. */
    public static ElectionTimings istiod() {
        return fromTtl(ISTIOD_TTL);
    }
}
