package io.meshpilot.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.helidon.common.buffers.BufferData;
import java.lang.reflect.Field;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Takes back the response buffer a Helidon 4.4 gRPC call would keep for its whole life. The
 * call serializes each response into one buffer, grown to the largest response it ever sent
 * ({@code GrpcProtocolHandler}'s {@code writeBufferData}). xDS streams live for hours, and an
 * uncompressed CDS or EDS answer (Envoy does not offer gzip) runs to hundreds of kilobytes:
 * 2,000 sidecars held over 1 GB that way. After each response, a buffer over 64 KiB is swapped
 * for an empty one and kept in a small shared pool ({@link #POOLED} buffers, {@link #POOL_BYTES}
 * at most). The next response of any call is handed the most recently pooled buffer; Helidon
 * writes into it when it is large enough, else allocates one as it always does, and the lent
 * one goes back to the pool. A push to 2,000 sidecars then reuses a few buffers instead of
 * allocating 2,000 of 300-700 KB, which the garbage collector had to clear and, for those still
 * being written, promote.
 *
 * <p>Lending relies on one response at a time per call (xDS streams write through their
 * Outbox; unary calls answer once) and on Helidon copying every frame out of the buffer before
 * {@code sendMessage} returns ({@code Http2ConnectionWriter} copies each frame it writes).
 *
 * <p>The field is private, reached by reflection like {@link HelidonConnections}; when it
 * cannot be reached the interceptor only warns, and {@link #released()} lets a test see that
 * it still works. Must be the outermost interceptor, the one handed Helidon's own call.
 */
final class HelidonResponseBuffers implements ServerInterceptor {
    private static final System.Logger LOG = System.getLogger(HelidonResponseBuffers.class.getName());
    /** Buffers up to this size may stay with their call (unless a pooled one is lent to it). */
    static final int KEPT = 64 * 1024;
    /** Large buffers kept for the next responses (writes that block on a slow reader hold theirs meanwhile). */
    static final int POOLED = 16;
    static final long POOL_BYTES = 16L * 1024 * 1024;
    private static final Deque<BufferData> POOL = new ConcurrentLinkedDeque<>();
    private static final AtomicLong POOLED_BYTES = new AtomicLong();
    private static final AtomicInteger POOLED_COUNT = new AtomicInteger();
    private static final LongAdder RELEASED = new LongAdder();
    private static final LongAdder REUSED = new LongAdder();
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

    /** Response buffers taken back from Helidon calls since start. */
    static long released() {
        return RELEASED.sum();
    }

    /** Responses that Helidon wrote into a lent pooled buffer. */
    static long reused() {
        return REUSED.sum();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        Field buffer = BUFFER_FIELD.get(call.getClass());
        if (buffer == null) {
            warnOnce("cannot reach the response buffer of Helidon's gRPC call " + call.getClass().getName());
            return next.startCall(call, headers);
        }
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendMessage(R message) {
                BufferData lent = lend(call, buffer);
                try {
                    super.sendMessage(message);
                } finally {
                    release(call, buffer, lent);
                }
            }
        }, headers);
    }

    /**
     * Before a response: a call holding only a small buffer is lent the most recently pooled
     * one, which is returned (or null when none was lent).
     */
    private static BufferData lend(ServerCall<?, ?> call, Field buffer) {
        try {
            if (buffer.get(call) instanceof BufferData b && b.reset().capacity() <= KEPT) {
                BufferData pooled = POOL.pollFirst();
                if (pooled != null) {
                    POOLED_COUNT.decrementAndGet();
                    POOLED_BYTES.addAndGet(-pooled.capacity());
                    buffer.set(call, pooled);
                    return pooled;
                }
            }
        } catch (IllegalAccessException | RuntimeException e) {
            warnOnce("cannot lend a response buffer to Helidon's gRPC call: " + e);
        }
        return null;
    }

    /**
     * After a response, on the thread that sent it: a large buffer is taken from the call into
     * the pool, and a lent buffer that Helidon replaced (too small for this response) goes back.
     */
    private static void release(ServerCall<?, ?> call, Field buffer, BufferData lent) {
        try {
            // capacity() is what is left to write: measured after a reset, as Helidon does
            // before it reuses the buffer (the frames were copied out before sendMessage returned)
            BufferData held = buffer.get(call) instanceof BufferData b ? b : null;
            if (lent != null && held == lent) {
                REUSED.increment();
            } else if (lent != null) {
                pool(lent.reset());
            }
            if (held != null && held.reset().capacity() > KEPT) {
                buffer.set(call, BufferData.create(0));
                RELEASED.increment();
                pool(held);
            }
        } catch (IllegalAccessException | RuntimeException e) {
            warnOnce("cannot release the response buffer of Helidon's gRPC call: " + e);
        }
    }

    /** Keeps {@code b} for a later response unless the pool is full; it is the first one lent. */
    private static void pool(BufferData b) {
        int capacity = b.capacity();
        if (POOLED_COUNT.incrementAndGet() > POOLED) {
            POOLED_COUNT.decrementAndGet();
            return;
        }
        if (POOLED_BYTES.addAndGet(capacity) > POOL_BYTES) {
            POOLED_BYTES.addAndGet(-capacity); // over the byte budget: let it go
            POOLED_COUNT.decrementAndGet();
            return;
        }
        POOL.offerFirst(b);
    }

    private static void warnOnce(String what) {
        if (WARNED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, what + ": each stream keeps its largest response's buffer");
        }
    }
}
