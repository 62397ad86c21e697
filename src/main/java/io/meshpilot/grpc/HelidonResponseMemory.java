package io.meshpilot.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.helidon.common.buffers.BufferData;
import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps Helidon 4.4's gRPC server from holding response-sized memory per stream. xDS
 * responses run to megabytes (a CDS answer with 1,000 clusters), thousands of streams stay
 * open for hours, and Envoy does not ask for compressed responses, so two habits of Helidon's
 * write path add up:
 * <ul>
 *   <li>Each call serializes into a buffer it keeps for its whole life, grown to its largest
 *       response: 2,000 sidecars that once received 500 KB hold 1 GB. After each response
 *       the call gets an empty buffer instead (a private field, reached by reflection like
 *       {@link HelidonConnections}; {@link #released()} lets a test see it still works).</li>
 *   <li>A write holds about twice its response (the serialized bytes and their copy cut
 *       into frames) until the peer's flow-control window has taken all of it, and a push
 *       starts thousands of writes at once. Large responses therefore take their size from
 *       one {@link WriteBudget}; writers beyond it wait their turn.</li>
 * </ul>
 * Must be the outermost interceptor, the one handed Helidon's own call.
 */
final class HelidonResponseMemory implements ServerInterceptor {
    private static final System.Logger LOG = System.getLogger(HelidonResponseMemory.class.getName());
    /** Responses up to this size neither wait for the budget nor lose their call's buffer. */
    static final int SMALL_RESPONSE = 64 * 1024;
    private static final LongAdder RELEASED = new LongAdder();
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final ClassValue<Field> BUFFER_FIELD = new ClassValue<>() {
        @Override
        protected Field computeValue(Class<?> type) {
            try {
                Field f = type.getDeclaredField("writeBufferData");
                if (f.getType() != BufferData.class) {
                    return null;
                }
                f.setAccessible(true);
                return f;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
    };

    private final WriteBudget budget;

    HelidonResponseMemory(WriteBudget budget) {
        this.budget = budget;
    }

    /** A budget of a sixteenth of the heap, at least 16 MiB and at most 256 MiB. */
    static HelidonResponseMemory forThisHeap() {
        long sixteenth = Runtime.getRuntime().maxMemory() / 16;
        int bytes = (int) Math.clamp(sixteenth, 16L << 20, 256L << 20);
        return new HelidonResponseMemory(new WriteBudget(bytes));
    }

    /** Response buffers taken back from Helidon calls since start. */
    static long released() {
        return RELEASED.sum();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        Field buffer = BUFFER_FIELD.get(call.getClass());
        if (buffer == null && WARNED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "cannot reach the response buffer of Helidon's gRPC call "
                    + call.getClass().getName() + ": each stream keeps its largest response's buffer");
        }
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendMessage(R message) {
                int size = message instanceof com.google.protobuf.MessageLite m ? m.getSerializedSize() : 0;
                int taken = size > SMALL_RESPONSE ? budget.take(size) : 0;
                try {
                    super.sendMessage(message);
                } finally {
                    budget.give(taken);
                    release(call, buffer);
                }
            }
        }, headers);
    }

    private static void release(ServerCall<?, ?> call, Field buffer) {
        if (buffer == null) {
            return;
        }
        try {
            // capacity() is what is left to write: measured after a reset, as Helidon does
            // before it reuses the buffer
            if (buffer.get(call) instanceof BufferData b && b.reset().capacity() > SMALL_RESPONSE) {
                // Helidon allocates a buffer of the right size for the next response
                buffer.set(call, BufferData.create(0));
                RELEASED.increment();
            }
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "response buffer not released: " + e);
        }
    }
}
