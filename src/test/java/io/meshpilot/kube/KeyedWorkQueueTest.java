package io.meshpilot.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** istiod's work queue semantics for a leader's duty: one run per queued key, events before retries, a clean term end. */
class KeyedWorkQueueTest {
    static final long HOUR = TimeUnit.HOURS.toMillis(1);

    @Test
    void anEventRunsAKeyWhoseRetryWaitsForLater() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch second = new CountDownLatch(2);
        KeyedWorkQueue queue = new KeyedWorkQueue("test-queue", key -> {
            runs.incrementAndGet();
            second.countDown();
            return runs.get() == 1 ? HOUR : KeyedWorkQueue.DONE; // the first run fails: retry in an hour
        });
        try (AutoCloseable term = queue.start(() -> queue.add("a"))) {
            queue.add("a"); // the trust bundle changed meanwhile, say
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (runs.get() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            queue.add("a"); // an event while the hour-long retry waits
            assertTrue(second.await(20, TimeUnit.SECONDS), "the event ran the key without waiting for its retry");
        }
    }

    @Test
    void aKeyQueuedManyTimesRunsOnce() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        List<String> runs = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        KeyedWorkQueue queue = new KeyedWorkQueue("test-queue", key -> {
            try {
                hold.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            runs.add(key);
            done.countDown();
            return KeyedWorkQueue.DONE;
        });
        try (AutoCloseable term = queue.start(() -> { })) {
            queue.add("blocker"); // occupies the one worker thread
            for (int i = 0; i < 50; i++) {
                queue.add("b");
            }
            hold.countDown();
            assertTrue(done.await(20, TimeUnit.SECONDS));
            Thread.sleep(200); // room for a duplicate run, which must not come
            assertEquals(List.of("blocker", "b"), runs);
        }
    }

    @Test
    void theEndOfATermWaitsForTheReconcileUnderWayAndDropsTheRest() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        KeyedWorkQueue queue = new KeyedWorkQueue("test-queue", key -> {
            runs.incrementAndGet();
            started.countDown();
            try {
                Thread.sleep(300); // a write under way; the interrupt ends it early
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            finished.incrementAndGet();
            return KeyedWorkQueue.DONE;
        });
        AutoCloseable term = queue.start(() -> queue.add("x"));
        queue.add("y");
        assertTrue(started.await(20, TimeUnit.SECONDS));
        term.close();
        assertEquals(runs.get(), finished.get(), "close returned while a reconcile still ran");
        int after = runs.get();
        queue.add("z"); // outside a term: dropped
        Thread.sleep(200);
        assertEquals(after, runs.get());
    }
}
