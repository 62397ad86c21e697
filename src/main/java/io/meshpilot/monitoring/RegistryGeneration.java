package io.meshpilot.monitoring;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the meter registries the process has had. A restarted container (the tests start
 * several servers in one JVM) brings a new registry; our istiod-named meters export their
 * series into it again when they see the count change. Reading it is one volatile read: the
 * meters are on the push hot path, and asking Helidon for its global registry takes a lock.
 */
public final class RegistryGeneration {
    private static final AtomicLong GENERATION = new AtomicLong();

    private RegistryGeneration() {
    }

    /** A new registry is in place (called once the container's metrics are up). */
    public static void advance() {
        GENERATION.incrementAndGet();
    }

    /** The current count (one volatile read): meters cached by callers are stale once it changes. */
    public static long current() {
        return GENERATION.get();
    }
}
