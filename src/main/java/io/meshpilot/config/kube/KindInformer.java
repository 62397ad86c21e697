package io.meshpilot.config.kube;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Caches;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.SignallingInformer;
import io.meshpilot.monitoring.IstioCounter;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * A list-watch informer over one resource of the API server, read as raw JSON
 * ({@code group/version/plural}), with the keys its handler has taken in: it has synced
 * when its first list went through the handler, not only into its cache.
 */
final class KindInformer {
    final String group;
    final String version;
    final String plural;
    final DynamicKubernetesApi api;
    final SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject> informer;
    /** Keys (namespace/name) the handler has seen, with the resourceVersion it saw. */
    private final Map<String, String> handled = new ConcurrentHashMap<>();
    private final Cache<DynamicKubernetesObject> cache = new Cache<>();
    /** Completes once {@link #synced()}: the first list went through the handler. */
    private final CompletableFuture<Void> handledFirstList = new CompletableFuture<>();
    /** Once the informer has synced: the keys of its cache the handler has not taken in yet. */
    private Set<String> waiting;

    KindInformer(ApiClient client, String group, String version, String plural,
                 BiConsumer<Class<DynamicKubernetesObject>, Throwable> errors) {
        this.group = group;
        this.version = version;
        this.plural = plural;
        this.api = new DynamicKubernetesApi(group, version, plural, client);
        this.informer = new SignallingInformer<>(DynamicKubernetesObject.class, ResourceListerWatcher.all(name(), api),
                cache, errors);
        informer.synced().thenRun(this::informerSynced);
    }

    private void informerSynced() {
        synchronized (this) {
            waiting = new HashSet<>();
            for (DynamicKubernetesObject o : cache.list()) {
                String key = Caches.metaNamespaceKeyFunc(o);
                if (!KubeObjects.resourceVersion(o).equals(handled.get(key))) {
                    waiting.add(key);
                }
            }
        }
        signalWhenNoneWaits();
    }

    /** The handler took {@code key} in (or saw it deleted): one fewer to wait for, when it is up to date. */
    private void taken(String key) {
        synchronized (this) {
            if (waiting == null || waiting.isEmpty()) {
                return;
            }
            DynamicKubernetesObject now = cache.getByKey(key);
            if (now != null && !KubeObjects.resourceVersion(now).equals(handled.get(key))) {
                return;
            }
            waiting.remove(key);
        }
        signalWhenNoneWaits();
    }

    /** Completed outside the lock: what waits on the signal (the store's sync) runs on this thread. */
    private void signalWhenNoneWaits() {
        boolean none;
        synchronized (this) {
            none = waiting.isEmpty();
        }
        if (none) {
            handledFirstList.complete(null);
        }
    }

    /** Completes once {@link #synced()} holds, to be waited for rather than asked again and again. */
    CompletableFuture<Void> handled() {
        return handledFirstList;
    }

    /** {@code group/version/plural}: how readiness and logs name it. */
    String name() {
        return group + "/" + version + "/" + plural;
    }

    /** istiod's crdclient event counter: {type: the kind, event: add, update or delete}. */
    static final IstioCounter CFG_EVENTS = IstioCounter.of(
            "pilot_k8s_cfg_events", "type", "event", "Events from k8s config.");

    /** Calls {@code handler} for each change, counted under {@code kind} in pilot_k8s_cfg_events. */
    void onChange(String kind, Handler handler) {
        onChange(handler, kind);
    }

    /** Calls {@code handler} for each change, after noting the key as handled. */
    void onChange(Handler handler) {
        onChange(handler, null);
    }

    private void onChange(Handler handler, String countedKind) {
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(DynamicKubernetesObject o) {
                if (countedKind != null) {
                    CFG_EVENTS.increment(countedKind, "add");
                }
                handler.upsert(o);
                handled.put(Caches.metaNamespaceKeyFunc(o), KubeObjects.resourceVersion(o));
                taken(Caches.metaNamespaceKeyFunc(o));
            }

            @Override
            public void onUpdate(DynamicKubernetesObject old, DynamicKubernetesObject o) {
                if (countedKind != null) {
                    CFG_EVENTS.increment(countedKind, "update");
                }
                handler.upsert(o);
                handled.put(Caches.metaNamespaceKeyFunc(o), KubeObjects.resourceVersion(o));
                taken(Caches.metaNamespaceKeyFunc(o));
            }

            @Override
            public void onDelete(DynamicKubernetesObject o, boolean finalStateUnknown) {
                if (countedKind != null) {
                    CFG_EVENTS.increment(countedKind, "delete");
                }
                handler.delete(o);
                handled.remove(Caches.metaNamespaceKeyFunc(o));
                taken(Caches.metaNamespaceKeyFunc(o));
            }
        });
    }

    /** Listed once, and every object of that list went through the handler. */
    boolean synced() {
        if (!informer.hasSynced()) {
            return false;
        }
        for (DynamicKubernetesObject o : cache.list()) {
            if (!KubeObjects.resourceVersion(o).equals(handled.get(Caches.metaNamespaceKeyFunc(o)))) {
                return false;
            }
        }
        return true;
    }

    /** The objects the informer holds now. */
    List<DynamicKubernetesObject> objects() {
        return cache.list();
    }

    /** What the handler of an informer is told. */
    interface Handler {
        void upsert(DynamicKubernetesObject object);

        void delete(DynamicKubernetesObject object);
    }
}
