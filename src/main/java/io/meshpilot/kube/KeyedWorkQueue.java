package io.meshpilot.kube;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * istiod's controllers.Queue for a single-writer duty: keys (a namespace, a webhook
 * configuration) reconciled one at a time on one thread, each key queued at most once however
 * often it is added, and retried after the delay its reconcile asks for. It runs only between
 * {@link #start} and the closing of the handle {@link #start} returns (a leader's term); keys
 * added outside it are dropped, since a new term starts by adding every key again.
 */
public final class KeyedWorkQueue {
    /** What {@link Reconciler#reconcile} returns when the key needs nothing more. */
    public static final long DONE = -1;
    private static final long STOP_WAIT_SECONDS = 10;
    private static final System.Logger LOG = System.getLogger(KeyedWorkQueue.class.getName());

    /** Brings one key up to date. */
    @FunctionalInterface
    public interface Reconciler {
        /** @return {@link #DONE}, or the milliseconds after which the key is reconciled again */
        long reconcile(String key);
    }

    private final String threadName;
    private final Reconciler reconciler;
    /** Each queued key's scheduled run: one per key, an event bringing a later retry forward. */
    private final Map<String, ScheduledFuture<?>> pending = new HashMap<>();
    private ScheduledExecutorService worker;

    public KeyedWorkQueue(String threadName, Reconciler reconciler) {
        this.threadName = threadName;
        this.reconciler = reconciler;
    }

    /** Starts the worker (once) and runs {@code initial} to queue the keys; the handle stops it. */
    public synchronized AutoCloseable start(Runnable initial) {
        if (worker == null) {
            worker = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                    .name(threadName).unstarted(r));
            initial.run();
        }
        return this::stop;
    }

    /**
     * Ends the term: nothing queued runs any more, and a reconcile under way is interrupted and
     * waited for (bounded), so the old term does not write beside the next one.
     */
    private void stop() {
        ScheduledExecutorService w;
        synchronized (this) {
            w = worker;
            worker = null;
            pending.clear();
        }
        if (w == null) {
            return;
        }
        w.shutdownNow();
        try {
            if (!w.awaitTermination(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) {
                LOG.log(System.Logger.Level.WARNING, threadName + ": a reconcile still runs "
                        + STOP_WAIT_SECONDS + " s after the term ended");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Queues {@code key} now: nothing when it is queued already (or the queue is not running);
     * a retry of it waiting for later runs now instead (istiod's workqueue Add).
     */
    public void add(String key) {
        schedule(key, 0);
    }

    private synchronized void schedule(String key, long delayMillis) {
        if (worker == null || key == null) {
            return;
        }
        ScheduledFuture<?> queued = pending.get(key);
        if (queued != null) {
            if (delayMillis > 0 || queued.getDelay(TimeUnit.MILLISECONDS) <= 0 || !queued.cancel(false)) {
                return; // due no later than asked (or starting now)
            }
        }
        ScheduledExecutorService w = worker;
        pending.put(key, w.schedule(() -> run(w, key), delayMillis, TimeUnit.MILLISECONDS));
    }

    private void run(ScheduledExecutorService w, String key) {
        synchronized (this) {
            if (worker != w) {
                return; // stopped (and perhaps restarted) meanwhile
            }
            pending.remove(key);
        }
        long retry = reconciler.reconcile(key);
        if (retry != DONE && !Thread.currentThread().isInterrupted()) {
            schedule(key, retry);
        }
    }
}
