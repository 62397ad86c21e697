package io.meshpilot.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
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
        // A call ends when the server closes it or the client cancels it. onComplete is not
        // used: Helidon's gRPC server reports it when the client half-closes, while a
        // server-streaming call (a health Watch, an xDS stream) is still running.
        AtomicBoolean done = new AtomicBoolean();
        Runnable end = () -> {
            if (done.compareAndSet(false, true)) {
                finished();
            }
        };
        ServerCall<Q, R> tracked = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                try {
                    super.close(status, trailers);
                } finally {
                    end.run();
                }
            }
        };
        ServerCall.Listener<Q> delegate;
        try {
            delegate = next.startCall(tracked, headers);
        } catch (RuntimeException e) {
            end.run();
            throw e;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    end.run();
                }
            }
        };
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
