package io.meshpilot.kube.controllers;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import java.util.function.Consumer;

/** Informer handlers for controllers that look at an object's current state whatever the event. */
public final class ObjectEvents {
    private ObjectEvents() {
    }

    /** Hands the object of every add, update (the new one) and delete to {@code changed}. */
    public static <T extends KubernetesObject> ResourceEventHandler<T> each(Consumer<T> changed) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                changed.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                changed.accept(newObj);
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                changed.accept(obj);
            }
        };
    }
}
