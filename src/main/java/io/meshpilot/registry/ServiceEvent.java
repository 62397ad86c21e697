package io.meshpilot.registry;

import io.meshpilot.model.Service;

/** A service added, changed or removed by a registry. */
public record ServiceEvent(Type type, Service service) {
    /** What happened. */
    public enum Type { ADD, UPDATE, DELETE }
}
