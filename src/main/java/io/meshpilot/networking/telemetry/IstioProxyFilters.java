package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.http.grpc_stats.v3.FilterConfig;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.List;

/**
 * The filters istiod adds for istio-proxy to one listener class's chains, placed as its
 * listener builder places them: in a connection manager, metadata exchange first (before RBAC,
 * istio/istio#41066), gRPC stats and then {@code istio.alpn} before fault, {@code istio.stats}
 * right before the router; on
 * a chain, the network metadata exchange first (inbound only) and the network stats right
 * before tcp_proxy.
 *
 * @param httpExchange     the HTTP metadata-exchange filter, or null (PILOT_ENABLE_METADATA_EXCHANGE=false)
 * @param listenerExchange the network metadata-exchange filter of inbound chains, or null
 * @param alpn             {@code istio.alpn}, or null (sidecar inbound, PILOT_ENABLE_ALPN_FILTER=false)
 * @param httpStats        the {@code istio.stats} HTTP filters (empty when no prometheus provider is in force)
 * @param networkStats     the same as network filters
 */
record IstioProxyFilters(HttpFilter httpExchange, Filter listenerExchange, HttpFilter alpn,
                         List<HttpFilter> httpStats, List<Filter> networkStats) {
    static final IstioProxyFilters NONE = new IstioProxyFilters(null, null, null, List.of(), List.of());
    static final String GRPC_STATS = "envoy.filters.http.grpc_stats";
    static final String FAULT = "envoy.filters.http.fault";
    static final String CORS = "envoy.filters.http.cors";
    static final String ROUTER = "envoy.filters.http.router";

    /** istiod's GrpcStats: feeds istio_request_messages_total and istio_response_messages_total. */
    static final HttpFilter GRPC_STATS_FILTER = HttpFilter.newBuilder().setName(GRPC_STATS)
            .setTypedConfig(Any.pack(FilterConfig.newBuilder().setEmitFilterState(true)
                    .setStatsForAllMethods(BoolValue.of(false)).build()))
            .build();

    IstioProxyFilters {
        httpStats = List.copyOf(httpStats);
        networkStats = List.copyOf(networkStats);
    }

    /** Not istio-proxy: nothing of Istio's own goes in. */
    boolean isEmpty() {
        return this == NONE;
    }

    void addHttp(HttpConnectionManager.Builder hcm) {
        if (isEmpty()) {
            return;
        }
        int beforeFault = grpcStatsPosition(hcm);
        hcm.addHttpFilters(beforeFault, GRPC_STATS_FILTER);
        if (alpn != null) {
            hcm.addHttpFilters(beforeFault + 1, alpn);
        }
        int router = indexOf(hcm, ROUTER);
        for (HttpFilter stats : httpStats) {
            hcm.addHttpFilters(router++, stats);
        }
        if (httpExchange != null) {
            hcm.addHttpFilters(0, httpExchange);
        }
    }

    /**
     * Where istiod's list puts grpc_stats (and ALPN after it): before fault, cors and the router,
     * whichever of them comes first; the end only when the connection manager has none of them.
     */
    private static int grpcStatsPosition(HttpConnectionManager.Builder hcm) {
        for (int i = 0; i < hcm.getHttpFiltersCount(); i++) {
            String name = hcm.getHttpFilters(i).getName();
            if (name.equals(FAULT) || name.equals(CORS) || name.equals(ROUTER)) {
                return i;
            }
        }
        return hcm.getHttpFiltersCount();
    }

    /** The position of filter {@code name}, or the end when the connection manager has none. */
    private static int indexOf(HttpConnectionManager.Builder hcm, String name) {
        for (int i = 0; i < hcm.getHttpFiltersCount(); i++) {
            if (hcm.getHttpFilters(i).getName().equals(name)) {
                return i;
            }
        }
        return hcm.getHttpFiltersCount();
    }
}
