package io.meshpilot.config.store;

import io.meshpilot.config.ConfigEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A store that also reports changes (istiod's ConfigStoreController): handlers per kind,
 * started with {@link #run()}, synced once the initial state is loaded.
 */
public interface ConfigStoreController extends ConfigStore {
    /** Handlers of one kind are called in the order changes were made, per object. */
    void registerEventHandler(String kind, Consumer<ConfigEvent> handler);

    /** Starts delivering events (and watching, for sources that watch). */
    void run();

    default boolean hasSynced() {
        return synced().isDone();
    }

    /** Completes once the initial state is loaded ({@link #hasSynced}), to be waited for rather than asked again and again. */
    CompletableFuture<Void> synced();

    /** Waits until the events of every change made so far were delivered; true if they were. */
    default boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        return true;
    }
}
