package io.meshpilot.registry;

import io.meshpilot.model.ServiceDiscovery;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** One source of services (istiod's serviceregistry.Instance): a provider in a cluster. */
public interface ServiceRegistry extends ServiceDiscovery {
    /** e.g. "External" (ServiceEntries), "Kubernetes", "Mock". */
    String provider();

    String cluster();

    /** Called for every service change, after the registry's state reflects it. */
    void appendServiceHandler(Consumer<ServiceEvent> handler);

    default boolean hasSynced() {
        return synced().isDone();
    }

    /** Completes once {@link #hasSynced}, to be waited for rather than asked again and again. */
    CompletableFuture<Void> synced();
}
