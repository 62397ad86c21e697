package io.meshpilot.monitoring;

import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * Keeps our lazy meter registrations (a counter's or histogram's first series, made on a push
 * or connection thread) apart from the closing of Helidon's metrics registry. Helidon 4.4's
 * MMeterRegistry takes its own lock and then Micrometer's when it closes, but Micrometer's
 * and then its own when a meter is added: a series created while the container shuts down
 * deadlocks both threads (seen: a debounced push registering pilot_debounce_time during a
 * test server's stop). Registrations share the read side; the container's close takes the
 * write side, so it starts only when no registration is under way and none starts meanwhile.
 */
public final class MeterRegistration {
    private static final ReadWriteLock LOCK = new ReentrantReadWriteLock();

    private MeterRegistration() {
    }

    /** Registers (or removes) a meter: {@code action} runs while no registry is closing. */
    public static <T> T register(Supplier<T> action) {
        LOCK.readLock().lock();
        try {
            return action.get();
        } finally {
            LOCK.readLock().unlock();
        }
    }

    /** Closes a registry (the container holding it): waits for registrations under way, holds new ones. */
    public static void whileClosing(Runnable close) {
        LOCK.writeLock().lock();
        try {
            close.run();
        } finally {
            LOCK.writeLock().unlock();
        }
    }
}
