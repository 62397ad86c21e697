package io.meshpilot.kube.controllers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one way to wait for things that sync (informers, controller queues, registries): blocks
 * until every one has signalled or a deadline passes, woken by their signals, never by asking
 * again after a pause.
 */
public final class SyncWaiter {
    private SyncWaiter() {
    }

    /**
     * Waits until every future of {@code signals} completes or {@code timeout} passes.
     *
     * @return the names of those not synced by then, in the map's order (empty: all synced)
     */
    public static List<String> await(Map<String, ? extends CompletableFuture<?>> signals, Duration timeout)
            throws InterruptedException {
        CompletableFuture<Void> all = CompletableFuture.allOf(signals.values().toArray(CompletableFuture[]::new));
        try {
            all.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // the names of those still pending say which
        }
        List<String> pending = new ArrayList<>();
        signals.forEach((name, signal) -> {
            if (!signal.isDone() || signal.isCompletedExceptionally()) {
                pending.add(name);
            }
        });
        return pending;
    }

    /** Waits for one signal: whether it came within {@code timeout}. */
    public static boolean await(CompletableFuture<?> signal, Duration timeout) throws InterruptedException {
        return await(Map.of("signal", signal), timeout).isEmpty();
    }
}
