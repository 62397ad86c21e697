package io.meshpilot.config.store;

import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Thread-safe in-memory config store (istiod's memory store): the writable store of the
 * aggregate, and the building block of the file source. Reads are lock-free; writes are
 * serialized so resourceVersions and events follow one commit order. Each change goes to its
 * {@link ConfigPersistence} first: a change that cannot be persisted is not made.
 */
public final class MemoryConfigStore implements ConfigStoreController, AutoCloseable {
    private final Map<String, Schema> schemas = new LinkedHashMap<>();
    private final Map<String, Map<String, Config>> data = new ConcurrentHashMap<>();
    private final AtomicLong revision = new AtomicLong();
    private final EventDispatcher events;
    private final boolean validate;
    private final ConfigPersistence persistence;
    private final CompletableFuture<Void> synced = new CompletableFuture<>();

    /**
     * @param validate run each kind's validation on create/update (off for sources that
     *                 validated while loading)
     */
    public MemoryConfigStore(String name, Collection<Schema> schemas, boolean validate) {
        this(name, schemas, validate, ConfigPersistence.NONE);
    }

    /** A store whose every change is first made durable by {@code persistence}. */
    public MemoryConfigStore(String name, Collection<Schema> schemas, boolean validate, ConfigPersistence persistence) {
        schemas.forEach(s -> this.schemas.put(s.kind(), s));
        this.validate = validate;
        this.persistence = persistence;
        this.events = new EventDispatcher(name);
    }

    @Override
    public Collection<Schema> schemas() {
        return schemas.values();
    }

    private Schema schema(ConfigKey key) {
        Schema s = schemas.get(key.kind());
        if (s == null) {
            throw new ConfigStoreException.ReadOnly(key, "kind " + key.kind() + " is not held by this store");
        }
        return s;
    }

    private static String id(String namespace, String name) {
        return namespace + "/" + name;
    }

    private Map<String, Config> of(String kind) {
        return data.computeIfAbsent(kind, k -> new ConcurrentHashMap<>());
    }

    @Override
    public Optional<Config> get(String kind, String namespace, String name) {
        return Optional.ofNullable(of(kind).get(id(namespace, name)));
    }

    @Override
    public List<Config> list(String kind, String namespace) {
        return ConfigStore.listed(of(kind).values(), namespace);
    }

    private void check(Config c) {
        Schema s = schema(c.key());
        if (!s.defaultSpec().getDescriptorForType().equals(c.spec().getDescriptorForType())) {
            throw new ConfigStoreException.Invalid(c.key(), new ValidationResult(List.of(new ValidationResult.Issue(
                    "spec", "expected " + s.defaultSpec().getDescriptorForType().getFullName())), List.of()));
        }
        if (validate) {
            Validation v = new Validation();
            s.validator().validate(c, v);
            ValidationResult r = v.result();
            if (!r.valid()) {
                throw new ConfigStoreException.Invalid(c.key(), r);
            }
        }
    }

    private String nextRevision() {
        return Long.toString(revision.incrementAndGet());
    }

    @Override
    public Config create(Config config) {
        check(config);
        synchronized (this) {
            Map<String, Config> m = of(config.gvk().kind());
            String id = id(config.namespace(), config.name());
            if (m.containsKey(id)) {
                throw new ConfigStoreException.AlreadyExists(config.key());
            }
            Config stored = config.withMeta(nextRevision(), 1, Instant.now());
            persistence.saved(stored);
            m.put(id, stored);
            events.submit(new ConfigEvent(ConfigEvent.Type.ADD, null, stored));
            return stored;
        }
    }

    @Override
    public Config update(Config config) {
        check(config);
        synchronized (this) {
            Config old = current(config);
            long gen = old.spec().equals(config.spec()) ? old.generation() : old.generation() + 1;
            Config stored = config.withStatus(old.status()).withMeta(nextRevision(), gen, old.creationTimestamp());
            persistence.saved(stored);
            of(config.gvk().kind()).put(id(config.namespace(), config.name()), stored);
            events.submit(new ConfigEvent(ConfigEvent.Type.UPDATE, old, stored));
            return stored;
        }
    }

    @Override
    public Config updateStatus(Config config) {
        synchronized (this) {
            Config old = current(config);
            Config stored = old.withStatus(config.status()).withMeta(nextRevision(), old.generation(),
                    old.creationTimestamp());
            persistence.saved(stored);
            of(config.gvk().kind()).put(id(config.namespace(), config.name()), stored);
            events.submit(new ConfigEvent(ConfigEvent.Type.UPDATE, old, stored));
            return stored;
        }
    }

    /** The stored object, after checking the caller's resourceVersion against it. */
    private Config current(Config config) {
        Config old = of(config.gvk().kind()).get(id(config.namespace(), config.name()));
        if (old == null) {
            throw new ConfigStoreException.NotFound(config.key());
        }
        if (!config.resourceVersion().isEmpty() && !config.resourceVersion().equals(old.resourceVersion())) {
            throw new ConfigStoreException.Conflict(config.key(), config.resourceVersion(), old.resourceVersion());
        }
        return old;
    }

    @Override
    public Config patch(String kind, String namespace, String name, UnaryOperator<Config> change) {
        while (true) {
            Config cur = get(kind, namespace, name).orElseThrow(
                    () -> new ConfigStoreException.NotFound(new ConfigKey(kind, namespace, name)));
            try {
                return update(change.apply(cur).withResourceVersion(cur.resourceVersion()));
            } catch (ConfigStoreException.Conflict e) {
                // someone wrote in between: read again and reapply
            }
        }
    }

    @Override
    public void delete(String kind, String namespace, String name, String resourceVersion) {
        synchronized (this) {
            ConfigKey key = new ConfigKey(kind, namespace, name);
            schema(key);
            Map<String, Config> m = of(kind);
            Config old = m.get(id(namespace, name));
            if (old == null) {
                throw new ConfigStoreException.NotFound(key);
            }
            if (resourceVersion != null && !resourceVersion.isEmpty() && !resourceVersion.equals(old.resourceVersion())) {
                throw new ConfigStoreException.Conflict(key, resourceVersion, old.resourceVersion());
            }
            persistence.removed(key);
            m.remove(id(namespace, name));
            events.submit(new ConfigEvent(ConfigEvent.Type.DELETE, old, old));
        }
    }

    /**
     * Sets an object whatever its current version (sources that own their objects, like
     * the file source); no event when nothing changed. Returns the stored object.
     */
    public Config put(Config config) {
        synchronized (this) {
            Map<String, Config> m = of(config.gvk().kind());
            String id = id(config.namespace(), config.name());
            Config old = m.get(id);
            if (old != null && sameContent(old, config)) {
                return old;
            }
            Config stored = old == null
                    ? config.withMeta(nextRevision(), 1, Instant.now())
                    : config.withMeta(nextRevision(), old.spec().equals(config.spec()) ? old.generation()
                            : old.generation() + 1, old.creationTimestamp());
            persistence.saved(stored);
            m.put(id, stored);
            events.submit(old == null ? new ConfigEvent(ConfigEvent.Type.ADD, null, stored)
                    : new ConfigEvent(ConfigEvent.Type.UPDATE, old, stored));
            return stored;
        }
    }

    /** Removes an object if present (owning sources); returns whether it was there. */
    public boolean remove(ConfigKey key) {
        synchronized (this) {
            if (get(key.kind(), key.namespace(), key.name()).isEmpty()) {
                return false;
            }
            persistence.removed(key);
            Config old = of(key.kind()).remove(id(key.namespace(), key.name()));
            if (old != null) {
                events.submit(new ConfigEvent(ConfigEvent.Type.DELETE, old, old));
            }
            return old != null;
        }
    }

    /**
     * Takes back an object read from where this store persists, exactly as it was saved
     * (resourceVersion, generation, creation time); announced as an ADD once the store runs.
     * Later writes get resourceVersions above every restored one.
     */
    public void restore(Config saved) {
        synchronized (this) {
            schema(saved.key());
            of(saved.gvk().kind()).put(id(saved.namespace(), saved.name()), saved);
            try {
                advanceRevision(Long.parseLong(saved.resourceVersion()));
            } catch (NumberFormatException e) {
                // not one of ours (hand-written); it cannot collide with the numbers we hand out
            }
            events.submit(new ConfigEvent(ConfigEvent.Type.ADD, null, saved));
        }
    }

    /** The next resourceVersion will be above {@code floor}. */
    public void advanceRevision(long floor) {
        revision.accumulateAndGet(floor, Math::max);
    }

    private static boolean sameContent(Config a, Config b) {
        return a.spec().equals(b.spec()) && a.labels().equals(b.labels()) && a.annotations().equals(b.annotations())
                && a.gvk().equals(b.gvk());
    }

    @Override
    public void registerEventHandler(String kind, Consumer<ConfigEvent> handler) {
        events.register(kind, handler);
    }

    @Override
    public void run() {
        events.start();
        synced.complete(null);
    }


    @Override
    public CompletableFuture<Void> synced() {
        return synced;
    }

    /** Waits until events of every change made so far were delivered. */
    @Override
    public boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        return events.drain(timeout, unit);
    }

    @Override
    public void close() {
        events.close();
    }
}
