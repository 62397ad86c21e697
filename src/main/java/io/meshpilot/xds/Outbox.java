package io.meshpilot.xds;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Exception;
import io.meshpilot.grpc.TransportConnection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One stream's bounded send queue. Pushes never write on the pushing thread: they leave at
 * most one unsent response per type here, and a newer response for a type replaces the unsent
 * one. That is safe because every response carries the whole state of its type (state of the
 * world) or the whole difference from what the proxy last received (delta: computed against
 * what was actually written), so the newest supersedes the older.
 *
 * <p>A virtual thread per busy stream writes in order (types keep the order they were first
 * queued in: CDS before EDS), one response at a time: it takes the response's size from the
 * server's {@link SendBudget} (waiting there, while newer responses keep replacing the queued
 * one), writes it, and holds those bytes as in flight until the transport reports the stream
 * drained. grpc-java's Netty transport reports it through {@code isReady} and its on-ready
 * callback, with grpc-java's default on-ready threshold: ready means less than
 * {@link #UNCOUNTED_TAIL} bytes of the stream are queued. So Netty may hold up to that much of
 * a stream beyond what the budget counts; a threshold of one byte would count it exactly but
 * made every response wait for its own flush, which cost the fan-out a third more CPU
 * (docs/PERFORMANCE.md). A stream that stays unwritable
 * past the send timeout is reported as a {@link SendTimeout} failure; one unwritable past
 * {@link #PARK_AFTER} parks its bytes outside the budget ({@link SendBudget#park}) and is
 * ended the same way if the parked account needs its room. Helidon's transport
 * always says ready and blocks the writer while it cannot write (a full socket, or HTTP/2 flow
 * control, which fails the write after Helidon's flow-control timeout and so drops the stream):
 * there the bytes are in flight while the write blocks. Either way a reader that stops reading
 * holds only its own writer, one response in flight and at most one unsent response per type;
 * push workers never wait for it.
 */
final class Outbox {
    /**
     * grpc-java's default on-ready threshold (ServerCall's {@code DEFAULT_ONREADY_THRESHOLD}),
     * which our streams keep: what Netty may hold of a ready stream, uncounted by the budget.
     */
    static final int UNCOUNTED_TAIL = 32 * 1024;
    /**
     * How long a stream may stay unwritable while its bytes count in the server's budget;
     * after that they move to the parked account so readers that stall do not stall others.
     * Longer than a reading proxy takes for a large response on a busy node, short enough that
     * a push round is not held up noticeably.
     */
    static final Duration PARK_AFTER = Duration.ofSeconds(2);

    /** A queued response: its serialized size and how to write it. */
    private record Pending(long bytes, Runnable write) {
    }

    /**
     * The stream stayed unwritable past the send timeout: its writer gave up, and the stream
     * must be ended with {@link #status()}.
     */
    static final class SendTimeout extends RuntimeException {
        private final transient Status status;

        SendTimeout(String description) {
            super(description, null, false, false);
            this.status = Status.DEADLINE_EXCEEDED.withDescription(description);
        }

        Status status() {
            return status;
        }
    }

    private final ServerCallStreamObserver<?> call;
    private final TransportConnection transport;
    private final String name;
    private final SendBudget budget;
    /** PILOT_XDS_SEND_TIMEOUT; zero: a stream may stay unwritable for ever. */
    private final Duration sendTimeout;
    /** By type URL: a watched type, or {@link Connection#DEBUG_SLOT} for the debug answers. */
    private final Map<String, Pending> unsent = new LinkedHashMap<>();
    private Consumer<RuntimeException> onFailure = e -> { };
    private boolean draining;
    private boolean failed;
    /** The writer's parked bytes were evicted to make room for a newer stalled stream. */
    private boolean evicted;
    private long replaced;
    private long written;

    /** Must be made while the call starts: that is when grpc-java accepts the on-ready callback. */
    Outbox(StreamObserver<?> out, TransportConnection transport, String name, SendBudget budget, Duration sendTimeout) {
        this.call = out instanceof ServerCallStreamObserver<?> s ? s : null;
        this.transport = transport;
        this.name = name;
        this.budget = budget;
        this.sendTimeout = sendTimeout;
        if (call != null) {
            call.setOnReadyHandler(this::kick);
        }
    }

    /** What to do when a write fails or times out: the stream is gone or must be ended. */
    synchronized void onFailure(Consumer<RuntimeException> handler) {
        this.onFailure = handler;
    }

    /** Queues {@code write} of a {@code bytes} long response as the next response of {@code type}, replacing an unsent one. */
    void offer(String type, long bytes, Runnable write) {
        synchronized (this) {
            if (failed) {
                return;
            }
            if (unsent.put(type, new Pending(bytes, write)) != null) {
                replaced++;
            }
            if (draining || !ready()) {
                return;
            }
            draining = true;
        }
        Thread.ofVirtual().name("xds-send-" + name).start(this::drain);
    }

    /** The stream is ending: nothing more is written (a write under way finishes first). */
    void stop() {
        synchronized (this) {
            failed = true;
            unsent.clear();
            notifyAll(); // a writer waiting for the transport gives its bytes back
        }
        budget.cancel(this); // outside the monitor: the budget's lock is never taken while holding it
    }

    /** Whether the transport ends its connections at the maximum connection age itself. */
    boolean transportLimitsConnectionAge() {
        return transport.limitsConnectionAge();
    }

    /** The transport can take more again (grpc-java's on-ready callback). */
    private void kick() {
        synchronized (this) {
            notifyAll(); // the writer waiting for the stream to drain
            if (draining || failed || unsent.isEmpty()) {
                return;
            }
            draining = true;
        }
        Thread.ofVirtual().name("xds-send-" + name).start(this::drain);
    }

    private boolean ready() {
        return call == null || call.isReady();
    }

    private void drain() {
        while (true) {
            Pending head;
            String type;
            synchronized (this) {
                if (failed || unsent.isEmpty() || !ready()) {
                    draining = false;
                    return; // a not-ready transport calls kick() when it is ready again
                }
                var first = unsent.entrySet().iterator().next();
                type = first.getKey();
                head = first.getValue();
            }
            if (!budget.acquire(head.bytes(), this)) {
                continue; // stopped while waiting: nothing taken, and the loop ends on the stop
            }
            long held = head.bytes();
            Pending next;
            while (true) {
                synchronized (this) {
                    // while this writer waited, a newer response may have replaced the type's (its slot keeps its place)
                    next = failed ? null : unsent.get(type);
                    if (next != null && next.bytes() <= held) {
                        unsent.remove(type);
                    }
                }
                if (next == null || next.bytes() <= held) {
                    break;
                }
                if (!budget.acquireMore(next.bytes() - held, held, this)) { // grown: the rest, keeping this writer's turn
                    next = null;
                    break;
                }
                held = next.bytes();
            }
            if (next == null) {
                budget.release(held); // stopped: nothing to write
                continue;
            }
            budget.release(held - next.bytes());
            try {
                write(next);
            } catch (RuntimeException e) {
                budget.release(next.bytes());
                fail(e);
                return;
            } catch (Error e) {
                // out of memory or stack while serializing: the stream cannot go on, the budget must
                budget.release(next.bytes());
                fail(new IllegalStateException("write failed: " + e, e));
                throw e;
            }
            SendTimeout timeout = awaitDrained(next.bytes());
            if (timeout != null) {
                XdsMetrics.WRITE_TIMEOUTS.increment();
                fail(timeout);
                return;
            }
        }
    }

    private void write(Pending next) {
        long start = System.nanoTime();
        try {
            transport.write(next.write());
        } catch (RuntimeException e) {
            if (flowControlTimeout(e)) {
                XdsMetrics.WRITE_TIMEOUTS.increment();
            }
            throw e;
        }
        XdsMetrics.SEND_TIME.record(Duration.ofNanos(System.nanoTime() - start));
        synchronized (this) {
            written++;
        }
    }

    /** How a wait for the transport ended. */
    private enum Drain { DRAINED, TIMED_OUT, EVICTED }

    /**
     * Waits until the transport took all of the stream (or the stream ended) and gives the
     * {@code bytes} in flight back; the failure to report when the stream stayed unwritable
     * past the send timeout or was evicted from the parked account, else null. After the park
     * time the bytes wait in the parked account, so this stream no longer holds the budget.
     */
    private SendTimeout awaitDrained(long bytes) {
        synchronized (this) {
            evicted = false;
        }
        long start = System.nanoTime();
        long timeoutAt = sendTimeout.isZero() ? Long.MAX_VALUE : start + sendTimeout.toNanos();
        Drain drain = awaitReady(Math.min(timeoutAt, start + PARK_AFTER.toNanos()));
        if (drain != Drain.TIMED_OUT || timeoutAt <= System.nanoTime()) {
            budget.release(bytes);
            return drain == Drain.DRAINED ? null : timedOut();
        }
        SendBudget.Parking parking = budget.park(bytes, this::evict);
        drain = awaitReady(timeoutAt);
        budget.unpark(parking);
        return switch (drain) {
            case DRAINED -> null;
            case TIMED_OUT -> timedOut();
            case EVICTED -> new SendTimeout("stream not writable for "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
                    + " ms and the parked send budget (MESHPILOT_XDS_BYTES_IN_FLIGHT) was needed for a newer"
                    + " stalled stream: the proxy does not read its responses");
        };
    }

    private SendTimeout timedOut() {
        return new SendTimeout("stream not writable for " + sendTimeout.toMillis()
                + " ms (PILOT_XDS_SEND_TIMEOUT): the proxy does not read its responses");
    }

    /**
     * Waits until the stream is ready or ended ({@link Drain#DRAINED}), evicted, or
     * {@code until} (nanoTime; {@code Long.MAX_VALUE}: no bound) has passed.
     */
    private synchronized Drain awaitReady(long until) {
        try {
            while (!failed && !ready()) {
                if (evicted) {
                    return Drain.EVICTED;
                }
                if (until == Long.MAX_VALUE) {
                    wait();
                    continue;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return Drain.TIMED_OUT;
                }
                wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Drain.DRAINED;
    }

    /** The parked account needs this stream's room: its writer ends the stream. */
    private synchronized void evict() {
        evicted = true;
        notifyAll();
    }

    private void fail(RuntimeException e) {
        Consumer<RuntimeException> handler;
        synchronized (this) {
            failed = true;
            draining = false;
            unsent.clear();
            handler = onFailure;
        }
        handler.accept(e);
    }

    /** Helidon's HTTP/2 writer gave up waiting for the reader's flow-control window (anywhere in the causes). */
    static boolean flowControlTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof Http2Exception h
                    && h.code() == Http2ErrorCode.FLOW_CONTROL
                    && String.valueOf(h.getMessage()).contains("time-out")) {
                return true;
            }
        }
        return false;
    }

    /** Responses queued and not yet written (at most one per type). */
    synchronized int unsent() {
        return unsent.size();
    }

    /** Responses that were replaced by a newer one before they could be written. */
    synchronized long replaced() {
        return replaced;
    }

    synchronized long written() {
        return written;
    }
}
