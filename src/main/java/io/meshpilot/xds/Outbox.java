package io.meshpilot.xds;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Exception;
import io.meshpilot.grpc.TransportConnection;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One stream's bounded send queue. Pushes never write on the pushing thread: they leave at
 * most one unsent response per type here, and a newer response for a type replaces the unsent
 * one. That is safe because every response carries the whole state of its type (state of the
 * world) or the whole difference from what the proxy last received (delta: computed against
 * what was actually written), so the newest supersedes the older.
 *
 * <p>A virtual thread per busy stream writes in order (types keep the order they were first
 * queued in: CDS before EDS) while the transport can take more. grpc-java's Netty transport
 * says when it cannot ({@code isReady}); writing pauses until its on-ready callback. Helidon's
 * transport always says ready and blocks the writer when it cannot write (a full socket, or
 * HTTP/2 flow control, which fails the write after Helidon's flow-control timeout and so drops
 * the stream). Either way a reader that stops reading holds only its own writer and at most
 * one response per type; push workers and other proxies never wait for it.
 */
final class Outbox {
    private final ServerCallStreamObserver<?> call;
    private final TransportConnection transport;
    private final String name;
    /** By type URL: a watched type, or {@link Connection#DEBUG_SLOT} for the debug answers. */
    private final Map<String, Runnable> unsent = new LinkedHashMap<>();
    private Consumer<RuntimeException> onFailure = e -> { };
    private boolean draining;
    private boolean failed;
    private long replaced;
    private long written;

    /** Must be made while the call starts: that is when grpc-java accepts the on-ready callback. */
    Outbox(StreamObserver<?> out, TransportConnection transport, String name) {
        this.call = out instanceof ServerCallStreamObserver<?> s ? s : null;
        this.transport = transport;
        this.name = name;
        if (call != null) {
            call.setOnReadyHandler(this::kick);
        }
    }

    /** What to do when a write fails: the stream is gone. */
    synchronized void onFailure(Consumer<RuntimeException> handler) {
        this.onFailure = handler;
    }

    /** Queues {@code write} as the next response of {@code type}, replacing an unsent one. */
    void offer(String type, Runnable write) {
        synchronized (this) {
            if (failed) {
                return;
            }
            if (unsent.put(type, write) != null) {
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
    synchronized void stop() {
        failed = true;
        unsent.clear();
    }

    /** Whether the transport ends its connections at the maximum connection age itself. */
    boolean transportLimitsConnectionAge() {
        return transport.limitsConnectionAge();
    }

    /** The transport can take more again (grpc-java's on-ready callback). */
    private void kick() {
        synchronized (this) {
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
            Runnable next;
            synchronized (this) {
                if (failed || unsent.isEmpty() || !ready()) {
                    draining = false;
                    return; // a not-ready transport calls kick() when it is ready again
                }
                Iterator<Runnable> it = unsent.values().iterator();
                next = it.next();
                it.remove();
            }
            try {
                long start = System.nanoTime();
                transport.write(next);
                XdsMetrics.SEND_TIME.record(Duration.ofNanos(System.nanoTime() - start));
                synchronized (this) {
                    written++;
                }
            } catch (RuntimeException e) {
                if (flowControlTimeout(e)) {
                    XdsMetrics.WRITE_TIMEOUTS.increment();
                }
                Consumer<RuntimeException> handler;
                synchronized (this) {
                    failed = true;
                    draining = false;
                    unsent.clear();
                    handler = onFailure;
                }
                handler.accept(e);
                return;
            }
        }
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
