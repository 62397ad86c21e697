package io.meshpilot.networking.telemetry;

import com.github.udpa.udpa.type.v1.TypedStruct;
import com.google.protobuf.Any;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.features.MetadataExchange;
import java.util.List;
import java.util.Map;

/**
 * istio-proxy's peer metadata exchange filters as istiod writes them (pilot/pkg/xds/filters/
 * filters.go): {@code udpa.type.v1.TypedStruct}s, since istiod has no compiled proto for them.
 * HTTP: the {@code io.istio.http.peer_metadata.Config} of the inbound side (downstream discovery
 * and propagation) or of the outbound and gateway side (upstream). TCP: the
 * {@code envoy.tcp.metadataexchange.config.MetadataExchange} of the {@code istio-peer-exchange}
 * ALPN, on inbound listener chains and on outbound clusters. {@code PILOT_MX_ADDITIONAL_LABELS}
 * joins every one as {@code additional_labels}.
 */
public final class MetadataExchangeFilters {
    /** istiod's MxFilterName, the same for the HTTP, network and cluster filter. */
    public static final String NAME = "istio.metadata_exchange";
    static final String PEER_METADATA_TYPE_URL = "type.googleapis.com/io.istio.http.peer_metadata.Config";
    static final String TCP_TYPE_URL = "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange";
    /** The ALPN the TCP exchange runs on (cluster_tls.go offers it first on Istio mTLS). */
    static final String PEER_EXCHANGE_ALPN = "istio-peer-exchange";

    private final Any inbound;
    private final Any outbound;
    private final Any outboundSkipExternal;
    private final Any tcp;

    private MetadataExchangeFilters(MetadataExchange settings) {
        Value istioHeaders = struct(Map.of());
        Value workloadDiscovery = struct(Map.of());
        Value discovery = list(struct(Map.of("istio_headers", istioHeaders)),
                struct(Map.of("workload_discovery", workloadDiscovery)));
        Value propagation = list(struct(Map.of("istio_headers", istioHeaders)));
        Value skipExternal = list(struct(Map.of("istio_headers",
                struct(Map.of("skip_external_clusters", Value.newBuilder().setBoolValue(true).build())))));
        this.inbound = typed(PEER_METADATA_TYPE_URL, settings,
                Map.of("downstream_discovery", discovery, "downstream_propagation", propagation));
        this.outbound = typed(PEER_METADATA_TYPE_URL, settings,
                Map.of("upstream_discovery", discovery, "upstream_propagation", propagation));
        this.outboundSkipExternal = typed(PEER_METADATA_TYPE_URL, settings,
                Map.of("upstream_discovery", discovery, "upstream_propagation", skipExternal));
        this.tcp = typed(TCP_TYPE_URL, settings, Map.of(
                "protocol", Value.newBuilder().setStringValue(PEER_EXCHANGE_ALPN).build(),
                "enable_discovery", Value.newBuilder().setBoolValue(true).build()));
    }

    /** The filters of these settings (PILOT_MX_ADDITIONAL_LABELS). */
    public static MetadataExchangeFilters of(MetadataExchange settings) {
        return new MetadataExchangeFilters(settings);
    }

    /**
     * The HTTP filter of a connection manager of {@code cls}: inbound discovers and propagates
     * downstream, outbound and gateways upstream; with the proxy config's
     * {@code proxyHeaders.metadataExchangeHeaders.mode: IN_MESH} the headers are not sent to
     * clusters outside the mesh (istiod's SkipIstioMXHeaders).
     */
    HttpFilter http(ListenerClass cls, ProxyConfig proxyConfig) {
        Any config = cls == ListenerClass.SIDECAR_INBOUND ? inbound
                : skipExternal(proxyConfig) ? outboundSkipExternal : outbound;
        return HttpFilter.newBuilder().setName(NAME).setTypedConfig(config).build();
    }

    /** The network filter istiod's TCPListenerMx puts first on inbound chains. */
    public Filter listener() {
        return Filter.newBuilder().setName(NAME).setTypedConfig(tcp).build();
    }

    /**
     * {@code cluster} with istiod's TCPClusterMx appended to its upstream filters, as
     * applyMetadataExchange does for outbound service and subset clusters and PassthroughCluster.
     */
    public Cluster withUpstreamExchange(Cluster cluster) {
        Cluster.Builder c = cluster.toBuilder();
        c.addFiltersBuilder().setName(NAME).setTypedConfig(tcp);
        return c.build();
    }

    private static boolean skipExternal(ProxyConfig proxyConfig) {
        return proxyConfig.getProxyHeaders().getMetadataExchangeHeaders().getMode()
                == ProxyConfig.ProxyHeaders.MetadataExchangeMode.IN_MESH;
    }

    private static Any typed(String typeUrl, MetadataExchange settings, Map<String, Value> fields) {
        Struct.Builder value = Struct.newBuilder().putAllFields(fields);
        if (!settings.additionalLabels().isEmpty()) {
            value.putFields("additional_labels", list(settings.additionalLabels().stream()
                    .map(l -> Value.newBuilder().setStringValue(l).build()).toArray(Value[]::new)));
        }
        return Any.pack(TypedStruct.newBuilder().setTypeUrl(typeUrl).setValue(value).build());
    }

    private static Value struct(Map<String, Value> fields) {
        return Value.newBuilder().setStructValue(Struct.newBuilder().putAllFields(fields)).build();
    }

    private static Value list(Value... values) {
        return Value.newBuilder().setListValue(ListValue.newBuilder().addAllValues(List.of(values))).build();
    }
}
