package io.meshpilot.config.kube.gateway;

import io.meshpilot.config.DocumentError;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.config.store.ReadOnlyConfigStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The Gateways, VirtualServices and DestinationRules converted from the Kubernetes Gateway API,
 * as one more config store behind the aggregate cache (so /debug/configz lists them):
 * read-only, synced once the {@link GatewayApiController} converted the informers' first lists.
 */
public final class GatewayApiConfigStore extends ReadOnlyConfigStore {
    static final String READ_ONLY = "converted from Kubernetes Gateway API: change the Gateway API object instead";
    private final GatewayApiController controller;

    GatewayApiConfigStore(MemoryConfigStore converted, GatewayApiController controller) {
        super(converted, READ_ONLY);
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
