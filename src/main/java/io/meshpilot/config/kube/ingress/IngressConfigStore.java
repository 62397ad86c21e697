package io.meshpilot.config.kube.ingress;

import io.meshpilot.config.DocumentError;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.config.store.ReadOnlyConfigStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The Gateways and VirtualServices converted from Ingresses, as one more config store behind
 * the aggregate cache (istiod appends its ingress controller to the config stores): read-only,
 * synced once the {@link IngressController} converted the informers' first lists.
 */
public final class IngressConfigStore extends ReadOnlyConfigStore {
    private final IngressController controller;

    IngressConfigStore(MemoryConfigStore converted, IngressController controller) {
        super(converted, "converted from Kubernetes Ingresses: change the Ingress instead");
        this.controller = controller;
    }

    /** Starts delivering events and converting. */
    @Override
    public void run() {
        store.run();
        controller.start();
    }

    @Override
    public CompletableFuture<Void> synced() {
        return controller.synced();
    }

    @Override
    public List<DocumentError> unconverted() {
        return controller.errors();
    }
}
