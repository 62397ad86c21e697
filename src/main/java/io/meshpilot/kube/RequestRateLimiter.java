package io.meshpilot.kube;

import java.io.IOException;
import java.io.InterruptedIOException;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * Client-side throttle of requests to the API server (client-go's token bucket behind
 * rest.Config QPS/Burst): a bucket of {@code burst} tokens refilled at {@code qps} per
 * second; a request takes one, waiting for it when the bucket is empty.
 */
final class RequestRateLimiter implements Interceptor {
    private final double perNano;
    private final double capacity;
    private double tokens;
    private long refilledAt;

    RequestRateLimiter(double qps, int burst) {
        this.perNano = qps / 1e9;
        this.capacity = burst;
        this.tokens = burst;
        this.refilledAt = System.nanoTime();
    }

    /** Takes a token; returns how long the caller must wait before sending (0: at once). */
    synchronized long reserveNanos() {
        long now = System.nanoTime();
        tokens = Math.min(capacity, tokens + (now - refilledAt) * perNano);
        refilledAt = now;
        tokens -= 1; // may go negative: later callers queue behind this one
        return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / perNano);
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
        long wait = reserveNanos();
        if (wait > 0) {
            try {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while throttled by --kubernetesApiQPS");
            }
        }
        return chain.proceed(chain.request());
    }
}
