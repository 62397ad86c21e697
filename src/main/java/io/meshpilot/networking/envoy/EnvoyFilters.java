package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.Pipe;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.Cors;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.OutboundTrafficPolicy;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import java.util.List;

/** Names and small building blocks shared by the sidecar listener and cluster builders (istiod's values). */
final class EnvoyFilters {
    static final String PASSTHROUGH_CLUSTER = "PassthroughCluster";
    static final String BLACKHOLE_CLUSTER = "BlackHoleCluster";
    static final String INBOUND_PASSTHROUGH_CLUSTER = "InboundPassthroughCluster";
    static final String VIRTUAL_OUTBOUND = "virtualOutbound";
    static final String VIRTUAL_INBOUND = "virtualInbound";
    static final String WILDCARD = "0.0.0.0";

    static final String TCP_PROXY = "envoy.filters.network.tcp_proxy";
    static final String HTTP_CONNECTION_MANAGER = "envoy.filters.network.http_connection_manager";
    static final String ROUTER = "envoy.filters.http.router";
    static final String ORIGINAL_DST = "envoy.filters.listener.original_dst";
    static final String TLS_INSPECTOR = "envoy.filters.listener.tls_inspector";
    static final String HTTP_INSPECTOR = "envoy.filters.listener.http_inspector";
    static final String TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls";

    /** istiod's filter-chain transport protocols (set by the TLS inspector, raw_buffer otherwise). */
    static final String TLS = "tls";
    static final String RAW_BUFFER = "raw_buffer";

    private EnvoyFilters() {
    }

    /** istiod's util.DelimitedStatsPrefix: a stat prefix ends with ';'. */
    static String delimited(String statPrefix) {
        return statPrefix + ";";
    }

    static Address address(String ip, int port) {
        return Address.newBuilder().setSocketAddress(SocketAddress.newBuilder().setAddress(ip).setPortValue(port))
                .build();
    }

    static final String UNIX_PREFIX = "unix://";

    /**
     * istiod's util.BuildAddress for a bind: {@code unix://PATH} (the only bind validation
     * admits besides an IP) is a pipe at PATH, anything else an IP and port.
     */
    static Address bindAddress(String bind, int port) {
        return bind.startsWith(UNIX_PREFIX) ? pipe(bind) : address(bind, port);
    }

    /** The pipe at the path of {@code unix://PATH}. */
    static Address pipe(String unixAddress) {
        return Address.newBuilder().setPipe(Pipe.newBuilder().setPath(unixAddress.substring(UNIX_PREFIX.length())))
                .build();
    }

    static Filter tcpProxy(String statPrefix, String cluster) {
        return Filter.newBuilder().setName(TCP_PROXY).setTypedConfig(Any.pack(TcpProxy.newBuilder()
                .setStatPrefix(statPrefix).setCluster(cluster).build())).build();
    }

    static HttpFilter router() {
        return HttpFilter.newBuilder().setName(ROUTER).setTypedConfig(Any.pack(Router.getDefaultInstance())).build();
    }

    /**
     * The HTTP filters of istiod's connection managers (outbound, inbound, gateway) that plain
     * Envoy has: fault and CORS (idle unless a route carries their per-route config), then the
     * router. Istio's own filters (metadata exchange, stats) need istio-proxy's build: they are
     * added for istio-proxy nodes only, by {@link io.meshpilot.networking.telemetry.ListenerTelemetry}.
     */
    static List<HttpFilter> httpFilters() {
        return List.of(
                HttpFilter.newBuilder().setName(HttpRouteTranslator.FAULT_FILTER).setTypedConfig(Any.pack(
                        HTTPFault.getDefaultInstance())).build(),
                HttpFilter.newBuilder().setName(HttpRouteTranslator.CORS_FILTER).setTypedConfig(Any.pack(
                        Cors.getDefaultInstance())).build(),
                router());
    }

    /** The route configuration {@code routeName} over ADS, without an initial fetch timeout, as istiod. */
    static Rds rds(String routeName) {
        return Rds.newBuilder()
                .setRouteConfigName(routeName)
                .setConfigSource(ConfigSource.newBuilder()
                        .setAds(AggregatedConfigSource.getDefaultInstance())
                        .setInitialFetchTimeout(Duration.getDefaultInstance())
                        .setResourceApiVersion(ApiVersion.V3))
                .build();
    }

    /**
     * The connection manager fields istiod's buildHTTPConnectionManager sets for every sidecar
     * HCM: codec AUTO, path normalization (the mesh default), escaped slashes kept, the
     * downstream address not used, websocket upgrades, no stream idle timeout.
     */
    static HttpConnectionManager.Builder hcm(String statPrefix) {
        return HttpConnectionManager.newBuilder()
                .setCodecType(HttpConnectionManager.CodecType.AUTO)
                .setStatPrefix(statPrefix)
                .setNormalizePath(BoolValue.of(true))
                .setPathWithEscapedSlashesAction(HttpConnectionManager.PathWithEscapedSlashesAction.KEEP_UNCHANGED)
                .setUseRemoteAddress(BoolValue.of(false))
                .addUpgradeConfigs(HttpConnectionManager.UpgradeConfig.newBuilder().setUpgradeType("websocket"))
                .setStreamIdleTimeout(Duration.getDefaultInstance());
    }

    /** An outbound HCM taking routes {@code routeName} over ADS (no initial fetch timeout, as istiod). */
    static Filter rdsHcm(String statPrefix, String routeName) {
        HttpConnectionManager hcm = hcm(statPrefix)
                .setRds(rds(routeName))
                .addAllHttpFilters(httpFilters())
                .build();
        return Filter.newBuilder().setName(HTTP_CONNECTION_MANAGER).setTypedConfig(Any.pack(hcm)).build();
    }

    static int port(int configured, int fallback) {
        return configured > 0 ? configured : fallback;
    }

    /** The mesh's outbound capture port (proxyListenPort, 15001). */
    static int outboundCapturePort(MeshConfig mesh) {
        return port(mesh.getProxyListenPort(), 15001);
    }

    /** The mesh's inbound capture port (proxyInboundListenPort, 15006). */
    static int inboundCapturePort(MeshConfig mesh) {
        return port(mesh.getProxyInboundListenPort(), 15006);
    }

    /**
     * Whether unknown outbound destinations pass through (istiod's IsAllowAnyOutbound): the
     * Sidecar's outboundTrafficPolicy when it sets one, else the mesh's.
     */
    static boolean allowAny(MeshConfig mesh, ProxyScope scope, Proxy proxy) {
        if (scope.sidecar() != null && ((Sidecar) scope.sidecar().spec()).hasOutboundTrafficPolicy()) {
            return ((Sidecar) scope.sidecar().spec()).getOutboundTrafficPolicy().getMode()
                    == OutboundTrafficPolicy.Mode.ALLOW_ANY;
        }
        var mode = mesh.getOutboundTrafficPolicy().getMode();
        return mode == MeshConfig.OutboundTrafficPolicy.Mode.ALLOW_ANY
                || mode == MeshConfig.OutboundTrafficPolicy.Mode.ALLOW_ANY_DYNAMIC_DNS;
    }
}
