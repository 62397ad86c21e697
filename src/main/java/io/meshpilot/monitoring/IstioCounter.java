package io.meshpilot.monitoring;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Tag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A counter exported under istiod's exact name. Helidon's Prometheus output appends
 * {@code _total} to counters, which istiod's names (pilot_inbound_updates,
 * pilot_push_triggers, pilot_xds_pushes ...) do not have, so existing dashboards would miss
 * them; this keeps the name by exporting the monotonic value as a gauge, which the metrics
 * endpoint then types {@code counter} ({@link #isCounter}). One series per label value,
 * created on first use.
 */
public final class IstioCounter {
    private static final Map<String, IstioCounter> BY_NAME = new ConcurrentHashMap<>();

    private final String name;
    private final List<String> labels;
    private final String help;
    private final Map<List<String>, LongAdder> series = new ConcurrentHashMap<>();
    private volatile long exported = -1;
    /** One-label series by their value, for the hot path. */
    private final Map<String, LongAdder> single = new ConcurrentHashMap<>();
    /** False for an up-down series ({@link #upDown}): exported and typed as a gauge. */
    private final boolean monotonic;

    /** An {@link #upDown} gauge: its series are dropped at 0. */
    private final boolean upDown;

    private IstioCounter(String name, List<String> labels, String help) {
        this(name, labels, help, true, false);
    }

    private IstioCounter(String name, List<String> labels, String help, boolean monotonic, boolean upDown) {
        this.name = name;
        this.labels = labels;
        this.help = help;
        this.monotonic = monotonic;
        this.upDown = upDown;
    }

    /** The counter {@code name} without labels. */
    public static IstioCounter of(String name, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.of(), help));
    }

    /** The counter {@code name} with one label (e.g. "type"); the same instance for the same name. */
    public static IstioCounter of(String name, String label, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.of(label), help));
    }

    /**
     * A gauge with one label whose series go up and down by {@link #add} (istiod's
     * {@code pilot_xds{version}}, which it records as connections come and go), created on
     * first use like the counters' series and typed {@code gauge}. A series back at 0 is
     * dropped (istiod keeps it at 0): its label value is what a client sent (a proxy's
     * ISTIO_VERSION), so only the values of connected clients are kept, not every value ever
     * sent.
     */
    public static IstioCounter upDown(String name, String label, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.of(label), help, false, true));
    }

    /** The counter {@code name} with two labels (e.g. "node", "err"). */
    public static IstioCounter of(String name, String label1, String label2, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.of(label1, label2), help));
    }

    /**
     * A series that only goes up but that istiod declares a gauge (its per-proxy
     * {@code pilot_xds_*_reject}, NewGauge then Increment): counted as the counters are,
     * typed {@code gauge} as istiod types it.
     */
    public static IstioCounter gaugeTyped(String name, String label1, String label2, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.of(label1, label2), help, false, false));
    }

    /** The counter {@code name} with any number of labels (galley_validation_failed has four). */
    public static IstioCounter of(String name, List<String> labels, String help) {
        return BY_NAME.computeIfAbsent(name, n -> new IstioCounter(n, List.copyOf(labels), help));
    }

    /**
     * Whether {@code name} is one of these counters; the metrics endpoint then types it
     * {@code counter} in its Prometheus text (the registry holds it as a gauge).
     */
    public static boolean isCounter(String name) {
        IstioCounter c = BY_NAME.get(name);
        return c != null && c.monotonic;
    }

    /**
     * Exports a counter without labels at 0 before anything counts it: for a counter that
     * alerts compare against 0 and that most servers never increment.
     */
    public IstioCounter exportAtZero() {
        adder(List.of());
        return this;
    }

    /** Increments a counter without labels. */
    public void increment() {
        adder(List.of()).increment();
    }

    public void increment(String labelValue) {
        add(labelValue, 1);
    }

    public void increment(String value1, String value2) {
        adder(List.of(value1, value2)).increment();
    }

    /** Increments the series of these label values, in the order of the counter's labels. */
    public void increment(List<String> labelValues) {
        adder(List.copyOf(labelValues)).increment();
    }

    public void add(String labelValue, long n) {
        if (upDown) {
            addOrDrop(labelValue, n);
            return;
        }
        LongAdder a = single.get(labelValue); // the hot path: no key list, no registry check
        if (a != null && exported == RegistryGeneration.current()) {
            a.add(n);
            return;
        }
        a = adder(List.of(labelValue));
        single.putIfAbsent(labelValue, a);
        a.add(n);
    }

    /** Up-down series change as clients come and go (rarely): one lock keeps a drop from losing a concurrent add. */
    private synchronized void addOrDrop(String labelValue, long n) {
        LongAdder a = adder(List.of(labelValue));
        a.add(n);
        if (a.sum() == 0) {
            removeSeries(labels.get(0), labelValue);
        }
    }

    private LongAdder adder(List<String> values) {
        if (values.size() != labels.size()) {
            throw new IllegalArgumentException(name + " has labels " + labels);
        }
        long generation = RegistryGeneration.current();
        if (generation != exported) { // a restarted container (tests): export the series in its registry
            synchronized (this) {
                if (generation != exported) {
                    exported = generation;
                    series.forEach(this::export);
                }
            }
        }
        return series.computeIfAbsent(values, v -> {
            LongAdder adder = new LongAdder();
            export(v, adder);
            return adder;
        });
    }

    private void export(List<String> values, LongAdder adder) {
        MeterRegistration.register(() -> Metrics.getOrCreate(Gauge.builder(name, adder::doubleValue)
                .description(help).tags(tags(values))));
    }

    private List<Tag> tags(List<String> values) {
        List<Tag> tags = new ArrayList<>();
        for (int i = 0; i < labels.size(); i++) {
            tags.add(Tag.create(labels.get(i), values.get(i)));
        }
        return tags;
    }

    /**
     * Drops every series whose {@code label} has {@code value}, here and in the registry: for
     * labels whose values come and go with clients (a proxy's node id), so that the series of
     * clients that left do not pile up.
     */
    public void removeSeries(String label, String value) {
        int index = labels.indexOf(label);
        if (index < 0) {
            throw new IllegalArgumentException(name + " has labels " + labels);
        }
        for (List<String> values : List.copyOf(series.keySet())) {
            if (values.get(index).equals(value) && series.remove(values) != null) {
                if (labels.size() == 1) {
                    single.remove(value);
                }
                MeterRegistration.register(() -> Metrics.globalRegistry().remove(name, tags(values)));
            }
        }
    }

    /** How many series the counter has. */
    public int seriesCount() {
        return series.size();
    }

    /** Current value of one series (0 when never incremented). */
    public long value(String... labelValues) {
        LongAdder a = series.get(List.of(labelValues));
        return a == null ? 0 : a.sum();
    }
}
