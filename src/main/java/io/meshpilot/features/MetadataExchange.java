package io.meshpilot.features;

import java.util.List;
import java.util.TreeSet;

/**
 * istiod's metadata-exchange and ALPN switches (pilot/pkg/features/telemetry.go, pilot.go), read
 * for istio-proxy nodes only: plain Envoy never gets the filters. They travel together because
 * istio-proxy learns its peer both ways: by the exchange filters and by the ALPN strings its TLS
 * handshakes and {@code istio.alpn} filter offer.
 *
 * @param enabled          PILOT_ENABLE_METADATA_EXCHANGE (true): the {@code istio.metadata_exchange}
 *                         HTTP, network and cluster filters are written
 * @param additionalLabels PILOT_MX_ADDITIONAL_LABELS (comma separated, deduplicated and sorted as
 *                         istiod's {@code MetadataExchangeAdditionalLabels}): extra workload labels
 *                         every metadata-exchange config carries as {@code additional_labels}
 * @param alpnFilter       PILOT_ENABLE_ALPN_FILTER (true): outbound and gateway connection managers
 *                         carry {@code istio.alpn}, which offers the upstream protocol as ALPN
 *                         ({@code istio-h2}, ...) so that the peer sidecar's protocol sniffing knows it
 * @param peerExchangeAlpn not PILOT_DISABLE_MX_ALPN (false): Istio mTLS handshakes offer
 *                         {@code istio-peer-exchange}
 */
public record MetadataExchange(boolean enabled, List<String> additionalLabels, boolean alpnFilter,
                               boolean peerExchangeAlpn) {
    public static final MetadataExchange DEFAULTS = new MetadataExchange(true, List.of(), true, true);

    public MetadataExchange {
        additionalLabels = List.copyOf(additionalLabels);
    }

    /** The exchange switches alone, the ALPN ones at istiod's defaults. */
    public MetadataExchange(boolean enabled, List<String> additionalLabels) {
        this(enabled, additionalLabels, true, true);
    }

    /** Labels: istiod splits on ',' only, no trimming, and an empty value means none. */
    static MetadataExchange parse(boolean enabled, String labels, boolean alpnFilter, boolean disableMxAlpn) {
        return new MetadataExchange(enabled, labels.isEmpty() ? List.of()
                : List.copyOf(new TreeSet<>(List.of(labels.split(",", -1)))), alpnFilter, !disableMxAlpn);
    }
}
