package io.meshpilot.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds, or fails the test naming what it waited for. */
public final class Await {
    private static final long POLL_MILLIS = 20;

    private Await() {
    }

    /** Returns once {@code condition} holds; an AssertionError after {@code within}. */
    public static void until(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + " (" + within.toSeconds() + " s)");
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
