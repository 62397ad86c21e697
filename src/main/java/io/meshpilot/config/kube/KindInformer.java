package io.meshpilot.config.kube;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.SignallingInformer;
import io.meshpilot.monitoring.IstioCounter;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * A list-watch informer over one resource of the API server, read as raw JSON
 * ({@code group/version/plural}), whose events queue the changed object's key
 * ({@code kind/namespace/name}) for the store's reconcile, which reads the object from this
 * informer's cache.
 */
final class KindInformer {
    /** istiod's crdclient event counter: {type: the kind, event: add, update or delete}. */
    static final IstioCounter CFG_EVENTS = IstioCounter.of(
            "pilot_k8s_cfg_events", "type", "event", "Events from k8s config.");

    final String group;
    final String version;
    final String plural;
    final DynamicKubernetesApi api;
    final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> informer;
    private final Cache<DynamicKubernetesObject> cache = new Cache<>();
    /** Completes once every object of the first list has been reconciled; set by {@link #queueChanges}. */
    private CompletableFuture<Void> firstListReconciled;

    KindInformer(ApiClient client, String group, String version, String plural,
                 BiConsumer<Class<DynamicKubernetesObject>, Throwable> errors) {
        this.group = group;
        this.version = version;
        this.plural = plural;
        this.api = new DynamicKubernetesApi(group, version, plural, client);
        this.informer = new SignallingInformer<>(DynamicKubernetesObject.class, ResourceListerWatcher.all(name(), api),
                cache, errors);
    }

    /** {@code group/version/plural}: how readiness and logs name it. */
    String name() {
        return group + "/" + version + "/" + plural;
    }

    /**
     * Queues into {@code queue}, for each change, the key of the object under {@code kind},
     * after telling {@code watched} the watch brought it, then counts the change in
     * pilot_k8s_cfg_events when {@code counted}; once the informer has
     * synced, queues every key of its first list and notes when they have all been reconciled
     * ({@link #firstListReconciled}). Called once, before the informer starts.
     */
    void queueChanges(String kind, boolean counted, Consumer<ConfigKey> watched, ControllerQueue<ConfigKey> queue) {
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(DynamicKubernetesObject o) {
                changed(o, "add");
            }

            @Override
            public void onUpdate(DynamicKubernetesObject old, DynamicKubernetesObject o) {
                changed(o, "update");
            }

            @Override
            public void onDelete(DynamicKubernetesObject o, boolean finalStateUnknown) {
                changed(o, "delete");
            }

            private void changed(DynamicKubernetesObject o, String event) {
                ConfigKey key = keyOf(kind, o);
                watched.accept(key);
                queue.add(key);
                if (counted) {
                    CFG_EVENTS.increment(kind, event);
                }
            }
        });
        // the handlers may get the first list's events after the sync signal: its keys are queued from the cache
        firstListReconciled = informer.synced().thenCompose(synced -> {
            queueAll(kind, queue);
            return queue.barrier();
        });
    }

    /** Queues the key of every object the informer holds, under {@code kind}. */
    void queueAll(String kind, ControllerQueue<ConfigKey> queue) {
        cache.list().forEach(o -> queue.add(keyOf(kind, o)));
    }

    private static ConfigKey keyOf(String kind, DynamicKubernetesObject o) {
        return new ConfigKey(kind, KubeObjects.namespace(o), KubeObjects.name(o));
    }

    /** Completes once every object of the informer's first list has been reconciled. */
    CompletableFuture<Void> firstListReconciled() {
        return firstListReconciled;
    }

    /** The object of {@code key} as the informer holds it now; null when it holds none. */
    DynamicKubernetesObject get(ConfigKey key) {
        return cache.getByKey(key.namespace().isEmpty() ? key.name() : key.namespace() + "/" + key.name());
    }

    /** The objects the informer holds now. */
    List<DynamicKubernetesObject> objects() {
        return cache.list();
    }
}
