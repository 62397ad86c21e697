package io.meshpilot.kube.controllers;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * istiod's controllers.Queue: informer handlers {@link #add} keys, one worker thread
 * reconciles them one at a time. A key is queued at most once however often it is added (an
 * add while its retry waits runs it now instead); a reconcile that asks for a retry, or throws,
 * is run again after the key's {@link Backoff}, which resets when the key is done.
 *
 * <p>A queue works during a term, from {@link #start} to the close of the {@link Term} it
 * returns (a controller's life, or a leader's term); keys added outside a term are dropped,
 * since a term starts by queueing every key again. Within a term nothing is reconciled before
 * the informers have synced: the keys added meanwhile wait, then the term's initial action runs
 * (it queues every key, or converts everything at once), then the waiting keys, then the sync
 * marker: {@link #hasSynced} is true once the marker is reached, that is once every key the
 * initial list queued has been reconciled, and {@link #synced()} completes then, for
 * {@link SyncWaiter}. A term may also run an action periodically ({@link Term#every}), on the
 * worker between reconciles: istiod's tickers that queue the keys whose state changed.
 *
 * <p>Why not client-java-extended's workqueues and controller builder: its DefaultDelayingQueue
 * moves delayed keys with a thread that wakes on a 10 s heartbeat poll, hands them over through
 * a queue bounded at 1000 whose {@code offer} silently drops retries when full, and its default
 * constructor starts a non-daemon thread nothing stops; its DefaultController polls readiness
 * once a second and gives up after 30 s, registers its own Prometheus metrics
 * ({@code controller_*}, not istiod's), and its shutdown neither interrupts nor waits for a
 * reconcile under way, so an old leader's term could still write beside the next. Neither has a
 * sync marker ({@link #hasSynced}).
 */
public final class ControllerQueue<K> {
    private static final System.Logger LOG = System.getLogger(ControllerQueue.class.getName());
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    /** What a reconcile asks for. */
    public enum Outcome {
        /** The key is up to date (or nothing more can be done for it): its backoff resets. */
        DONE,
        /** Reconcile the key again after its backoff. */
        RETRY
    }

    /** Brings one key up to date. */
    @FunctionalInterface
    public interface Reconciler<K> {
        Outcome reconcile(K key);
    }

    private final String name;
    private final Backoff backoff;
    private final Reconciler<K> reconciler;
    private Term term;

    /**
     * @param name       the worker thread's name, and the queue's in logs
     * @param backoff    the wait before a key's retry
     * @param reconciler run on the worker thread, one key at a time
     */
    public ControllerQueue(String name, Backoff backoff, Reconciler<K> reconciler) {
        this.name = name;
        this.backoff = backoff;
        this.reconciler = reconciler;
    }

    /** {@link #start(CompletableFuture, Runnable)} for a queue whose informers have synced already. */
    public Term start(Runnable initial) {
        return start(CompletableFuture.completedFuture(null), initial);
    }

    /**
     * Starts a term (once: while one runs, it is returned again).
     *
     * @param informersSynced completes when the informers the keys come from have synced
     * @param initial         run on the worker first, once they have: queues every key (or does
     *                        the initial work itself)
     */
    public Term start(CompletableFuture<?> informersSynced, Runnable initial) {
        return start(informersSynced, initial, () -> { });
    }

    /**
     * {@link #start(CompletableFuture, Runnable)}, with {@code atEnd} run once the term has
     * ended and no reconcile runs any more (before {@link Term#close} returns, unless its wait
     * runs out: then as the last reconcile ends), for what the reconciles made and only they touch.
     */
    public synchronized Term start(CompletableFuture<?> informersSynced, Runnable initial, Runnable atEnd) {
        if (term == null) {
            Term t = new Term(initial, atEnd);
            term = t;
            informersSynced.thenRun(t::begin);
        }
        return term;
    }

    /**
     * Queues {@code key} now: nothing when it is queued already (or no term runs); a retry of it
     * waiting for later runs now instead (istiod's workqueue Add).
     */
    public void add(K key) {
        Term t;
        synchronized (this) {
            t = term;
        }
        if (t != null && key != null) {
            t.schedule(key, 0);
        }
    }

    /** Whether the current term has reconciled every key of the informers' initial lists. */
    public synchronized boolean hasSynced() {
        return term != null && term.synced.isDone();
    }

    /**
     * Completes when the current term has synced ({@link #hasSynced}), fails when it ends
     * before; a failed future outside a term. A copy: what a caller does with it (a timeout, a
     * cancel) cannot make the queue look synced.
     */
    public synchronized CompletableFuture<Void> synced() {
        return term == null ? CompletableFuture.failedFuture(new IllegalStateException(name + " is not running"))
                : term.synced.copy();
    }

    /**
     * Completes once everything queued before this call has been reconciled (after the initial
     * sync); a failed future outside a term.
     */
    public CompletableFuture<Void> barrier() {
        Term t;
        synchronized (this) {
            t = term;
        }
        return t == null ? CompletableFuture.failedFuture(new IllegalStateException(name + " is not running"))
                : t.barrier();
    }

    /** One term of the queue: its worker, its queued keys and their failures. Closing it ends the term. */
    public final class Term implements AutoCloseable {
        private final Runnable initial;
        private final Runnable atEnd;
        private final ScheduledThreadPoolExecutor worker = new ScheduledThreadPoolExecutor(1,
                r -> Thread.ofPlatform().daemon().name(name).unstarted(r)) {
            @Override
            protected void terminated() {
                runAtEnd(); // the executor's own hook: after its last task, before awaitTermination returns
            }
        };
        /** Each queued key's run: one per key. */
        private final Map<K, ScheduledFuture<?>> queued = new HashMap<>();
        /** Failures in a row, for the keys that failed last time. */
        private final Map<K, Integer> failures = new HashMap<>();
        /** Keys added before the informers synced, in order; null once they have. */
        private Set<K> held = new LinkedHashSet<>();
        private final List<CompletableFuture<Void>> heldBarriers = new ArrayList<>();
        /** Barriers (the sync marker among them) on the worker: failed if the term ends first. */
        private final Set<CompletableFuture<Void>> scheduledBarriers = new HashSet<>();
        /** Periodic actions asked for before the informers synced: started once they have. */
        private final List<Runnable> heldPeriodic = new ArrayList<>();
        private final CompletableFuture<Void> synced = new CompletableFuture<>();
        private boolean ended;

        private Term(Runnable initial, Runnable atEnd) {
            this.initial = initial;
            this.atEnd = atEnd;
            worker.setRemoveOnCancelPolicy(true); // a retry an event brought forward leaves nothing behind
        }

        private void runAtEnd() {
            runLogged("the end of the term", atEnd);
        }

        /** Runs {@code action}; a failure is one ERROR line (its stack at DEBUG), as the worker goes on. */
        private void runLogged(String what, Runnable action) {
            try {
                action.run();
            } catch (RuntimeException | Error e) {
                // an Error too: left in the worker's future it would end the controller without a line
                LOG.log(Level.ERROR, name + ": " + what + " failed: " + e);
                LOG.log(Level.DEBUG, name + ": " + what + " failure", e);
            }
        }

        private void begin() {
            try {
                worker.execute(this::runInitial);
            } catch (RejectedExecutionException e) {
                // the term ended before the informers synced
            }
        }

        private void runInitial() {
            runLogged("initial sync", initial);
            synchronized (ControllerQueue.this) {
                if (ended) {
                    return;
                }
                Set<K> waiting = held;
                held = null;
                waiting.forEach(key -> schedule(key, 0));
                heldBarriers.forEach(this::scheduleBarrier);
                heldBarriers.clear();
                heldPeriodic.forEach(Runnable::run);
                heldPeriodic.clear();
                scheduleBarrier(synced); // after every key queued so far
            }
        }

        private void schedule(K key, long delayMillis) {
            synchronized (ControllerQueue.this) {
                if (ended) {
                    return;
                }
                if (held != null) {
                    held.add(key);
                    return;
                }
                ScheduledFuture<?> waiting = queued.get(key);
                if (waiting != null) {
                    if (delayMillis > 0 || waiting.getDelay(TimeUnit.MILLISECONDS) <= 0 || !waiting.cancel(false)) {
                        return; // due no later than asked (or starting now)
                    }
                }
                queued.put(key, worker.schedule(() -> reconcile(key), delayMillis, TimeUnit.MILLISECONDS));
            }
        }

        /**
         * Runs {@code action} on the worker every {@code period} until the term ends, between
         * reconciles (so it sees no reconcile half done), the first time one period after the
         * initial action or after this call, whichever is later; typically it {@link #add}s the keys whose state changed. A failure is
         * logged and the next period runs all the same.
         */
        public void every(Duration period, Runnable action) {
            long millis = period.toMillis();
            Runnable periodic = () -> worker.scheduleWithFixedDelay(() -> runLogged("periodic action", action),
                    millis, millis, TimeUnit.MILLISECONDS);
            synchronized (ControllerQueue.this) {
                if (ended) {
                    return;
                }
                if (held != null) {
                    heldPeriodic.add(periodic);
                } else {
                    periodic.run();
                }
            }
        }

        private CompletableFuture<Void> barrier() {
            CompletableFuture<Void> done = new CompletableFuture<>();
            synchronized (ControllerQueue.this) {
                if (ended) {
                    done.completeExceptionally(new IllegalStateException(name + " is not running"));
                } else if (held != null) {
                    heldBarriers.add(done);
                } else {
                    scheduleBarrier(done);
                }
            }
            return done;
        }

        private void scheduleBarrier(CompletableFuture<Void> done) {
            scheduledBarriers.add(done);
            done.whenComplete((v, e) -> {
                synchronized (ControllerQueue.this) {
                    scheduledBarriers.remove(done);
                }
            });
            worker.schedule(() -> done.complete(null), 0, TimeUnit.MILLISECONDS);
        }

        private void reconcile(K key) {
            synchronized (ControllerQueue.this) {
                if (ended) {
                    return;
                }
                queued.remove(key);
            }
            Outcome outcome;
            try {
                outcome = reconciler.reconcile(key);
            } catch (RuntimeException | Error e) {
                LOG.log(Level.WARNING, name + ": reconcile " + key + " failed (retrying): " + e);
                LOG.log(Level.DEBUG, name + ": reconcile " + key + " failure", e);
                outcome = Outcome.RETRY;
            }
            if (Thread.currentThread().isInterrupted()) {
                return; // the term ended under it
            }
            long retryMillis;
            synchronized (ControllerQueue.this) {
                if (outcome == Outcome.DONE) {
                    failures.remove(key);
                    return;
                }
                retryMillis = backoff.after(failures.merge(key, 1, Integer::sum)).toMillis();
            }
            schedule(key, retryMillis);
        }

        /**
         * Ends the term: nothing queued runs any more, and a reconcile under way is interrupted
         * and waited for (up to 10 s), so the old term does not write beside the next one.
         */
        @Override
        public void close() {
            close(STOP_WAIT);
        }

        /** {@link #close()}, waiting up to {@code wait} for a reconcile under way. */
        public void close(Duration wait) {
            synchronized (ControllerQueue.this) {
                if (ended) {
                    return;
                }
                ended = true;
                if (term == this) {
                    term = null;
                }
                queued.clear();
                failures.clear();
                IllegalStateException stopped = new IllegalStateException(name + " stopped");
                heldBarriers.forEach(b -> b.completeExceptionally(stopped));
                heldBarriers.clear();
                List.copyOf(scheduledBarriers).forEach(b -> b.completeExceptionally(stopped));
                synced.completeExceptionally(stopped); // no-op once synced: waiters of a term that ends unsynced wake

                heldPeriodic.clear();
            }
            worker.shutdownNow();
            try {
                if (!worker.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.log(Level.WARNING, name + ": a reconcile still runs " + wait.toSeconds()
                            + " s after the term ended");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
