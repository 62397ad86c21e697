package io.meshpilot.config;


/**
 * A change to one object: the old and new values (old is null on ADD, current is the
 * deleted object on DELETE).
 */
public record ConfigEvent(Type type, Config old, Config current) {
    /** What happened. */
    public enum Type { ADD, UPDATE, DELETE }
}
