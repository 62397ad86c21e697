package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import io.envoyproxy.envoy.config.accesslog.v3.AccessLog;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Puts the access logs and tracing that Telemetry (or the mesh config's access log defaults)
 * gives one proxy into its built listeners, where istiod's builders put them: every HTTP
 * connection manager (access logs, tracing), every tcp_proxy but the BlackHole one (access
 * logs), and the listener itself for connections no chain matched (the capture listeners and
 * gateway listeners; response flag NR). For istio-proxy nodes it also adds Istio's own filters
 * ({@link IstioProxyFilters}: metadata exchange, gRPC stats, ALPN, {@code istio.stats}), which plain
 * Envoy does not have. One instance serves one proxy's build.
 */
public final class ListenerTelemetry {
    static final String HCM = "envoy.filters.network.http_connection_manager";
    static final String TCP_PROXY = "envoy.filters.network.tcp_proxy";
    static final String BLACKHOLE = "BlackHoleCluster";

    private final Proxy proxy;
    private final PushContext push;
    private final TelemetrySelection selection;
    private final Map<ListenerClass, List<AccessLog>> filterLogs = new EnumMap<>(ListenerClass.class);
    private final Map<ListenerClass, List<AccessLog>> listenerLogs = new EnumMap<>(ListenerClass.class);
    private final Map<ListenerClass, Optional<HttpConnectionManager.Tracing>> tracing = new EnumMap<>(ListenerClass.class);
    private final Map<ListenerClass, IstioProxyFilters> istioFilters = new EnumMap<>(ListenerClass.class);
    private MetadataExchangeFilters metadataExchange;

    private ListenerTelemetry(Proxy proxy, PushContext push) {
        this.proxy = proxy;
        this.push = push;
        this.selection = TelemetrySelection.forProxy(proxy, push);
    }

    public static ListenerTelemetry forProxy(Proxy proxy, PushContext push) {
        return new ListenerTelemetry(proxy, push);
    }

    /**
     * What of the proxy's own ProxyConfig changes its listeners, for the key of listeners shared
     * by a scope: its tracing and metadata-exchange headers, when they differ from the mesh's
     * {@code defaultConfig} (istio-agent sends the effective config, which for most workloads
     * is the mesh default, so they keep sharing).
     */
    public static String proxyConfigKey(Proxy proxy, PushContext push) {
        ProxyConfig mesh = push.mesh().getDefaultConfig();
        ProxyConfig own = proxy.proxyConfigOr(mesh);
        if (own.getTracing().equals(mesh.getTracing())
                && own.getProxyHeaders().getMetadataExchangeHeaders().equals(mesh.getProxyHeaders().getMetadataExchangeHeaders())) {
            return "";
        }
        return "|proxy-config:" + TextFormat.shortDebugString(own.getTracing()) + "/"
                + own.getProxyHeaders().getMetadataExchangeHeaders().getModeValue();
    }

    /**
     * Nothing to add: not istio-proxy, no Telemetry applies, no default provider, no mesh access
     * log file, and the mesh's legacy {@code enableTracing} is off.
     */
    private boolean inert() {
        return !istioProxy() && selection.logging().isEmpty() && selection.tracing().isEmpty()
                && !push.mesh().getEnableTracing()
                && push.mesh().getAccessLogFile().isEmpty()
                && push.mesh().getDefaultProviders().getAccessLoggingCount() == 0
                && push.mesh().getDefaultProviders().getTracingCount() == 0;
    }

    /** Istio's own filters (stats, metadata exchange) go only to istio-proxy: plain Envoy would NACK them. */
    private boolean istioProxy() {
        return proxy.istioProxy() && !proxy.proxyless();
    }

    /**
     * {@code listener} with its connection managers and TCP proxies logging and tracing as
     * {@code cls} should and, for istio-proxy, with Istio's stats and metadata-exchange filters;
     * {@code listenerLevel}: also log connections no chain matched.
     */
    public Listener apply(Listener listener, ListenerClass cls, boolean listenerLevel) {
        if (inert()) {
            return listener;
        }
        List<AccessLog> logs = filterLogs.computeIfAbsent(cls, c -> AccessLogs.forFilter(selection, push, c));
        Optional<HttpConnectionManager.Tracing> trace = tracing.computeIfAbsent(cls,
                c -> TracingConfigs.forHcm(selection, push, proxy, c));
        IstioProxyFilters istio = istioProxy() ? istioFilters.computeIfAbsent(cls, this::istioProxyFilters)
                : IstioProxyFilters.NONE;
        if (logs.isEmpty() && trace.isEmpty() && istio.isEmpty() && !listenerLevel) {
            return listener;
        }
        Listener.Builder l = listener.toBuilder();
        for (FilterChain.Builder fc : l.getFilterChainsBuilderList()) {
            decorate(fc, logs, trace, istio);
        }
        if (l.hasDefaultFilterChain()) {
            decorate(l.getDefaultFilterChainBuilder(), logs, trace, istio);
        }
        if (listenerLevel) {
            l.addAllAccessLog(listenerLogs.computeIfAbsent(cls, c -> AccessLogs.forListener(selection, push, c)));
        }
        return l.build();
    }

    /**
     * The network metadata-exchange filter istiod puts first on a gateway's TCP chain of a server
     * with {@code ISTIO_MUTUAL} TLS (gateway.go includeMx); none for plain Envoy or with
     * PILOT_ENABLE_METADATA_EXCHANGE=false.
     */
    public List<Filter> gatewayMutualTlsFilters() {
        return istioProxy() && push.metadataExchange().enabled() ? List.of(metadataExchange().listener()) : List.of();
    }

    private MetadataExchangeFilters metadataExchange() {
        if (metadataExchange == null) {
            metadataExchange = MetadataExchangeFilters.of(push.metadataExchange());
        }
        return metadataExchange;
    }

    private IstioProxyFilters istioProxyFilters(ListenerClass cls) {
        boolean mx = push.metadataExchange().enabled();
        List<Any> stats = StatsFilters.forClass(selection, push.mesh(), cls);
        return new IstioProxyFilters(
                mx ? metadataExchange().http(cls, proxy.proxyConfigOr(push.mesh().getDefaultConfig())) : null,
                mx && cls == ListenerClass.SIDECAR_INBOUND ? metadataExchange().listener() : null,
                push.metadataExchange().alpnFilter() && cls != ListenerClass.SIDECAR_INBOUND
                        ? AlpnFilter.FILTER : null,
                stats.stream().map(a -> HttpFilter.newBuilder().setName(StatsFilters.NAME).setTypedConfig(a).build())
                        .toList(),
                stats.stream().map(a -> Filter.newBuilder().setName(StatsFilters.NAME).setTypedConfig(a).build())
                        .toList());
    }

    private static void decorate(FilterChain.Builder fc, List<AccessLog> logs,
                                 Optional<HttpConnectionManager.Tracing> trace, IstioProxyFilters istio) {
        for (int i = 0; i < fc.getFiltersCount(); i++) {
            Filter.Builder f = fc.getFiltersBuilder(i);
            if (!f.hasTypedConfig()) {
                continue;
            }
            try {
                if (f.getName().equals(HCM) && (!logs.isEmpty() || trace.isPresent() || !istio.isEmpty())) {
                    HttpConnectionManager.Builder hcm = f.getTypedConfig().unpack(HttpConnectionManager.class).toBuilder();
                    hcm.addAllAccessLog(logs);
                    trace.ifPresent(hcm::setTracing);
                    istio.addHttp(hcm);
                    f.setTypedConfig(Any.pack(hcm.build()));
                } else if (f.getName().equals(TCP_PROXY)) {
                    TcpProxy tcp = f.getTypedConfig().unpack(TcpProxy.class);
                    if (!logs.isEmpty() && !tcp.getCluster().equals(BLACKHOLE)) {
                        f.setTypedConfig(Any.pack(tcp.toBuilder().addAllAccessLog(logs).build()));
                    }
                    // istiod's buildCompleteNetworkFilters: stats right before the proxying filter
                    for (Filter stats : istio.networkStats()) {
                        fc.addFilters(i++, stats);
                    }
                }
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException("built an unreadable " + f.getName(), e);
            }
        }
        if (istio.listenerExchange() != null) {
            fc.addFilters(0, istio.listenerExchange());
        }
    }

    /** The applicable Telemetries, named: part of the cache key of listeners shared by a scope. */
    public String key() {
        return selection.key();
    }
}
