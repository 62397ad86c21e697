package io.meshpilot.config.store;

import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.Config;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.ConfigKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The config cache every component reads (istiod's aggregate config controller): reads merge
 * the stores (the first store holding an object wins), writes go to the one writable store,
 * events of all stores fan in, and it is synced when every store is.
 */
public final class AggregateConfigStore implements ConfigStoreController {
    private final List<ConfigStoreController> stores;
    private final ConfigStoreController writable;

    /**
     * @param stores   in priority order
     * @param writable the store that takes writes (one of {@code stores}), or null for read-only
     */
    public AggregateConfigStore(List<ConfigStoreController> stores, ConfigStoreController writable) {
        this.stores = List.copyOf(stores);
        this.writable = writable;
    }

    @Override
    public Collection<Schema> schemas() {
        Map<String, Schema> all = new LinkedHashMap<>();
        stores.forEach(s -> s.schemas().forEach(sc -> all.putIfAbsent(sc.kind(), sc)));
        return all.values();
    }

    @Override
    public Optional<Config> get(String kind, String namespace, String name) {
        for (ConfigStoreController s : stores) {
            Optional<Config> c = s.get(kind, namespace, name);
            if (c.isPresent()) {
                return c;
            }
        }
        return Optional.empty();
    }

    @Override
    public List<Config> list(String kind, String namespace) {
        Set<ConfigKey> seen = new HashSet<>();
        List<Config> out = new ArrayList<>();
        for (ConfigStoreController s : stores) {
            for (Config c : s.list(kind, namespace)) {
                if (seen.add(c.key())) {
                    out.add(c);
                }
            }
        }
        out.sort(Comparator.comparing(Config::key));
        return out;
    }

    @Override
    public List<DocumentError> unconverted() {
        List<DocumentError> out = new ArrayList<>();
        stores.forEach(s -> out.addAll(s.unconverted()));
        return out;
    }

    /** An object that more than one store holds: the first store's copy is served, the others are hidden. */
    public record Shadowed(Config served, ConfigStoreController servedBy, Config hidden, ConfigStoreController hiddenIn) {
    }

    /**
     * Objects hidden by a store earlier in the order (a --configDir file that defines an
     * object written over the API): what is served and what is not, for reports.
     */
    public List<Shadowed> shadowed() {
        List<Shadowed> out = new ArrayList<>();
        for (int i = 1; i < stores.size(); i++) {
            ConfigStoreController later = stores.get(i);
            for (Schema schema : later.schemas()) {
                for (Config hidden : later.list(schema.kind(), null)) {
                    for (ConfigStoreController earlier : stores.subList(0, i)) {
                        Optional<Config> served = earlier.get(hidden.gvk().kind(), hidden.namespace(), hidden.name());
                        if (served.isPresent()) {
                            out.add(new Shadowed(served.get(), earlier, hidden, later));
                            break;
                        }
                    }
                }
            }
        }
        out.sort(Comparator.comparing(s -> s.hidden().key()));
        return out;
    }

    private ConfigStoreController writer(ConfigKey key) {
        if (writable == null) {
            throw new ConfigStoreException.ReadOnly(key, "no writable config store");
        }
        // An object owned by a read-only store (a file) cannot be shadowed by a write.
        for (ConfigStoreController s : stores) {
            if (s != writable && s.get(key.kind(), key.namespace(), key.name()).isPresent()) {
                throw new ConfigStoreException.ReadOnly(key, "owned by a read-only source (e.g. a file in --configDir)");
            }
        }
        return writable;
    }

    @Override
    public Config create(Config config) {
        return writer(config.key()).create(config);
    }

    @Override
    public Config update(Config config) {
        return writer(config.key()).update(config);
    }

    @Override
    public Config updateStatus(Config config) {
        return writer(config.key()).updateStatus(config);
    }

    @Override
    public Config patch(String kind, String namespace, String name, UnaryOperator<Config> change) {
        return writer(new ConfigKey(kind, namespace, name)).patch(kind, namespace, name, change);
    }

    @Override
    public void delete(String kind, String namespace, String name, String resourceVersion) {
        writer(new ConfigKey(kind, namespace, name)).delete(kind, namespace, name, resourceVersion);
    }

    @Override
    public void registerEventHandler(String kind, Consumer<ConfigEvent> handler) {
        stores.forEach(s -> s.registerEventHandler(kind, handler));
    }

    @Override
    public void run() {
        stores.forEach(ConfigStoreController::run);
    }

    @Override
    public boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (ConfigStoreController s : stores) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !s.awaitEventsDelivered(left, TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean hasSynced() {
        return stores.stream().allMatch(ConfigStoreController::hasSynced);
    }

    @Override
    public CompletableFuture<Void> synced() {
        return CompletableFuture.allOf(stores.stream().map(ConfigStoreController::synced)
                .toArray(CompletableFuture[]::new));
    }
}
