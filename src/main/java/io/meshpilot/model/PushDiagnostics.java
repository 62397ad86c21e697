package io.meshpilot.model;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The problems found while building one PushContext, istiod's {@code ProxyStatus}: metric
 * name, then a key (a host, a config object ...), then {@code {proxy, message}}. A problem
 * never stops the push: what can be applied is applied, the rest is recorded here, shown in
 * {@code /debug/push_status} and counted in the metric's gauge. Immutable once built.
 */
public final class PushDiagnostics {
    /** One problem; {@code proxy} is empty when it concerns every proxy (all ours so far). */
    public record Entry(String proxy, String message) {
    }

    public static final PushDiagnostics EMPTY = new PushDiagnostics(Map.of());

    private final Map<String, Map<String, Entry>> byMetric;

    private PushDiagnostics(Map<String, Map<String, Entry>> byMetric) {
        this.byMetric = byMetric;
    }

    /** Number of entries of {@code metric} (its gauge's value). */
    public int count(PushMetric metric) {
        return entries(metric).size();
    }

    /** The entries of {@code metric} by key, sorted; empty when none. */
    public Map<String, Entry> entries(PushMetric metric) {
        return byMetric.getOrDefault(metric.name(), Map.of());
    }

    /** Every entry: metric name, then key, both sorted (the shape of istiod's ProxyStatus). */
    public Map<String, Map<String, Entry>> all() {
        return byMetric;
    }

    public boolean isEmpty() {
        return byMetric.isEmpty();
    }

    @Override
    public String toString() {
        return byMetric.toString();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Collects entries while a PushContext is built; as istiod's AddMetric, a key recorded twice keeps the last. */
    public static final class Builder {
        private final Map<String, Map<String, Entry>> byMetric = new TreeMap<>();

        private Builder() {
        }

        /** Records every entry of {@code other} (another check's findings). */
        public Builder addAll(PushDiagnostics other) {
            other.all().forEach((metric, entries) -> {
                PushMetric m = PushMetric.known().stream().filter(k -> k.name().equals(metric)).findFirst()
                        .orElseGet(() -> PushMetric.of(metric, metric));
                entries.forEach((key, e) -> add(m, key, e.proxy(), e.message()));
            });
            return this;
        }

        /** Records a problem that concerns every proxy. */
        public Builder add(PushMetric metric, String key, String message) {
            return add(metric, key, "", message);
        }

        /** Records a problem of one proxy ({@code proxy}: its id). */
        public synchronized Builder add(PushMetric metric, String key, String proxy, String message) {
            byMetric.computeIfAbsent(metric.name(), m -> new TreeMap<>())
                    .put(key, new Entry(proxy == null ? "" : proxy, message));
            return this;
        }

        public synchronized PushDiagnostics build() {
            if (byMetric.isEmpty()) {
                return EMPTY;
            }
            Map<String, Map<String, Entry>> copy = new TreeMap<>();
            byMetric.forEach((m, entries) -> copy.put(m, Collections.unmodifiableMap(new TreeMap<>(entries))));
            return new PushDiagnostics(Collections.unmodifiableMap(copy));
        }
    }
}
