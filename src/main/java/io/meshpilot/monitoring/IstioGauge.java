package io.meshpilot.monitoring;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import java.util.function.Supplier;

/**
 * A gauge under istiod's exact name (Prometheus gets {@code <name> <value>}, no suffix),
 * read when scraped. Register it once per server (a restarted container in the tests brings
 * a new registry); registering a name again returns the existing gauge.
 */
public final class IstioGauge {
    private IstioGauge() {
    }

    public static void register(String name, String help, Supplier<? extends Number> value) {
        Metrics.getOrCreate(Gauge.builder(name, value::get).description(help));
    }
}
