package io.meshpilot.kube.controllers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller kit as istiod's controllers.Queue: one run per queued key, events before
 * retries, retries with a growing backoff until done, hasSynced once the initial list is
 * reconciled (real informers over the API server stand-in), a waiter woken by the signal, and a
 * term whose end stops its worker.
 */
class ControllerQueueTest {
    static final Duration WITHIN = Duration.ofSeconds(20);
    static final Backoff HOUR = Backoff.fixed(Duration.ofHours(1));
    static final Backoff FAST = new Backoff(Duration.ofMillis(1), Duration.ofMillis(4));

    @TempDir
    Path dir;

    @Test
    void anEventRunsAKeyWhoseRetryWaitsForLater() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch second = new CountDownLatch(2);
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", HOUR, key -> {
            runs.incrementAndGet();
            second.countDown();
            return runs.get() == 1 ? Outcome.RETRY : Outcome.DONE; // the first run fails: retry in an hour
        });
        try (ControllerQueue<String>.Term term = queue.start(() -> queue.add("a"))) {
            Await.until("the first run", WITHIN, () -> runs.get() >= 1);
            queue.add("a"); // an event while the hour-long retry waits
            assertTrue(second.await(WITHIN.toSeconds(), TimeUnit.SECONDS), "the event ran the key without waiting for its retry");
        }
    }

    @Test
    void aKeyQueuedManyTimesRunsOnce() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        List<String> runs = new CopyOnWriteArrayList<>();
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", HOUR, key -> {
            if (key.equals("blocker")) {
                await(hold);
            }
            runs.add(key);
            return Outcome.DONE;
        });
        try (ControllerQueue<String>.Term term = queue.start(() -> { })) {
            queue.add("blocker"); // occupies the one worker thread
            for (int i = 0; i < 50; i++) {
                queue.add("b");
            }
            hold.countDown();
            // a barrier queued after the adds is reached only once everything before it ran
            assertTrue(SyncWaiter.await(queue.barrier(), WITHIN));
            assertEquals(List.of("blocker", "b"), runs);
        }
    }

    @Test
    void aFailingKeyIsRetriedWithBackoffUntilDoneAndAThrowingOneToo() throws Exception {
        List<String> runs = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", FAST, key -> {
            runs.add(key);
            long tries = runs.stream().filter(key::equals).count();
            if (tries < 4) {
                if (key.equals("throws")) {
                    throw new IllegalStateException("API server said no");
                }
                return Outcome.RETRY;
            }
            done.countDown();
            return Outcome.DONE;
        });
        try (ControllerQueue<String>.Term term = queue.start(() -> {
            queue.add("fails");
            queue.add("throws");
        })) {
            assertTrue(done.await(WITHIN.toSeconds(), TimeUnit.SECONDS), "runs: " + runs);
            assertTrue(SyncWaiter.await(queue.barrier(), WITHIN));
            assertEquals(4, runs.stream().filter("fails"::equals).count(), "no run after DONE: " + runs);
            assertEquals(4, runs.stream().filter("throws"::equals).count(), "no run after DONE: " + runs);
        }
        assertEquals(List.of(Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(4), Duration.ofMillis(4)),
                List.of(FAST.after(1), FAST.after(2), FAST.after(3), FAST.after(10)));
        assertEquals(Duration.ofMinutes(1), new Backoff(Duration.ofMillis(100), Duration.ofMinutes(1)).after(64));
    }

    @Test
    void hasSyncedOnceTheInformersSyncedAndEveryInitialKeyIsReconciled() throws Exception {
        try (FakeApiServer api = FakeApiServer.start()) {
            api.apply("""
                    apiVersion: v1
                    kind: Namespace
                    metadata: {name: one}
                    ---
                    apiVersion: v1
                    kind: Namespace
                    metadata: {name: two}
                    """);
            CountDownLatch hold = new CountDownLatch(1);
            List<String> reconciled = new CopyOnWriteArrayList<>();
            try (KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 100, 100))) {
                SignallingInformer<V1Namespace, V1NamespaceList> informer = namespaces(client);
                try (InformerController<V1Namespace> controller = InformerController.start("test-controller", informer,
                        HOUR, (key, ns) -> {
                            await(hold);
                            reconciled.add(ns == null ? key + " gone" : key);
                            return Outcome.DONE;
                        })) {
                    client.addInformer("namespaces", informer);
                    client.start();
                    assertTrue(SyncWaiter.await(informer.synced(), WITHIN), "the informer signalled its sync");
                    assertFalse(controller.hasSynced(), "synced while the initial keys wait for their reconcile");
                    assertFalse(SyncWaiter.await(controller.synced(), Duration.ofMillis(100)));
                    hold.countDown();
                    assertTrue(SyncWaiter.await(controller.synced(), WITHIN));
                    assertTrue(controller.hasSynced());
                    assertTrue(reconciled.containsAll(List.of("one", "two")), "reconciled before hasSynced: " + reconciled);
                    assertEquals(Set.copyOf(informer.getIndexer().listKeys()), Set.copyOf(reconciled));
                    api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: three}\n");
                    Await.until("the new namespace reconciled", WITHIN, () -> reconciled.contains("three"));
                    api.delete("v1", "Namespace", null, "three");
                    Await.until("the deleted namespace reconciled as gone", WITHIN, () -> reconciled.contains("three gone"));
                }
            }
        }
    }

    @Test
    void anInformerOfAnEmptyListSignalsItsSync() throws Exception {
        try (FakeApiServer api = FakeApiServer.start();
             KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 100, 100))) {
            SignallingInformer<V1Namespace, V1NamespaceList> informer = namespaces(client);
            client.addInformer("namespaces", informer);
            assertEquals(List.of(), client.runAndWait(WITHIN));
            assertTrue(informer.hasSynced());
        }
    }

    @Test
    void theWaiterIsWokenBySignalsNotByItsDeadline() throws Exception {
        CompletableFuture<Void> informer = new CompletableFuture<>();
        CompletableFuture<Void> queue = new CompletableFuture<>();
        AtomicReference<List<String>> pending = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                pending.set(SyncWaiter.await(Map.of("informer", informer, "queue", queue), Duration.ofHours(1)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Await.until("the waiter blocked", WITHIN, () -> waiter.getState() == Thread.State.TIMED_WAITING);
        informer.complete(null);
        assertTrue(waiter.isAlive(), "returned before every signal came");
        queue.complete(null);
        waiter.join(WITHIN.toMillis());
        assertFalse(waiter.isAlive(), "the last signal woke the waiter (its deadline is an hour away)");
        assertEquals(List.of(), pending.get());
        // a signal that does not come is named when the deadline passes
        assertEquals(List.of("late"), SyncWaiter.await(Map.of("late", new CompletableFuture<>()), Duration.ofMillis(50)));
    }

    /**
     * A periodic action (istiod's ticker that queues what changed) runs on the worker between
     * reconciles, only once the informers have synced and after the initial action, and queues
     * keys as an event does; it ends with the term.
     */
    @Test
    void aPeriodicActionRunsAfterTheInitialSyncQueuesKeysAndEndsWithTheTerm() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        AtomicInteger ticks = new AtomicInteger();
        AtomicReference<Thread> worker = new AtomicReference<>();
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", HOUR, key -> {
            worker.set(Thread.currentThread());
            seen.add(key);
            return Outcome.DONE;
        });
        CompletableFuture<Void> informersSynced = new CompletableFuture<>();
        ControllerQueue<String>.Term term = queue.start(informersSynced, () -> seen.add("initial"));
        term.every(Duration.ofMillis(1), () -> {
            int tick = ticks.incrementAndGet();
            seen.add("tick " + tick);
            queue.add("changed " + tick);
        });
        assertTrue(seen.isEmpty(), "ran before the informers synced: " + seen);
        informersSynced.complete(null);
        Await.until("three ticks reconciled", WITHIN, () -> seen.contains("changed 3"));
        term.close();
        assertEquals("initial", seen.get(0), "the initial action runs first: " + seen);
        assertTrue(seen.indexOf("tick 1") < seen.indexOf("changed 1") && seen.indexOf("changed 1") < seen.indexOf("tick 2"),
                "each tick's key reconciled before the next tick (one worker, between reconciles): " + seen);
        worker.get().join(WITHIN.toMillis());
        assertFalse(worker.get().isAlive(), "the worker, and its ticks, ended with the term");
    }

    @Test
    void theEndOfATermWaitsForTheReconcileUnderWayAndStopsTheWorker() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Thread> worker = new AtomicReference<>();
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", HOUR, key -> {
            worker.set(Thread.currentThread());
            runs.incrementAndGet();
            started.countDown();
            await(new CountDownLatch(1)); // a write under way; only the interrupt ends it
            finished.incrementAndGet();
            return Outcome.DONE;
        });
        ControllerQueue<String>.Term term = queue.start(() -> queue.add("x"));
        queue.add("y");
        assertTrue(started.await(WITHIN.toSeconds(), TimeUnit.SECONDS));
        term.close();
        assertEquals(1, runs.get(), "y, queued behind x, was dropped");
        assertEquals(runs.get(), finished.get(), "close returned while a reconcile still ran");
        worker.get().join(WITHIN.toMillis());
        assertFalse(worker.get().isAlive(), "the worker thread ended");
        queue.add("z"); // outside a term: dropped
        assertFalse(queue.hasSynced());
        assertTrue(queue.barrier().isCompletedExceptionally(), "no term, nothing to wait for");
        assertEquals(1, runs.get());
    }

    private static SignallingInformer<V1Namespace, V1NamespaceList> namespaces(KubeClient client) {
        return new SignallingInformer<>(V1Namespace.class, ResourceListerWatcher.all("Namespace",
                new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces",
                        client.apiClient())), new Cache<>(), client.watchErrorHandler("Namespace"));
    }

    /** Waits for {@code latch} in a reconcile; an interrupt (the term ending) ends the wait. */
    /**
     * A term that ends before its informers synced wakes whoever waits for its sync with a
     * failure, and a reconcile that throws an Error is retried like one that throws an exception;
     * what a caller does with the sync future it got cannot make the queue look synced.
     */
    @Test
    void aTermEndingUnsyncedFailsItsWaitersAndAnErrorIsRetried() throws Exception {
        ControllerQueue<String> never = new ControllerQueue<>("test-queue", HOUR, key -> Outcome.DONE);
        ControllerQueue<String>.Term unsynced = never.start(new CompletableFuture<>(), () -> { });
        CompletableFuture<Void> waiting = never.synced();
        waiting.cancel(false);
        assertFalse(never.hasSynced(), "a caller's cancel of its copy is not the queue's sync");
        CompletableFuture<Void> barrier = never.barrier();
        CompletableFuture<Void> sync = never.synced();
        unsynced.close();
        assertTrue(sync.isCompletedExceptionally(), "the sync waiter is woken by the end of the term");
        assertTrue(barrier.isCompletedExceptionally(), "a held barrier fails with the term");

        List<String> runs = new CopyOnWriteArrayList<>();
        ControllerQueue<String> queue = new ControllerQueue<>("test-queue", FAST, key -> {
            runs.add(key);
            if (runs.size() == 1) {
                throw new StackOverflowError("deep object");
            }
            return Outcome.DONE;
        });
        try (ControllerQueue<String>.Term term = queue.start(() -> queue.add("a"))) {
            Await.until("the key retried after an Error", Duration.ofSeconds(10), () -> runs.size() >= 2);
            queue.barrier().get(10, TimeUnit.SECONDS);
            assertEquals(List.of("a", "a"), runs);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(WITHIN.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
