package io.meshpilot.config.store;

import io.meshpilot.config.Config;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schema;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Istio config storage (istiod's model.ConfigStore). Writes use resourceVersion optimistic
 * concurrency: an update or delete naming a stale resourceVersion fails with
 * {@link ConfigStoreException.Conflict}; an empty one means "whatever is current".
 */
public interface ConfigStore {
    /** The kinds this store holds. */
    Collection<Schema> schemas();

    Optional<Config> get(String kind, String namespace, String name);

    /** All objects of a kind; {@code namespace} null or empty lists every namespace. */
    List<Config> list(String kind, String namespace);

    /** Stores a new object; returns it with resourceVersion, generation 1 and creation time. */
    Config create(Config config);

    /** Replaces an object's spec and metadata (status is kept). */
    Config update(Config config);

    /** Replaces only the status; spec changes in {@code config} are ignored. */
    Config updateStatus(Config config);

    /** Read-modify-write of the current object, retried on Conflict. */
    Config patch(String kind, String namespace, String name, UnaryOperator<Config> change);

    /** Deletes; a non-empty {@code resourceVersion} must be current. */
    void delete(String kind, String namespace, String name, String resourceVersion);

    /**
     * What a store that converts other objects into config (Kubernetes Ingresses) could not
     * convert, one entry per object and reason; its other parts are served. Push status lists
     * them. Empty for stores that hold config as written.
     */
    default List<DocumentError> unconverted() {
        return List.of();
    }

    /**
     * {@link #list}'s answer over one kind's objects: those of {@code namespace} (every one
     * when null or empty), in key order.
     */
    static List<Config> listed(Collection<Config> objects, String namespace) {
        List<Config> out = new ArrayList<>();
        for (Config c : objects) {
            if (namespace == null || namespace.isEmpty() || namespace.equals(c.namespace())) {
                out.add(c);
            }
        }
        out.sort(Comparator.comparing(Config::key));
        return out;
    }
}
