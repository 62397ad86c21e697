package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import io.meshpilot.api.envoy.extensions.stats.MetricConfig;
import io.meshpilot.api.envoy.extensions.stats.PluginConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.telemetry.v1alpha1.MetricsOverrides;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * istio-proxy's {@code istio.stats} filter configs (istio/api {@code stats.PluginConfig}) for one
 * listener class, as istiod's telemetryFilters and generateStatsConfig write them: one per
 * merged metrics provider that is a {@code prometheus} extension provider of the mesh config
 * (others are skipped, as istiod skips them; {@link io.meshpilot.model.PushContext}'s push status
 * names them), none for a side whose metrics are all disabled. The same config goes into the
 * HTTP connection managers and the TCP chains of that class.
 */
public final class StatsFilters {
    /** istiod's xds.StatsFilterName. */
    public static final String NAME = "istio.stats";

    /** istiod's metricToPrometheusMetric: the standard metrics' names without the istio_ prefix. */
    static final Map<String, String> PROMETHEUS_NAMES = Map.of(
            "REQUEST_COUNT", "requests_total",
            "REQUEST_DURATION", "request_duration_milliseconds",
            "REQUEST_SIZE", "request_bytes",
            "RESPONSE_SIZE", "response_bytes",
            "TCP_OPENED_CONNECTIONS", "tcp_connections_opened_total",
            "TCP_CLOSED_CONNECTIONS", "tcp_connections_closed_total",
            "TCP_SENT_BYTES", "tcp_sent_bytes_total",
            "TCP_RECEIVED_BYTES", "tcp_received_bytes_total",
            "GRPC_REQUEST_MESSAGES", "request_messages_total",
            "GRPC_RESPONSE_MESSAGES", "response_messages_total");

    private StatsFilters() {
    }

    /** The packed configs of the stats filters for {@code cls}, in provider-name order (empty: none). */
    static List<Any> forClass(TelemetrySelection selection, MeshConfig mesh, ListenerClass cls) {
        SortedMap<String, MetricsMerge.ProviderMetrics> merged = MetricsMerge.merge(selection.metrics(), mesh);
        List<Any> out = new ArrayList<>();
        merged.forEach((provider, metrics) -> {
            if (isPrometheus(mesh, provider) && !metrics.forClass(cls).disabled()) {
                out.add(Any.pack(config(metrics, cls)));
            }
        });
        return List.copyOf(out);
    }

    /** istiod's generateStatsConfig (never a waypoint here: MeshPilot serves none). */
    static PluginConfig config(MetricsMerge.ProviderMetrics metrics, ListenerClass cls) {
        PluginConfig.Builder cfg = PluginConfig.newBuilder()
                .setDisableHostHeaderFallback(cls != ListenerClass.SIDECAR_OUTBOUND);
        if (metrics.reportingInterval() != null) {
            cfg.setTcpReportingDuration(metrics.reportingInterval());
        }
        for (MetricsMerge.MetricOverride o : metrics.forClass(cls).overrides()) {
            MetricConfig.Builder mc = MetricConfig.newBuilder()
                    .setName(PROMETHEUS_NAMES.getOrDefault(o.name(), o.name()))
                    .setDrop(o.disabled());
            o.tags().forEach((tag, override) -> {
                if (override.getOperation() == MetricsOverrides.TagOverride.Operation.REMOVE) {
                    mc.addTagsToRemove(tag);
                } else {
                    mc.putDimensions(tag, override.getValue());
                }
            });
            cfg.addMetrics(mc);
        }
        return cfg.build();
    }

    /** Whether {@code name} resolves (case-insensitively, as istiod's fetchProvider) to a prometheus provider. */
    static boolean isPrometheus(MeshConfig mesh, String name) {
        return mesh.getExtensionProvidersList().stream()
                .anyMatch(p -> p.getName().equalsIgnoreCase(name) && p.hasPrometheus());
    }
}
