package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.stub.StreamObserver;
import io.meshpilot.grpc.TransportConnection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The per-stream send queue with a transport whose write blocks (as Helidon's does on HTTP/2
 * flow control or a full socket): offering never waits, at most one response per type stays
 * unsent, the newest replaces it, types keep their first-queued order, and a failed write
 * reports once and drops everything after it.
 */
class OutboxTest {
    /** A transport stream whose writes block until released, recording what was written. */
    static final class BlockingStream implements StreamObserver<String> {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch firstWriteStarted = new CountDownLatch(1);
        final List<String> written = new CopyOnWriteArrayList<>();

        @Override
        public void onNext(String value) {
            firstWriteStarted.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            written.add(value);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }

    @Test
    void blockedWriterNeitherBlocksOffersNorGrows() throws Exception {
        BlockingStream stream = new BlockingStream();
        Outbox outbox = new Outbox(stream, TransportConnection.DIRECT, "test");
        String cds = TypeUrls.CLUSTER;
        String eds = TypeUrls.ENDPOINT;

        outbox.offer(cds, () -> stream.onNext("cds-1"));
        assertTrue(stream.firstWriteStarted.await(10, TimeUnit.SECONDS), "the writer took the first response");
        long start = System.nanoTime();
        for (int v = 2; v <= 50; v++) {
            int version = v;
            outbox.offer(eds, () -> stream.onNext("eds-" + version));
            outbox.offer(cds, () -> stream.onNext("cds-" + version));
        }
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "offers did not wait for the writer");
        assertEquals(2, outbox.unsent(), "one unsent response per type");
        assertEquals(96, outbox.replaced(), "every older unsent response was replaced");

        stream.release.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (stream.written.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        // EDS was queued first among the waiting ones, so it goes first; each type its newest
        assertEquals(List.of("cds-1", "eds-50", "cds-50"), stream.written);
        assertEquals(0, outbox.unsent());
    }

    @Test
    void failedWriteReportsOnceAndDropsTheRest() throws Exception {
        Outbox outbox = new Outbox(new BlockingStream(), TransportConnection.DIRECT, "test");
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch failed = new CountDownLatch(1);
        outbox.onFailure(e -> {
            failure.set(e);
            failed.countDown();
        });
        String cds = TypeUrls.CLUSTER;
        outbox.offer(cds, () -> {
            throw new IllegalStateException("stream reset");
        });
        assertTrue(failed.await(10, TimeUnit.SECONDS));
        assertEquals("stream reset", failure.get().getMessage());
        outbox.offer(cds, () -> {
            throw new AssertionError("written after the stream failed");
        });
        Thread.sleep(100);
        assertEquals(0, outbox.unsent(), "nothing is kept for a failed stream");
    }
}
