package io.meshpilot.monitoring;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Tag;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A counter exported under istiod's exact name. Helidon's Prometheus output appends
 * {@code _total} to counters, which istiod's names (pilot_inbound_updates,
 * pilot_push_triggers, pilot_xds_pushes ...) do not have, so existing dashboards would miss
 * them; this keeps the name by exporting the monotonic value as a gauge. One series per
 * label value, created on first use.
 */
public final class IstioCounter {
    private static final Map<String, IstioCounter> BY_NAME = new ConcurrentHashMap<>();

    private final String name;
    private final String label;
    private final String help;
    private final Map<String, LongAdder> series = new ConcurrentHashMap<>();

    private IstioCounter(String name, String label, String help) {
        this.name = name;
        this.label = label;
        this.help = help;
    }

    /** The counter {@code name} with one label (e.g. "type"); the same instance for the same name. */
    public static IstioCounter of(String name, String label, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, label, help));
    }

    public void increment(String labelValue) {
        add(labelValue, 1);
    }

    public void add(String labelValue, long n) {
        series.computeIfAbsent(labelValue, v -> {
            LongAdder adder = new LongAdder();
            Metrics.getOrCreate(Gauge.builder(name, adder::doubleValue)
                    .description(help)
                    .tags(List.of(Tag.create(label, v))));
            return adder;
        }).add(n);
    }

    /** Current value of one series (0 when never incremented). */
    public long value(String labelValue) {
        LongAdder a = series.get(labelValue);
        return a == null ? 0 : a.sum();
    }
}
