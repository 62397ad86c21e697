package io.meshpilot.xds;

import java.time.Duration;

/**
 * istiod's admission limit for new xDS streams (PILOT_MAX_REQUESTS_PER_SECOND): a token
 * bucket refilled at {@code rate} per second holding at most {@code rate} tokens. A new
 * stream waits up to {@code maxWait} for a token; otherwise it is refused, so a reconnect
 * storm after a restart is spread out instead of overwhelming the push pipeline.
 */
final class StreamRateLimiter {
    private final double rate;
    private final double burst;
    private final long maxWaitNanos;
    private double tokens;
    private long last = System.nanoTime();

    StreamRateLimiter(double perSecond, Duration maxWait) {
        this.rate = perSecond;
        this.burst = Math.max(1, perSecond);
        this.tokens = burst;
        this.maxWaitNanos = maxWait.toNanos();
    }

    /** Takes a token, waiting for one at most the configured time; false when refused. */
    boolean acquire() throws InterruptedException {
        long waitNanos;
        synchronized (this) {
            refill();
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            waitNanos = (long) ((1 - tokens) / rate * 1e9);
            if (waitNanos > maxWaitNanos) {
                return false;
            }
            tokens -= 1; // reserve the token that arrives after the wait
        }
        Thread.sleep(waitNanos / 1_000_000, (int) (waitNanos % 1_000_000));
        return true;
    }

    private void refill() {
        long now = System.nanoTime();
        tokens = Math.min(burst, tokens + (now - last) / 1e9 * rate);
        last = now;
    }
}
