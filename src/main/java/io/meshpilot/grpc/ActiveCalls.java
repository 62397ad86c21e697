package io.meshpilot.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the gRPC calls in progress on all our ports, so shutdown can wait for them to
 * finish (istiod's GracefulStop), and refuses new calls once draining started.
 */
public final class ActiveCalls implements ServerInterceptor {
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();
    private final Object lock = new Object();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        if (draining.get()) {
            call.close(Status.UNAVAILABLE.withDescription("server is shutting down"), new Metadata());
            return new ServerCall.Listener<>() {
            };
        }
        active.incrementAndGet();
        return CallEnd.startCall(call, headers, next, this::finished);
    }

    private void finished() {
        active.decrementAndGet();
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    public int active() {
        return active.get();
    }

    /** Refuse new calls from now on. */
    public void startDraining() {
        draining.set(true);
    }

    /** Waits until no call is active or the timeout passes; true when all finished. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (active.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                lock.wait(Math.max(1, left / 1_000_000));
            }
        }
        return true;
    }
}
