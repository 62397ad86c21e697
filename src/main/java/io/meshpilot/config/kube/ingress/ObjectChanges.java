package io.meshpilot.config.kube.ingress;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import java.util.function.BiPredicate;
import java.util.function.Consumer;

/**
 * An informer handler that hands each added or deleted object, and each updated one whose
 * update matters, to one action (which queues a key): the Ingress controller's and its status
 * writer's way of turning informer events into work.
 */
final class ObjectChanges<T extends KubernetesObject> implements ResourceEventHandler<T> {
    private final BiPredicate<T, T> updateMatters;
    private final Consumer<T> changed;

    /** @param updateMatters given the old and the new object, whether the update can change the outcome */
    ObjectChanges(BiPredicate<T, T> updateMatters, Consumer<T> changed) {
        this.updateMatters = updateMatters;
        this.changed = changed;
    }

    /** Every add, update and delete. */
    ObjectChanges(Consumer<T> changed) {
        this((before, after) -> true, changed);
    }

    @Override
    public void onAdd(T obj) {
        changed.accept(obj);
    }

    @Override
    public void onUpdate(T oldObj, T newObj) {
        if (updateMatters.test(oldObj, newObj)) {
            changed.accept(newObj);
        }
    }

    @Override
    public void onDelete(T obj, boolean finalStateUnknown) {
        changed.accept(obj);
    }
}
