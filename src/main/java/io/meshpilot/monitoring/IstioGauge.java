package io.meshpilot.monitoring;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import io.helidon.metrics.api.Tag;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A gauge under istiod's exact name (Prometheus gets {@code <name> <value>}, no suffix),
 * read when scraped. Register it once per server (a restarted container in the tests brings
 * a new registry); registering a name and labels again keeps the existing gauge.
 */
public final class IstioGauge {
    private IstioGauge() {
    }

    public static void register(String name, String help, Supplier<? extends Number> value) {
        register(name, help, Map.of(), value);
    }

    /**
     * The series of {@code name} with these fixed labels (istiod's
     * {@code istiod_managed_clusters{cluster_type}}): one call per label set.
     */
    public static void register(String name, String help, Map<String, String> labels, Supplier<? extends Number> value) {
        List<Tag> tags = labels.entrySet().stream().map(e -> Tag.create(e.getKey(), e.getValue())).toList();
        MeterRegistration.register(() -> Metrics.getOrCreate(Gauge.builder(name, value::get).description(help).tags(tags)));
    }
}
