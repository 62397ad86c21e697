package io.meshpilot.config.store;

import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schema;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The embedded writable store: the in-memory store, with every change saved to a
 * {@link ConfigStateDir} before it is acknowledged, and the saved objects taken back when
 * the server starts (before readiness: the config-stores component opens it).
 */
public final class DurableConfigStore implements WritableConfigStore {
    private final ConfigStateDir state;
    private final MemoryConfigStore memory;
    private final List<DocumentError> errors;

    private DurableConfigStore(ConfigStateDir state, MemoryConfigStore memory, List<DocumentError> errors) {
        this.state = state;
        this.memory = memory;
        this.errors = List.copyOf(errors);
    }

    /**
     * Opens (creating it if needed) and loads {@code dir}. Damaged files are in
     * {@link #errors()} and left out; only a directory that cannot be used at all fails.
     *
     * @throws IOException when {@code dir} cannot be created, written or locked
     */
    public static DurableConfigStore open(Path dir, ConfigParser parser, Collection<Schema> schemas)
            throws IOException {
        ConfigStateDir state = ConfigStateDir.open(dir);
        try {
            ConfigStateDir.Loaded loaded = state.load(parser);
            MemoryConfigStore memory = new MemoryConfigStore("state", schemas, true, state);
            for (Config c : loaded.configs()) {
                memory.restore(c);
            }
            // resourceVersions must not repeat across restarts: a client holding the version of
            // a since-deleted object must not match the object created again after a restart,
            // and deleted objects leave no number behind. Counting on from the clock in
            // microseconds stays above every earlier run unless that run averaged more than a
            // million writes a second.
            memory.advanceRevision(ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()));
            return new DurableConfigStore(state, memory, loaded.errors());
        } catch (RuntimeException e) {
            state.close();
            throw e;
        }
    }

    @Override
    public String describe() {
        return "state " + state.root();
    }

    @Override
    public List<DocumentError> errors() {
        return errors;
    }

    @Override
    public Collection<Schema> schemas() {
        return memory.schemas();
    }

    @Override
    public Optional<Config> get(String kind, String namespace, String name) {
        return memory.get(kind, namespace, name);
    }

    @Override
    public List<Config> list(String kind, String namespace) {
        return memory.list(kind, namespace);
    }

    @Override
    public Config create(Config config) {
        return memory.create(config);
    }

    @Override
    public Config update(Config config) {
        return memory.update(config);
    }

    @Override
    public Config updateStatus(Config config) {
        return memory.updateStatus(config);
    }

    @Override
    public Config patch(String kind, String namespace, String name, UnaryOperator<Config> change) {
        return memory.patch(kind, namespace, name, change);
    }

    @Override
    public void delete(String kind, String namespace, String name, String resourceVersion) {
        memory.delete(kind, namespace, name, resourceVersion);
    }

    @Override
    public void registerEventHandler(String kind, Consumer<ConfigEvent> handler) {
        memory.registerEventHandler(kind, handler);
    }

    @Override
    public void run() {
        memory.run();
    }

    @Override
    public boolean hasSynced() {
        return memory.hasSynced();
    }

    @Override
    public CompletableFuture<Void> synced() {
        return memory.synced();
    }

    @Override
    public boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        return memory.awaitEventsDelivered(timeout, unit);
    }

    @Override
    public void close() {
        memory.close();
        state.close();
    }
}
