package io.meshpilot.networking.envoy;

import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.extensions.v1alpha1.PluginPhase;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.authn.JwtAuthnFilter;
import io.meshpilot.networking.authz.AuthorizationFilters;
import io.meshpilot.networking.telemetry.ListenerClass;
import io.meshpilot.networking.wasm.WasmFilters;
import java.util.ArrayList;
import java.util.List;

/**
 * The security filters of one proxy's inbound or gateway listeners, computed once per build:
 * RequestAuthentication's jwt_authn and AuthorizationPolicy's filters.
 *
 * @param authn the jwt_authn filter, when a RequestAuthentication applies
 * @param authz the CUSTOM (ext_authz) and RBAC filters of the AuthorizationPolicies that apply
 * @param wasm  the WasmPlugins that apply, placed by phase around the security filters
 */
record SecurityFilters(List<HttpFilter> authn, AuthorizationFilters authz, WasmFilters wasm) {
    SecurityFilters {
        authn = List.copyOf(authn);
    }

    static SecurityFilters forProxy(Proxy proxy, PushContext push) {
        return new SecurityFilters(JwtAuthnFilter.forProxy(proxy, push).stream().toList(),
                AuthorizationFilters.forProxy(proxy, push), WasmFilters.forProxy(proxy, push));
    }

    /**
     * An HTTP connection manager's security filters in istiod's order (buildInboundHTTPFilters):
     * CUSTOM authorization (ext_authz), then authentication (jwt_authn), then the RBAC filters
     * of AUDIT, DENY and ALLOW policies.
     */
    List<HttpFilter> http() {
        List<HttpFilter> out = new ArrayList<>(authz.customHttp());
        out.addAll(authn);
        out.addAll(authz.http());
        return out;
    }

    /**
     * {@link #http()} with the WasmPlugins of a connection manager of {@code cls} on {@code port}
     * at their phases, as istiod's buildHTTPConnectionManager: CUSTOM, AUTHN plugins, jwt_authn,
     * AUTHZ plugins, RBAC, STATS plugins, UNSPECIFIED_PHASE plugins.
     */
    List<HttpFilter> http(ListenerClass cls, int port) {
        List<HttpFilter> out = new ArrayList<>(authz.customHttp());
        out.addAll(wasm.phase(PluginPhase.AUTHN, cls, port));
        out.addAll(authn);
        out.addAll(wasm.phase(PluginPhase.AUTHZ, cls, port));
        out.addAll(authz.http());
        out.addAll(wasm.phase(PluginPhase.STATS, cls, port));
        out.addAll(wasm.phase(PluginPhase.UNSPECIFIED_PHASE, cls, port));
        return out;
    }

    /**
     * {@link #network()} with the NETWORK WasmPlugins of a TCP chain of {@code cls} on
     * {@code port} at their phases, as istiod's buildNetworkFiltersStack: CUSTOM, AUTHN plugins,
     * AUTHZ plugins, network RBAC, STATS plugins, UNSPECIFIED_PHASE plugins.
     */
    List<Filter> network(ListenerClass cls, int port) {
        List<Filter> out = new ArrayList<>(authz.customTcp());
        out.addAll(wasm.networkPhase(PluginPhase.AUTHN, cls, port));
        out.addAll(wasm.networkPhase(PluginPhase.AUTHZ, cls, port));
        out.addAll(authz.tcp());
        out.addAll(wasm.networkPhase(PluginPhase.STATS, cls, port));
        out.addAll(wasm.networkPhase(PluginPhase.UNSPECIFIED_PHASE, cls, port));
        return out;
    }

    /** A TCP chain's security filters, before tcp_proxy: CUSTOM (gRPC ext_authz), then network RBAC. */
    List<Filter> network() {
        List<Filter> out = new ArrayList<>(authz.customTcp());
        out.addAll(authz.tcp());
        return out;
    }
}
