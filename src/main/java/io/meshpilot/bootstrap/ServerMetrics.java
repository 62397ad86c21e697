package io.meshpilot.bootstrap;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.UnixOperatingSystemMXBean;
import io.helidon.metrics.api.FunctionalCounter;
import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Tag;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.lifecycle.StartupRecorder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Process-level metrics on the one Helidon registry: istiod's {@code istiod_uptime_seconds}
 * and {@code pilot_info}, the {@code process_*} family Prometheus users expect (Helidon only
 * ships JVM metrics), and the start-up time of each component.
 */
final class ServerMetrics {
    private ServerMetrics() {
    }

    /** Registered once the components have started, just before readiness turns on. */
    static void register(StartupRecorder recorder) {
        long startMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
        Metrics.getOrCreate(Gauge.builder("istiod_uptime_seconds",
                        () -> (System.currentTimeMillis() - startMillis) / 1000.0)
                .description("Current istiod server uptime in seconds"));
        Metrics.getOrCreate(Gauge.builder("pilot_info", () -> 1)
                .tags(List.of(Tag.create("version", BuildInfo.current().shortForm())))
                .description("Pilot version and build information."));
        // istiod's RecordComponentBuildTag: one series per component and build tag, valued 1
        Metrics.getOrCreate(Gauge.builder("istio_build", () -> 1)
                .tags(List.of(Tag.create("component", "pilot"), Tag.create("tag", BuildInfo.current().tag())))
                .description("Istio component build info"));
        Metrics.getOrCreate(Gauge.builder("process_start_time_seconds", () -> startMillis / 1000.0)
                .description("Start time of the process since unix epoch in seconds."));
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof OperatingSystemMXBean sun) {
            Metrics.getOrCreate(FunctionalCounter.builder("process_cpu_seconds", sun,
                            b -> b.getProcessCpuTime() / 1_000_000_000L)
                    .description("Total user and system CPU time spent in seconds."));
        }
        if (os instanceof UnixOperatingSystemMXBean unix) {
            Metrics.getOrCreate(Gauge.builder("process_open_fds", () -> unix.getOpenFileDescriptorCount())
                    .description("Number of open file descriptors."));
            Metrics.getOrCreate(Gauge.builder("process_max_fds", () -> unix.getMaxFileDescriptorCount())
                    .description("Maximum number of open file descriptors."));
        }
        if (Files.isReadable(Path.of("/proc/self/status"))) {
            Metrics.getOrCreate(Gauge.builder("process_resident_memory_bytes", () -> procStatusBytes("VmRSS:"))
                    .description("Resident memory size in bytes."));
            Metrics.getOrCreate(Gauge.builder("process_virtual_memory_bytes", () -> procStatusBytes("VmSize:"))
                    .description("Virtual memory size in bytes."));
        }
        for (StartupRecorder.ComponentStart s : recorder.starts()) {
            double seconds = s.millis() / 1000.0;
            Metrics.getOrCreate(Gauge.builder("meshpilot_component_start_seconds", () -> seconds)
                    .tags(List.of(Tag.create("component", s.name())))
                    .description("Time each start-up component took to start, in seconds."));
        }
    }

    /** A "VmRSS:   1234 kB" line of /proc/self/status, in bytes; -1 when unreadable. */
    private static double procStatusBytes(String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(key)) {
                    String[] parts = line.substring(key.length()).trim().split("\\s+");
                    return Long.parseLong(parts[0]) * 1024.0;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
