package io.meshpilot.config.store;

import io.meshpilot.config.DocumentError;
import java.util.List;

/**
 * The store that REST writes go to (istiod's writable config store). Which one depends on
 * the mode: embedded, a {@link DurableConfigStore} that keeps every acknowledged write in a
 * state directory; with Kubernetes, the API server will hold the objects (a CRD-backed store
 * behind this same interface). Readers never see which: they use the aggregate.
 */
public interface WritableConfigStore extends ConfigStoreController, AutoCloseable {
    /** Where the objects are kept, for the start-up log. */
    String describe();

    /** Kept objects that could not be taken back at start (damaged, unreadable), with where and why. */
    List<DocumentError> errors();

    @Override
    void close();
}
