package io.meshpilot.kube.controllers;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.SharedInformer;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Indexer;
import io.kubernetes.client.informer.impl.DefaultSharedIndexInformer;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

/**
 * client-java's informer, which also says when it has synced ({@link #synced()} completes once
 * its first list is in its cache and handed to its handlers), so sync waits are woken rather
 * than polled. Every informer of the project is one.
 */
public final class SignallingInformer<T extends KubernetesObject, L extends KubernetesListObject>
        extends DefaultSharedIndexInformer<T, L> {
    private final CompletableFuture<Void> synced;

    /** An informer over {@code listerWatcher} into {@code cache}, reporting watch errors to {@code errors}. */
    public SignallingInformer(Class<T> type, ListerWatcher<T, L> listerWatcher, Cache<T> cache,
                              BiConsumer<Class<T>, Throwable> errors) {
        this(type, listerWatcher, cache, new SyncSignallingFifo(cache), errors);
    }

    private SignallingInformer(Class<T> type, ListerWatcher<T, L> listerWatcher, Cache<T> cache, SyncSignallingFifo fifo,
                               BiConsumer<Class<T>, Throwable> errors) {
        super(type, listerWatcher, 0, fifo, cache, errors);
        this.synced = fifo.synced();
    }

    /** The cache, typed (the library's class returns it raw; its interface types it). */
    @Override
    @SuppressWarnings("unchecked")
    public Indexer<T> getIndexer() {
        return super.getIndexer();
    }

    /**
     * The sync signal of {@code informer}, which must be one of these (every informer the
     * project makes is, its Kubernetes client's factory included).
     */
    public static CompletableFuture<Void> syncedOf(SharedInformer<?> informer) {
        if (informer instanceof SignallingInformer<?, ?> signalling) {
            return signalling.synced();
        }
        throw new IllegalArgumentException("informer " + informer + " does not signal its sync: make it a SignallingInformer");
    }

    /** Completes once the informer has synced; never fails. */
    public CompletableFuture<Void> synced() {
        return synced;
    }
}
