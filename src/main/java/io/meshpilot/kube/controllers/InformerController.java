package io.meshpilot.kube.controllers;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Caches;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import java.util.concurrent.CompletableFuture;

/**
 * The kit's common case: one informer, keyed by its objects' {@code namespace/name}. Every add,
 * update and delete queues the key; the reconcile gets the object as the cache holds it when its
 * turn comes (null: it is gone), so a burst of changes is one reconcile of the latest state.
 */
public final class InformerController<T extends KubernetesObject> implements AutoCloseable {
    /** Brings one key up to date with {@code current}, the object now (null: deleted). */
    @FunctionalInterface
    public interface ObjectReconciler<T> {
        Outcome reconcile(String key, T current);
    }

    private final ControllerQueue<String> queue;
    private final ControllerQueue<String>.Term term;

    private <L extends KubernetesListObject> InformerController(String name, SignallingInformer<T, L> informer,
                                                                 Backoff backoff, ObjectReconciler<T> reconciler) {
        this.queue = new ControllerQueue<>(name, backoff,
                key -> reconciler.reconcile(key, informer.getIndexer().getByKey(key)));
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                queue.add(Caches.metaNamespaceKeyFunc(obj));
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                queue.add(Caches.metaNamespaceKeyFunc(newObj));
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                queue.add(Caches.metaNamespaceKeyFunc(obj));
            }
        });
        this.term = queue.start(informer.synced(), () -> informer.getIndexer().listKeys().forEach(queue::add));
    }

    /**
     * Reconciles the objects of {@code informer} (not started yet, or its first events are
     * simply covered by the initial pass over its cache) on a thread named {@code name}, until
     * {@link #close}.
     */
    public static <T extends KubernetesObject, L extends KubernetesListObject> InformerController<T> start(
            String name, SignallingInformer<T, L> informer, Backoff backoff, ObjectReconciler<T> reconciler) {
        return new InformerController<>(name, informer, backoff, reconciler);
    }

    /** Every object of the informer's first list has been reconciled. */
    public boolean hasSynced() {
        return queue.hasSynced();
    }

    /** Completes once {@link #hasSynced}. */
    public CompletableFuture<Void> synced() {
        return queue.synced();
    }

    /** Stops reconciling (a reconcile under way is interrupted and waited for). */
    @Override
    public void close() {
        term.close();
    }
}
