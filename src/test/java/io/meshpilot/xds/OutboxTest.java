package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.stub.StreamObserver;
import io.meshpilot.grpc.TransportConnection;
import io.meshpilot.testing.Await;
import java.time.Duration;
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
    /** A budget no test's responses reach. */
    static final long UNBOUNDED = 1L << 40;

    /** A stream's queue on a transport that writes on the caller's thread, with a budget it never waits for and no send timeout. */
    static Outbox outbox(StreamObserver<?> out, String name) {
        return new Outbox(out, TransportConnection.DIRECT, name, new SendBudget(UNBOUNDED), Duration.ZERO);
    }

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
        Outbox outbox = outbox(stream, "test");
        String cds = TypeUrls.CLUSTER;
        String eds = TypeUrls.ENDPOINT;

        outbox.offer(cds, 1, () -> stream.onNext("cds-1"));
        assertTrue(stream.firstWriteStarted.await(10, TimeUnit.SECONDS), "the writer took the first response");
        long start = System.nanoTime();
        for (int v = 2; v <= 50; v++) {
            int version = v;
            outbox.offer(eds, 1, () -> stream.onNext("eds-" + version));
            outbox.offer(cds, 1, () -> stream.onNext("cds-" + version));
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
        Outbox outbox = outbox(new BlockingStream(), "test");
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch failed = new CountDownLatch(1);
        outbox.onFailure(e -> {
            failure.set(e);
            failed.countDown();
        });
        String cds = TypeUrls.CLUSTER;
        outbox.offer(cds, 1, () -> {
            throw new IllegalStateException("stream reset");
        });
        assertTrue(failed.await(10, TimeUnit.SECONDS));
        assertEquals("stream reset", failure.get().getMessage());
        outbox.offer(cds, 1, () -> {
            throw new AssertionError("written after the stream failed");
        });
        Thread.sleep(100);
        assertEquals(0, outbox.unsent(), "nothing is kept for a failed stream");
    }

    @Test
    void aWriteWaitsForTheBudgetWhileANewerResponseReplacesTheQueuedOne() throws Exception {
        SendBudget budget = new SendBudget(100);
        budget.acquire(100, this); // another stream's response holds all of it
        BlockingStream stream = new BlockingStream();
        stream.release.countDown(); // this stream writes at once: only the budget holds it back
        Outbox outbox = new Outbox(stream, TransportConnection.DIRECT, "test", budget, Duration.ZERO);
        String cds = TypeUrls.CLUSTER;

        outbox.offer(cds, 50, () -> stream.onNext("cds-1"));
        Await.until("the writer waits for the budget", Duration.ofSeconds(10), () -> budget.waiting() == 1);
        outbox.offer(cds, 40, () -> stream.onNext("cds-2"));
        assertEquals(1, outbox.unsent(), "the newer response replaced the waiting one");
        assertEquals(List.of(), stream.written);

        budget.release(100);
        Await.until("the newest response is written", Duration.ofSeconds(10), () -> stream.written.size() == 1);
        assertEquals(List.of("cds-2"), stream.written);
        // a stream without grpc-java's readiness (Helidon's) is drained once its write returned
        Await.until("its bytes are given back", Duration.ofSeconds(10), () -> budget.inFlight() == 0);
    }

    /** Review s3 finding 3: a stream that ends while its writer waits for the budget gives up its place in the queue. */
    @Test
    void aStoppedStreamsWriterLeavesTheBudgetQueueWithoutTakingBytes() throws Exception {
        SendBudget budget = new SendBudget(100);
        budget.acquire(100, this); // another stream's response holds all of it
        BlockingStream first = new BlockingStream();
        BlockingStream second = new BlockingStream();
        first.release.countDown();
        second.release.countDown();
        Outbox stopped = new Outbox(first, TransportConnection.DIRECT, "stopped", budget, Duration.ZERO);
        Outbox live = new Outbox(second, TransportConnection.DIRECT, "live", budget, Duration.ZERO);
        stopped.offer(TypeUrls.CLUSTER, 60, () -> first.onNext("stopped-cds"));
        Await.until("the first writer waits for the budget", Duration.ofSeconds(10), () -> budget.waiting() == 1);
        live.offer(TypeUrls.CLUSTER, 60, () -> second.onNext("live-cds"));
        Await.until("both writers wait for the budget", Duration.ofSeconds(10), () -> budget.waiting() == 2);

        stopped.stop();
        Await.until("the stopped stream's writer left the queue", Duration.ofSeconds(10), () -> budget.waiting() == 1);
        budget.release(100);
        Await.until("the live stream's response is written", Duration.ofSeconds(10), () -> second.written.size() == 1);
        assertEquals(List.of(), first.written, "nothing is written for the stopped stream");
        Await.until("every byte is given back", Duration.ofSeconds(10), () -> budget.inFlight() == 0);
    }

    /** Review s3 finding 5: an Error from a write (serialization out of memory) gives the bytes back and fails the stream. */
    @Test
    void anErrorFromAWriteGivesTheBytesBackAndFailsTheStream() throws Exception {
        SendBudget budget = new SendBudget(100);
        Outbox outbox = new Outbox(new BlockingStream(), TransportConnection.DIRECT, "test", budget, Duration.ZERO);
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        outbox.onFailure(failure::set);
        outbox.offer(TypeUrls.CLUSTER, 50, () -> {
            throw new OutOfMemoryError("test: no memory to serialize the response");
        });
        Await.until("the stream failed", Duration.ofSeconds(10), () -> failure.get() != null);
        assertTrue(failure.get().getMessage().contains("no memory to serialize"), failure.get().getMessage());
        assertEquals(0, budget.inFlight(), "the failed write's bytes are back in the budget");
    }

    /** Review s3 finding 4: a response that grew while its writer waited keeps the writer's turn. */
    @Test
    void aResponseThatGrewWhileWaitingKeepsItsTurn() throws Exception {
        SendBudget budget = new SendBudget(100);
        budget.acquire(60, this); // other streams' responses hold all of it
        budget.acquire(40, this);
        List<String> written = new CopyOnWriteArrayList<>();
        Outbox growing = new Outbox(new BlockingStream(), TransportConnection.DIRECT, "growing", budget, Duration.ZERO);
        Outbox later = new Outbox(new BlockingStream(), TransportConnection.DIRECT, "later", budget, Duration.ZERO);
        growing.offer(TypeUrls.CLUSTER, 60, () -> written.add("growing-cds-1"));
        Await.until("the first writer waits", Duration.ofSeconds(10), () -> budget.waiting() == 1);
        later.offer(TypeUrls.CLUSTER, 50, () -> written.add("later-cds"));
        Await.until("the later writer waits behind it", Duration.ofSeconds(10), () -> budget.waiting() == 2);
        growing.offer(TypeUrls.CLUSTER, 70, () -> written.add("growing-cds-2"));

        budget.release(60); // room for the first writer's 60 bytes, not for its 70 nor the later 50
        budget.release(40);
        Await.until("both responses are written", Duration.ofSeconds(10), () -> written.size() == 2);
        assertEquals(List.of("growing-cds-2", "later-cds"), written);
    }
}
