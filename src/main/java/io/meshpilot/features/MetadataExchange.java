package io.meshpilot.features;

import java.util.List;
import java.util.TreeSet;

/**
 * istiod's metadata-exchange switches (pilot/pkg/features/telemetry.go), read for istio-proxy
 * nodes only: plain Envoy never gets the filters.
 *
 * @param enabled          PILOT_ENABLE_METADATA_EXCHANGE (true): the {@code istio.metadata_exchange}
 *                         HTTP, network and cluster filters are written
 * @param additionalLabels PILOT_MX_ADDITIONAL_LABELS (comma separated, deduplicated and sorted as
 *                         istiod's {@code MetadataExchangeAdditionalLabels}): extra workload labels
 *                         every metadata-exchange config carries as {@code additional_labels}
 */
public record MetadataExchange(boolean enabled, List<String> additionalLabels) {
    public static final MetadataExchange DEFAULTS = new MetadataExchange(true, List.of());

    public MetadataExchange {
        additionalLabels = List.copyOf(additionalLabels);
    }

    /** istiod splits on ',' only: no trimming, and an empty value means none. */
    static MetadataExchange parse(boolean enabled, String labels) {
        return new MetadataExchange(enabled, labels.isEmpty() ? List.of()
                : List.copyOf(new TreeSet<>(List.of(labels.split(",", -1)))));
    }
}
