package io.meshpilot.config.store;

import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.config.ConfigKey;

/** A typed store failure, as the Kubernetes API server reports them. */
public abstract sealed class ConfigStoreException extends RuntimeException {
    private final ConfigKey key;

    ConfigStoreException(ConfigKey key, String message) {
        super(key + ": " + message);
        this.key = key;
    }

    public ConfigKey key() {
        return key;
    }

    /** No such object. */
    public static final class NotFound extends ConfigStoreException {
        public NotFound(ConfigKey key) {
            super(key, "not found");
        }
    }

    /** Create of an object that exists. */
    public static final class AlreadyExists extends ConfigStoreException {
        public AlreadyExists(ConfigKey key) {
            super(key, "already exists");
        }
    }

    /** The resourceVersion given is not the current one: someone else wrote in between. */
    public static final class Conflict extends ConfigStoreException {
        private final String current;

        public Conflict(ConfigKey key, String given, String current) {
            super(key, "resourceVersion " + given + " is stale (current " + current + ")");
            this.current = current;
        }

        public String current() {
            return current;
        }
    }

    /** The object failed validation. */
    public static final class Invalid extends ConfigStoreException {
        private final transient ValidationResult result;

        public Invalid(ConfigKey key, ValidationResult result) {
            super(key, "invalid: " + result.errors());
            this.result = result;
        }

        public ValidationResult result() {
            return result;
        }
    }

    /** The store does not take writes (a file source), or not of this kind. */
    public static final class ReadOnly extends ConfigStoreException {
        public ReadOnly(ConfigKey key, String why) {
            super(key, why);
        }
    }

    /**
     * The object is bigger than what is kept can be: acknowledging it would lose it at the
     * next restart, so it is refused; nothing changed.
     */
    public static final class TooLarge extends ConfigStoreException {
        public TooLarge(ConfigKey key, String why) {
            super(key, why);
        }
    }

    /** The change could not be made durable (disk full, read-only, I/O error); nothing changed. */
    public static final class Unavailable extends ConfigStoreException {
        public Unavailable(ConfigKey key, String why, Throwable cause) {
            super(key, why);
            initCause(cause);
        }
    }
}
