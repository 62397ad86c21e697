package io.meshpilot.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;

/** Starts a call so that a given action runs once when it ends, however it ends. */
final class CallEnd {
    private CallEnd() {
    }

    /**
     * A call ends when the server closes it or the client cancels it. onComplete is not
     * used: Helidon's gRPC server reports it when the client half-closes, while a
     * server-streaming call (a health Watch, an xDS stream) is still running.
     */
    static <Q, R> ServerCall.Listener<Q> startCall(ServerCall<Q, R> call, Metadata headers,
                                                   ServerCallHandler<Q, R> next, Runnable onEnd) {
        AtomicBoolean done = new AtomicBoolean();
        Runnable end = () -> {
            if (done.compareAndSet(false, true)) {
                onEnd.run();
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
}
