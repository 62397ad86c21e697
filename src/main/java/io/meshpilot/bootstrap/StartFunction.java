package io.meshpilot.bootstrap;

import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.StartupRecorder;
import java.time.Instant;

/**
 * istiod's addStartFunc entry: one step of {@link PilotServer#start()}, appended while the
 * server is built and run in order, each timed under its own name.
 *
 * @param component the component the step belongs to
 * @param name      the step's name in the start-up log and {@code /api/v1/server}
 * @param run       the step; what it returns is the detail of its log line
 */
record StartFunction(Component component, String name, Step run) {

    /** A step; its failures pass as they are (the caller names the listener or component). */
    @FunctionalInterface
    interface Step {
        String run() throws InterruptedException;
    }

    /** Runs the step and records its time. */
    void runTimed(StartupRecorder recorder) throws InterruptedException {
        Instant at = Instant.now();
        long t0 = System.nanoTime();
        String detail = run.run();
        recorder.completed(component, name, at, (System.nanoTime() - t0) / 1e6, detail);
    }
}
