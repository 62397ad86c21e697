package io.meshpilot.load;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The machine's 1-minute load average over a whole load run, sampled every second: the reading
 * before the run (other work on the shared machine), the highest, and whether it stayed under
 * the number of cores, so that a report says itself when its wall times were disturbed.
 */
final class MachineLoad implements AutoCloseable {
    /** What the samples saw so far. */
    record Readings(double start, double highest, double last) {
        Readings with(double sample) {
            return new Readings(start, Math.max(highest, sample), sample);
        }
    }

    private final OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    private final int cores = Runtime.getRuntime().availableProcessors();
    private final AtomicReference<Readings> readings;
    private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("machine-load").factory());

    private MachineLoad() {
        double now = os.getSystemLoadAverage();
        readings = new AtomicReference<>(new Readings(now, now, now));
    }

    /** Starts sampling now: the first reading is the machine before the run. */
    static MachineLoad start() {
        MachineLoad m = new MachineLoad();
        m.sampler.scheduleAtFixedRate(m::sample, 1, 1, TimeUnit.SECONDS);
        return m;
    }

    private void sample() {
        double now = os.getSystemLoadAverage();
        readings.updateAndGet(r -> r.with(now));
    }

    /** The report's last line: the load average at the start, its highest, and both against the cores. */
    String summary() {
        sample();
        return summary(readings.get(), cores);
    }

    static String summary(Readings r, int cores) {
        return String.format("machine load: %d cores; load average %.1f before the run (%s), %.1f at its highest "
                        + "(sampled every second; %s), %.1f at the end", cores, r.start(),
                r.start() < cores ? "under the cores" : "NOT under the cores: other work was running",
                r.highest(), r.highest() < cores ? "stayed under the cores"
                        : "NOT under the cores: more work than cores (the run's server and tool count too), wall times "
                        + "include waiting for a core", r.last());
    }

    @Override
    public void close() {
        sampler.shutdownNow();
    }
}
