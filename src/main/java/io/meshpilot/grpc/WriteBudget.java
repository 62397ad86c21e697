package io.meshpilot.grpc;

import java.util.concurrent.Semaphore;

/**
 * Bytes that response writes may hold at once, shared by all streams of a transport. A write
 * takes its size before it starts and gives it back when the transport has taken the bytes;
 * a write larger than the whole budget takes all of it, so it still goes, alone. Writers wait
 * in arrival order, so a large response is not passed over forever by small ones.
 *
 * <p>What a stalled reader holds: its one write's share, until the transport gives up on it
 * (Helidon fails a write after its HTTP/2 flow-control timeout, 15 s by default). Only
 * enough stalled readers to fill the budget at once would make other writes wait.
 */
final class WriteBudget {
    private final int bytes;
    private final Semaphore free;

    WriteBudget(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("write budget must be positive: " + bytes);
        }
        this.bytes = bytes;
        this.free = new Semaphore(bytes, true);
    }

    /** Waits until {@code size} bytes (at most the whole budget) are free and takes them; returns what to give back. */
    int take(int size) {
        int share = Math.min(Math.max(size, 0), bytes);
        if (share > 0) {
            free.acquireUninterruptibly(share);
        }
        return share;
    }

    void give(int share) {
        if (share > 0) {
            free.release(share);
        }
    }

    /** Bytes no write holds now. */
    int available() {
        return free.availablePermits();
    }

    int size() {
        return bytes;
    }
}
