package io.meshpilot.networking.wasm;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.ExtensionConfigSource;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.extensions.v1alpha1.PluginPhase;
import io.meshpilot.api.extensions.v1alpha1.WasmPlugin;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.telemetry.ListenerClass;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The WasmPlugin HTTP filters of one proxy's build, each a reference to its ECDS resource
 * ({@code config_discovery} over ADS, type URLs Wasm and RBAC, as istiod's toEnvoyHTTPFilter),
 * by phase for a listener's class and port. Within a phase, higher {@code priority} first (no
 * priority: lowest), older first on ties (istiod's stable sort of creation-ordered plugins).
 * Where phases go: istiod's buildHTTPConnectionManager puts AUTHN after CUSTOM authorization and
 * before jwt_authn, AUTHZ before RBAC, then STATS and UNSPECIFIED.
 */
public final class WasmFilters {
    static final String HCM = "envoy.filters.network.http_connection_manager";
    static final String WASM_HTTP_TYPE = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
    static final String RBAC_HTTP_TYPE = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC";
    static final String TCP_PROXY = "envoy.filters.network.tcp_proxy";
    static final String WASM_NETWORK_TYPE = "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm";
    static final String RBAC_NETWORK_TYPE = "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC";
    private static final List<PluginPhase> PHASES = List.of(PluginPhase.AUTHN, PluginPhase.AUTHZ, PluginPhase.STATS,
            PluginPhase.UNSPECIFIED_PHASE);
    public static final WasmFilters NONE = new WasmFilters(List.of());

    private final List<Config> plugins;

    private WasmFilters(List<Config> plugins) {
        List<Config> sorted = new ArrayList<>(plugins);
        sorted.sort(Comparator.comparingInt((Config c) -> {
            WasmPlugin w = (WasmPlugin) c.spec();
            return w.hasPriority() ? w.getPriority().getValue() : Integer.MIN_VALUE;
        }).reversed());
        this.plugins = List.copyOf(sorted);
    }

    public static WasmFilters forProxy(Proxy proxy, PushContext push) {
        if (push.wasmPlugins().isEmpty()) {
            return NONE;
        }
        return new WasmFilters(WasmPlugins.forProxy(proxy, push));
    }

    /** The HTTP plugins of {@code phase} for a connection manager of {@code cls} on {@code port}. */
    public List<HttpFilter> phase(PluginPhase phase, ListenerClass cls, int port) {
        if (plugins.isEmpty()) {
            return List.of();
        }
        List<HttpFilter> out = new ArrayList<>();
        for (Config c : plugins) {
            WasmPlugin w = (WasmPlugin) c.spec();
            if (!WasmPlugins.isNetwork(w) && w.getPhase() == phase && WasmPlugins.matches(w, cls, port)) {
                out.add(reference(c));
            }
        }
        return out;
    }

    /** The NETWORK plugins of {@code phase} for a filter chain of {@code cls} on {@code port}. */
    public List<Filter> networkPhase(PluginPhase phase, ListenerClass cls, int port) {
        if (plugins.isEmpty()) {
            return List.of();
        }
        List<Filter> out = new ArrayList<>();
        for (Config c : plugins) {
            WasmPlugin w = (WasmPlugin) c.spec();
            if (WasmPlugins.isNetwork(w) && w.getPhase() == phase && WasmPlugins.matches(w, cls, port)) {
                out.add(networkReference(c));
            }
        }
        return out;
    }

    /**
     * NETWORK plugins in chains without security network filters, as istiod builds them: before
     * every connection manager (inbound, outbound and gateway HTTP chains) and, on outbound
     * listeners, before every tcp_proxy but the BlackHole one, all phases in order. Inbound and
     * gateway TCP chains get theirs around the network RBAC filters from SecurityFilters.
     */
    public Listener applyNetwork(Listener listener, ListenerClass cls) {
        if (plugins.stream().noneMatch(c -> WasmPlugins.isNetwork((WasmPlugin) c.spec()))) {
            return listener;
        }
        int listenerPort = listener.getAddress().getSocketAddress().getPortValue();
        Listener.Builder l = listener.toBuilder();
        for (FilterChain.Builder fc : l.getFilterChainsBuilderList()) {
            int port = fc.getFilterChainMatch().hasDestinationPort()
                    ? fc.getFilterChainMatch().getDestinationPort().getValue() : listenerPort;
            List<Filter> out = new ArrayList<>();
            for (Filter f : fc.getFiltersList()) {
                boolean terminal = f.getName().equals(HCM) || cls == ListenerClass.SIDECAR_OUTBOUND
                        && f.getName().equals(TCP_PROXY) && !isBlackHole(f);
                if (terminal) {
                    for (PluginPhase p : PHASES) {
                        out.addAll(networkPhase(p, cls, port));
                    }
                }
                out.add(f);
            }
            fc.clearFilters().addAllFilters(out);
        }
        return l.build();
    }

    private static boolean isBlackHole(Filter f) {
        try {
            return f.getTypedConfig().unpack(TcpProxy.class)
                    .getCluster().equals("BlackHoleCluster");
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("built an unreadable tcp_proxy", e);
        }
    }

    /** The names of the applicable plugins: part of the cache key of listeners shared by a scope. */
    public String key() {
        return plugins.stream().map(c -> c.namespace() + "/" + c.name()).toList().toString();
    }

    /**
     * An outbound listener with the plugins in its connection managers: outbound connection
     * managers have no security filters, so the phases go first, in order.
     */
    public Listener applyOutbound(Listener listener) {
        if (plugins.isEmpty()) {
            return listener;
        }
        int port = listener.getAddress().getSocketAddress().getPortValue();
        List<HttpFilter> filters = new ArrayList<>();
        for (PluginPhase p : PHASES) {
            filters.addAll(phase(p, ListenerClass.SIDECAR_OUTBOUND, port));
        }
        if (filters.isEmpty()) {
            return listener;
        }
        Listener.Builder l = listener.toBuilder();
        for (FilterChain.Builder fc : l.getFilterChainsBuilderList()) {
            for (Filter.Builder f : fc.getFiltersBuilderList()) {
                if (f.getName().equals(HCM) && f.hasTypedConfig()) {
                    try {
                        HttpConnectionManager hcm = f.getTypedConfig().unpack(HttpConnectionManager.class);
                        List<HttpFilter> all = new ArrayList<>(filters);
                        all.addAll(hcm.getHttpFiltersList());
                        f.setTypedConfig(Any.pack(hcm.toBuilder().clearHttpFilters().addAllHttpFilters(all).build()));
                    } catch (InvalidProtocolBufferException e) {
                        throw new IllegalStateException("built an unreadable connection manager", e);
                    }
                }
            }
        }
        return l.build();
    }

    /** istiod's toEnvoyNetworkFilter. */
    static Filter networkReference(Config c) {
        return Filter.newBuilder().setName(WasmPlugins.resourceName(c))
                .setConfigDiscovery(ExtensionConfigSource.newBuilder()
                        .setConfigSource(ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                                .setResourceApiVersion(ApiVersion.V3).setInitialFetchTimeout(Duration.getDefaultInstance()))
                        .addTypeUrls(WASM_NETWORK_TYPE).addTypeUrls(RBAC_NETWORK_TYPE))
                .build();
    }

    /** istiod's toEnvoyHTTPFilter. */
    static HttpFilter reference(Config c) {
        return HttpFilter.newBuilder().setName(WasmPlugins.resourceName(c))
                .setConfigDiscovery(ExtensionConfigSource.newBuilder()
                        .setConfigSource(ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                                .setResourceApiVersion(ApiVersion.V3).setInitialFetchTimeout(Duration.getDefaultInstance()))
                        .addTypeUrls(WASM_HTTP_TYPE).addTypeUrls(RBAC_HTTP_TYPE))
                .build();
    }

}
