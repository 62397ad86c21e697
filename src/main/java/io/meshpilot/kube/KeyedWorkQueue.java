package io.meshpilot.kube;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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

    /** Brings one key up to date. */
    @FunctionalInterface
    public interface Reconciler {
        /** @return {@link #DONE}, or the milliseconds after which the key is reconciled again */
        long reconcile(String key);
    }

    private final String threadName;
    private final Reconciler reconciler;
    private final Set<String> queued = new LinkedHashSet<>();
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

    private synchronized void stop() {
        if (worker != null) {
            worker.shutdownNow();
            worker = null;
            queued.clear();
        }
    }

    /** Queues {@code key} now (nothing when it is queued already or the queue is not running). */
    public void add(String key) {
        schedule(key, 0);
    }

    private synchronized void schedule(String key, long delayMillis) {
        if (worker == null || key == null || !queued.add(key)) {
            return;
        }
        ScheduledExecutorService w = worker;
        w.schedule(() -> {
            synchronized (this) {
                if (worker != w) {
                    return; // stopped (and perhaps restarted) meanwhile
                }
                queued.remove(key);
            }
            long retry = reconciler.reconcile(key);
            if (retry != DONE && !Thread.currentThread().isInterrupted()) {
                schedule(key, retry);
            }
        }, delayMillis, TimeUnit.MILLISECONDS);
    }
}
