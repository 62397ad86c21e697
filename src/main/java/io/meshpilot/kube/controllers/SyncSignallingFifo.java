package io.meshpilot.kube.controllers;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.DeltaFIFO;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.commons.lang3.tuple.MutablePair;

/**
 * An informer's delta queue that completes {@link #synced} the moment the informer has synced
 * (its first list replaced into the queue and every item of it handed to the informer): after
 * the pop that handled the last initial item, or right after an empty first list. client-java
 * has no sync callback, only {@code hasSynced()} to ask; this is what lets waiters be woken
 * instead of asking in a loop. It uses only the queue's public methods.
 */
final class SyncSignallingFifo extends DeltaFIFO {
    private final CompletableFuture<Void> synced = new CompletableFuture<>();

    @SuppressWarnings("unchecked")
    SyncSignallingFifo(Cache<? extends KubernetesObject> cache) {
        super((Function<KubernetesObject, String>) cache.getKeyFunc(), cache);
    }

    CompletableFuture<Void> synced() {
        return synced;
    }

    @Override
    public void replace(List<KubernetesObject> list, String resourceVersion) {
        super.replace(list, resourceVersion);
        signalWhenSynced();
    }

    @Override
    public Deque<MutablePair<DeltaType, KubernetesObject>> pop(
            Consumer<Deque<MutablePair<DeltaType, KubernetesObject>>> func) throws InterruptedException {
        try {
            return super.pop(func);
        } finally {
            // also when the handler threw: the item is already counted as delivered, and the
            // informer's loop carries on, so the signal must not wait for another event
            signalWhenSynced();
        }
    }

    private void signalWhenSynced() {
        if (!synced.isDone() && hasSynced()) {
            synced.complete(null);
        }
    }
}
