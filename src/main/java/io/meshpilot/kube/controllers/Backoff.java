package io.meshpilot.kube.controllers;

import java.time.Duration;

/**
 * How long a key waits before its next reconcile after failures in a row: {@code first},
 * doubling with each further failure up to {@code max} (istiod's per-item exponential limiter).
 * {@code first == max} is a fixed retry period.
 */
public record Backoff(Duration first, Duration max) {
    public Backoff {
        if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < first <= max, got " + first + " and " + max);
        }
    }

    /** A fixed retry period. */
    public static Backoff fixed(Duration period) {
        return new Backoff(period, period);
    }

    /** The wait after {@code failures} (at least 1) failures in a row. */
    public Duration after(int failures) {
        int doublings = Math.min(Math.max(failures - 1, 0), 62);
        long millis = first.toMillis();
        long limit = max.toMillis();
        for (int i = 0; i < doublings && millis < limit; i++) {
            millis *= 2;
        }
        return Duration.ofMillis(Math.min(millis, limit));
    }
}
