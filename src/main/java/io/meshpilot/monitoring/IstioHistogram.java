package io.meshpilot.monitoring;

import io.helidon.metrics.api.DistributionStatisticsConfig;
import io.helidon.metrics.api.DistributionSummary;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Tag;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A histogram in seconds under istiod's exact name and buckets: Prometheus gets
 * {@code <name>_bucket{le=...}}, {@code <name>_sum} and {@code <name>_count}, as istiod's
 * dashboards read them (a Helidon timer would add a {@code _seconds} suffix), and no quantile
 * series. Without a label,
 * or with one label whose series are created on first use.
 */
public final class IstioHistogram {
    private static final Map<String, IstioHistogram> BY_NAME = new ConcurrentHashMap<>();

    private final String name;
    private final String label;
    private final String help;
    private final double[] buckets;
    private final Map<String, DistributionSummary> series = new ConcurrentHashMap<>();
    /** The registry the series live in; a restarted container (tests) brings a new one. */
    private volatile long registered = -1;

    private IstioHistogram(String name, String label, String help, double[] buckets) {
        this.name = name;
        this.label = label;
        this.help = help;
        this.buckets = buckets.clone();
    }

    /** The histogram {@code name} (label may be null); the same instance for the same name. */
    public static IstioHistogram of(String name, String label, String help, double... buckets) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioHistogram(n, label, help, buckets));
    }

    public void record(Duration d) {
        record("", d);
    }

    public void record(String labelValue, Duration d) {
        recordValue(labelValue, d.toNanos() / 1e9);
    }

    /** Records an observation that is no duration (a size in bytes). */
    public void recordValue(String labelValue, double value) {
        long generation = RegistryGeneration.current();
        if (generation != registered) { // a restarted container (tests): register anew in its registry
            synchronized (this) {
                if (generation != registered) {
                    series.clear();
                    registered = generation;
                }
            }
        }
        series.computeIfAbsent(labelValue, this::register).record(value);
    }

    private DistributionSummary register(String labelValue) {
        DistributionSummary.Builder b = DistributionSummary.builder(name)
                .description(help)
                // no percentiles: Helidon's default six would add quantile series istiod does not
                // have, and keep an HdrHistogram per series that costs more than the buckets on every
                // observation (several per proxy per push)
                .distributionStatisticsConfig(DistributionStatisticsConfig.builder().buckets(buckets).percentiles(new double[0]));
        if (label != null) {
            b.tags(List.of(Tag.create(label, labelValue)));
        }
        return MeterRegistration.register(() -> Metrics.getOrCreate(b));
    }

    /** Observations so far in one series. */
    public long count(String labelValue) {
        DistributionSummary s = series.get(labelValue);
        return s == null ? 0 : s.count();
    }
}
