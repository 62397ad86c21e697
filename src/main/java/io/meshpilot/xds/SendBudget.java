package io.meshpilot.xds;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The server's bound on response bytes handed to the transport and not yet taken by the
 * socket. grpc-java copies each message into Netty's direct buffers when it is written and
 * frees them only as the peer's HTTP/2 window and the socket take them, so without a bound
 * thousands of slow readers each held a multi-MB response there until direct memory ran out.
 *
 * <p>A stream's writer {@link #acquire acquires} a response's size before it writes it and
 * {@link #release releases} it once the transport reports the stream drained (see
 * {@link Outbox}). Writers wait in arrival order, so a large response is not starved by a
 * stream of small ones; only the stream's own writer (a virtual thread) waits, never a push
 * worker. A response larger than the whole budget goes when nothing else is in flight: it is
 * never refused and never waits forever.
 *
 * <p>A stream that stays unwritable must not hold the budget for everybody: its writer
 * {@link #park parks} its bytes, moving them to a separate account with the same cap. The
 * parked account does not hold up other writers; when it is full, the longest-parked stream
 * is evicted (its writer ends the stream) to make room. So the memory stalled readers can
 * pin is bounded by twice the budget plus {@link Outbox#UNCOUNTED_TAIL} per stream, and no reader can stall the others for longer than the
 * park time, even without a send timeout.
 */
final class SendBudget {
    private final long limit;
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Waiter> waiting = new ArrayDeque<>();
    /** Parked streams, longest-parked first. */
    private final Deque<Parking> parkedStreams = new ArrayDeque<>();
    private long inFlight;
    private long parked;

    /** A writer waiting for {@code bytes}, woken alone when they are granted or its stream ends. */
    private static final class Waiter {
        final long bytes;
        /** What the writer already holds of the budget (a grown response), counted as its own. */
        final long held;
        final Object owner;
        final Condition granted;
        boolean done;
        boolean cancelled;

        Waiter(long bytes, long held, Object owner, Condition granted) {
            this.bytes = bytes;
            this.held = held;
            this.owner = owner;
            this.granted = granted;
        }
    }

    /** A stream's bytes in the parked account; {@code evict} ends the stream when its room is needed. */
    static final class Parking {
        private final long bytes;
        private final Runnable evict;

        private Parking(long bytes, Runnable evict) {
            this.bytes = bytes;
            this.evict = evict;
        }
    }

    SendBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("send budget must be more than 0 bytes, was " + limit);
        }
        this.limit = limit;
    }

    long limit() {
        return limit;
    }

    /**
     * Takes {@code bytes} of the budget for {@code owner}'s stream, waiting behind earlier
     * writers until they fit; false, with nothing taken, when {@link #cancel} ended the wait.
     */
    boolean acquire(long bytes, Object owner) {
        return acquire(bytes, 0, owner);
    }

    /**
     * Takes {@code bytes} more for a writer that already holds its turn's bytes and found its
     * response grown: it waits at the head of the queue, so the growth costs it no place. The
     * {@code held} bytes count as its own: with nothing else in flight it goes, as a large response does.
     */
    boolean acquireMore(long bytes, long held, Object owner) {
        return acquire(bytes, held, owner);
    }

    private boolean acquire(long bytes, long held, Object owner) {
        boolean keepTurn = held > 0;
        lock.lock();
        try {
            if ((keepTurn || waiting.isEmpty()) && fits(bytes, held)) {
                take(bytes);
                return true;
            }
            XdsMetrics.SEND_BUDGET_WAITS.increment();
            Waiter w = new Waiter(bytes, held, owner, lock.newCondition());
            if (keepTurn) {
                waiting.addFirst(w);
            } else {
                waiting.addLast(w);
            }
            while (!w.done) {
                w.granted.awaitUninterruptibly(); // writers are never interrupted: a stream's end is a cancel
            }
            return !w.cancelled;
        } finally {
            lock.unlock();
        }
    }

    /** {@code owner}'s stream ended: its waiting writer leaves the queue without taking anything. */
    void cancel(Object owner) {
        lock.lock();
        try {
            for (var it = waiting.iterator(); it.hasNext(); ) {
                Waiter w = it.next();
                if (w.owner == owner) {
                    it.remove();
                    w.cancelled = true;
                    w.done = true;
                    w.granted.signal();
                }
            }
            grantWaiting(); // the cancelled writer may have been the head that did not fit
        } finally {
            lock.unlock();
        }
    }

    /** Gives back {@code bytes} taken by {@link #acquire} and lets the waiting writers that now fit go, in order. */
    void release(long bytes) {
        lock.lock();
        try {
            inFlight -= bytes;
            XdsMetrics.SEND_BYTES_IN_FLIGHT.addAndGet(-bytes);
            grantWaiting();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves {@code bytes} of a stream that stays unwritable from the budget to the parked
     * account, letting waiting writers go. When the account has no room, the longest-parked
     * streams are evicted first ({@code evict} is called, outside the lock, for each); a
     * response larger than the whole account is parked alone.
     */
    Parking park(long bytes, Runnable evict) {
        List<Parking> evicted = new ArrayList<>();
        Parking p = new Parking(bytes, evict);
        lock.lock();
        try {
            while (!parkedStreams.isEmpty() && parked + bytes > limit) {
                Parking oldest = parkedStreams.pollFirst();
                addParked(-oldest.bytes);
                evicted.add(oldest);
            }
            parkedStreams.addLast(p);
            addParked(bytes);
            inFlight -= bytes;
            XdsMetrics.SEND_BYTES_IN_FLIGHT.addAndGet(-bytes);
            grantWaiting();
        } finally {
            lock.unlock();
        }
        evicted.forEach(e -> e.evict.run());
        return p;
    }

    /** The parked stream drained or ended: its bytes leave the parked account (unless it was evicted already). */
    void unpark(Parking p) {
        lock.lock();
        try {
            if (parkedStreams.remove(p)) {
                addParked(-p.bytes);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Bytes handed to the transport and not yet drained, parked ones not counted. */
    long inFlight() {
        lock.lock();
        try {
            return inFlight;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes of streams that stayed unwritable past the park time. */
    long parked() {
        lock.lock();
        try {
            return parked;
        } finally {
            lock.unlock();
        }
    }

    /** Writers waiting for the budget now. */
    int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    private void grantWaiting() {
        while (!waiting.isEmpty() && fits(waiting.peekFirst().bytes, waiting.peekFirst().held)) {
            Waiter w = waiting.pollFirst();
            take(w.bytes);
            w.done = true;
            w.granted.signal();
        }
    }

    private boolean fits(long bytes, long held) {
        return inFlight == held || inFlight + bytes <= limit;
    }

    private void take(long bytes) {
        inFlight += bytes;
        XdsMetrics.SEND_BYTES_IN_FLIGHT.addAndGet(bytes);
    }

    private void addParked(long bytes) {
        parked += bytes;
        XdsMetrics.SEND_BYTES_PARKED.addAndGet(bytes);
    }
}
