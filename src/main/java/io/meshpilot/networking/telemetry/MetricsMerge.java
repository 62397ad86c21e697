package io.meshpilot.networking.telemetry;

import com.google.protobuf.Duration;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.telemetry.v1alpha1.MetricSelector;
import io.meshpilot.api.telemetry.v1alpha1.Metrics;
import io.meshpilot.api.telemetry.v1alpha1.MetricsOverrides;
import io.meshpilot.api.telemetry.v1alpha1.ProviderRef;
import io.meshpilot.api.telemetry.v1alpha1.WorkloadMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Telemetry {@code metrics} lists merged as istiod's mergeMetrics (pilot/pkg/model/telemetry.go)
 * merges them: the providers in force are those of the last entry that names any (else
 * {@code meshConfig.defaultProviders.metrics}); entries apply in precedence order, an entry
 * without providers inheriting the previous one's; a later override of a metric replaces its
 * {@code disabled} and merges its tag overrides by tag; disabling all metrics of a side drops
 * that side's filter until a later override of that side re-enables it.
 */
public final class MetricsMerge {
    /** The standard metrics in istiod's allMetrics order (the enum without ALL_METRICS). */
    static final List<String> ALL_METRICS = Arrays.stream(MetricSelector.IstioMetric.values())
            .filter(m -> m != MetricSelector.IstioMetric.ALL_METRICS && m != MetricSelector.IstioMetric.UNRECOGNIZED)
            .map(Enum::name).toList();

    private MetricsMerge() {
    }

    /**
     * One metric's merged override on one side.
     *
     * @param name     the enum name (REQUEST_COUNT) or a custom metric's name
     * @param disabled drop the metric
     * @param tags     tag name to its override, sorted by tag
     */
    public record MetricOverride(String name, boolean disabled, Map<String, MetricsOverrides.TagOverride> tags) {
        public MetricOverride {
            tags = Collections.unmodifiableSortedMap(new TreeMap<>(tags));
        }
    }

    /**
     * One side's (client or server) merged metrics.
     *
     * @param disabled  no stats filter on this side
     * @param overrides sorted by metric name, as istiod sorts them
     */
    public record Side(boolean disabled, List<MetricOverride> overrides) {
        public Side {
            overrides = List.copyOf(overrides);
        }
    }

    /**
     * One provider's merged metrics.
     *
     * @param reportingInterval the last reportingInterval set for it, or null
     */
    public record ProviderMetrics(Side client, Side server, Duration reportingInterval) {
        /** istiod's MetricsForClass: inbound listeners report the server side, the others the client side. */
        public Side forClass(ListenerClass cls) {
            return cls.mode() == WorkloadMode.SERVER ? server : client;
        }
    }

    /** The merged metrics by provider name, sorted by name as istiod's telemetryFilters walks them. */
    public static SortedMap<String, ProviderMetrics> merge(List<Metrics> metrics, MeshConfig mesh) {
        List<String> defaults = mesh.getDefaultProviders().getMetricsList();
        // provider -> mode -> metric -> override being merged
        Map<String, Map<WorkloadMode, Map<String, Merging>>> providers = new HashMap<>();
        if (metrics.isEmpty()) {
            defaults.forEach(p -> providers.put(p, new HashMap<>()));
        }
        List<String> inScopeNames = defaults;
        for (Metrics m : metrics) {
            if (m.getProvidersCount() > 0) {
                inScopeNames = names(m);
            }
        }
        Set<String> inScope = new HashSet<>(inScopeNames);
        List<String> parent = defaults;
        Set<String> disabledAll = new HashSet<>();
        Map<String, Duration> intervals = new HashMap<>();
        for (Metrics m : metrics) {
            List<String> names = m.getProvidersCount() > 0 ? names(m) : parent;
            parent = names;
            for (String provider : names) {
                if (!inScope.contains(provider)) {
                    continue; // named above, replaced by a later entry's providers
                }
                if (m.hasReportingInterval()) {
                    intervals.put(provider, m.getReportingInterval());
                }
                Map<WorkloadMode, Map<String, Merging>> byMode = providers.computeIfAbsent(provider, p -> {
                    Map<WorkloadMode, Map<String, Merging>> both = new HashMap<>();
                    both.put(WorkloadMode.CLIENT, new HashMap<>());
                    both.put(WorkloadMode.SERVER, new HashMap<>());
                    return both;
                });
                for (MetricsOverrides o : m.getOverridesList()) {
                    apply(provider, o, byMode, disabledAll);
                }
            }
        }
        SortedMap<String, ProviderMetrics> out = new TreeMap<>();
        providers.forEach((provider, byMode) -> out.put(provider, new ProviderMetrics(
                side(provider, WorkloadMode.CLIENT, byMode, disabledAll),
                side(provider, WorkloadMode.SERVER, byMode, disabledAll), intervals.get(provider))));
        return out;
    }

    private static void apply(String provider, MetricsOverrides o, Map<WorkloadMode, Map<String, Merging>> byMode,
                              Set<String> disabledAll) {
        if (isAllMetrics(o.getMatch()) && o.getDisabled().getValue()) {
            for (WorkloadMode mode : modes(o.getMatch().getMode())) {
                disabledAll.add(key(provider, mode));
            }
            return;
        }
        for (WorkloadMode mode : modes(o.getMatch().getMode())) {
            disabledAll.remove(key(provider, mode)); // a later override re-enables the side
            Map<String, Merging> metrics = byMode.computeIfAbsent(mode, k -> new HashMap<>());
            for (String name : matches(o.getMatch())) {
                Merging merging = metrics.computeIfAbsent(name, n -> new Merging());
                if (o.hasDisabled()) {
                    merging.disabled = o.getDisabled().getValue();
                }
                merging.tags.putAll(o.getTagOverridesMap());
            }
        }
    }

    private static Side side(String provider, WorkloadMode mode, Map<WorkloadMode, Map<String, Merging>> byMode,
                             Set<String> disabledAll) {
        if (disabledAll.contains(key(provider, mode))) {
            return new Side(true, List.of());
        }
        List<MetricOverride> overrides = new ArrayList<>();
        new TreeMap<>(byMode.getOrDefault(mode, Map.of())).forEach((name, m) ->
                overrides.add(new MetricOverride(name, m.disabled, m.tags)));
        return new Side(false, overrides);
    }

    /** An override while the entries are walked. */
    private static final class Merging {
        boolean disabled;
        final Map<String, MetricsOverrides.TagOverride> tags = new HashMap<>();
    }

    private static List<String> names(Metrics m) {
        return List.copyOf(new LinkedHashSet<>(m.getProvidersList().stream().map(ProviderRef::getName).toList()));
    }

    private static String key(String provider, WorkloadMode mode) {
        return provider + "/" + mode;
    }

    /** istiod's getModes: CLIENT_AND_SERVER (the default) is both. */
    private static List<WorkloadMode> modes(WorkloadMode mode) {
        return mode == WorkloadMode.CLIENT || mode == WorkloadMode.SERVER ? List.of(mode)
                : List.of(WorkloadMode.CLIENT, WorkloadMode.SERVER);
    }

    /** istiod's isAllMetrics: no match, or ALL_METRICS (a custom metric never is). */
    private static boolean isAllMetrics(MetricSelector match) {
        return switch (match.getMetricMatchCase()) {
            case CUSTOM_METRIC -> false;
            case METRIC -> match.getMetric() == MetricSelector.IstioMetric.ALL_METRICS;
            case METRICMATCH_NOT_SET -> true;
        };
    }

    private static List<String> matches(MetricSelector match) {
        return switch (match.getMetricMatchCase()) {
            case CUSTOM_METRIC -> List.of(match.getCustomMetric());
            case METRIC -> match.getMetric() == MetricSelector.IstioMetric.ALL_METRICS ? ALL_METRICS
                    : List.of(match.getMetric().name());
            case METRICMATCH_NOT_SET -> ALL_METRICS;
        };
    }
}
