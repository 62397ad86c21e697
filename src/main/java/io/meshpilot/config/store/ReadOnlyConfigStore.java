package io.meshpilot.config.store;

import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.schema.Schema;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * A source that owns its objects (files, config converted from other Kubernetes kinds) and
 * keeps them in a {@link MemoryConfigStore}: reads and events come from there, every write
 * over the config API is refused with the reason the source gives. The source decides when
 * it runs and when it has synced.
 */
public abstract class ReadOnlyConfigStore implements ConfigStoreController {
    /** What the source put and removed. */
    protected final MemoryConfigStore store;
    private final String readOnlyReason;

    /** @param readOnlyReason why a write is refused, and what to change instead */
    protected ReadOnlyConfigStore(MemoryConfigStore store, String readOnlyReason) {
        this.store = store;
        this.readOnlyReason = readOnlyReason;
    }

    @Override
    public Collection<Schema> schemas() {
        return store.schemas();
    }

    @Override
    public Optional<Config> get(String kind, String namespace, String name) {
        return store.get(kind, namespace, name);
    }

    @Override
    public List<Config> list(String kind, String namespace) {
        return store.list(kind, namespace);
    }

    private ConfigStoreException readOnly(ConfigKey key) {
        return new ConfigStoreException.ReadOnly(key, readOnlyReason);
    }

    @Override
    public Config create(Config config) {
        throw readOnly(config.key());
    }

    @Override
    public Config update(Config config) {
        throw readOnly(config.key());
    }

    @Override
    public Config updateStatus(Config config) {
        throw readOnly(config.key());
    }

    @Override
    public Config patch(String kind, String namespace, String name, UnaryOperator<Config> change) {
        throw readOnly(new ConfigKey(kind, namespace, name));
    }

    @Override
    public void delete(String kind, String namespace, String name, String resourceVersion) {
        throw readOnly(new ConfigKey(kind, namespace, name));
    }

    @Override
    public void registerEventHandler(String kind, Consumer<ConfigEvent> handler) {
        store.registerEventHandler(kind, handler);
    }

    /** Waits until events of every change so far were delivered. */
    @Override
    public boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        return store.awaitEventsDelivered(timeout, unit);
    }
}
