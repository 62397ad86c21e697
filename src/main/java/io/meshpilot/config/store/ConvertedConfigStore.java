package io.meshpilot.config.store;

import io.meshpilot.config.DocumentError;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Istio config a controller converts from other Kubernetes kinds (Ingresses, the Gateway API), as
 * one more config store behind the aggregate cache, as istiod appends its converting controllers
 * to the config stores (so /debug/configz lists what they made): read-only, running when the
 * controller starts converting, synced once it converted the informers' first lists, and
 * reporting what it could not convert.
 */
public final class ConvertedConfigStore extends ReadOnlyConfigStore {
    private final Runnable startConverting;
    private final Supplier<CompletableFuture<Void>> converted;
    private final Supplier<List<DocumentError>> unconverted;

    /**
     * @param store           what the controller puts and removes
     * @param readOnlyReason  why a write is refused, and which object to change instead
     * @param startConverting starts the controller
     * @param converted       completes when the controller converted its first lists
     * @param unconverted     the objects the controller could not convert, and why
     */
    public ConvertedConfigStore(MemoryConfigStore store, String readOnlyReason, Runnable startConverting,
                                Supplier<CompletableFuture<Void>> converted, Supplier<List<DocumentError>> unconverted) {
        super(store, readOnlyReason);
        this.startConverting = startConverting;
        this.converted = converted;
        this.unconverted = unconverted;
    }

    /** Starts delivering events and converting. */
    @Override
    public void run() {
        store.run();
        startConverting.run();
    }

    @Override
    public CompletableFuture<Void> synced() {
        return converted.get();
    }

    @Override
    public List<DocumentError> unconverted() {
        return unconverted.get();
    }
}
