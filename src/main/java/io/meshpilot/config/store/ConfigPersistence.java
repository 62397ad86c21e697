package io.meshpilot.config.store;

import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;

/**
 * Where a writable store makes a change durable before it takes effect: called under the
 * store's write lock, before the change is visible or announced, so an acknowledged write
 * is on disk and a failed one changed nothing. Implementations throw
 * {@link ConfigStoreException.Unavailable} when they cannot persist, and
 * {@link ConfigStoreException.TooLarge} for an object they could not take back.
 */
public interface ConfigPersistence {
    /** Keeps nothing: for stores whose content comes from elsewhere (files, a test). */
    ConfigPersistence NONE = new ConfigPersistence() {
        @Override
        public void saved(Config stored) {
        }

        @Override
        public void removed(ConfigKey key) {
        }
    };

    /** {@code stored} (with its final metadata) replaces whatever was kept for its key. */
    void saved(Config stored);

    /** Nothing is kept for {@code key} any more. */
    void removed(ConfigKey key);
}
