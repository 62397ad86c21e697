package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.config.core.v3.Http1ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.TrafficDirection;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.networking.v1alpha3.L4MatchAttributes;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSMatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.networking.telemetry.ListenerClass;
import io.meshpilot.networking.telemetry.ListenerTelemetry;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * LDS for gateways (istiod's buildGatewayListeners): one listener {@code 0.0.0.0_<port>}
 * per merged server port, bound to the port ({@code <bind>_<port>} on that address for servers
 * with a {@code bind}).
 * <ul>
 *   <li>plaintext HTTP servers: one chain with a connection manager on {@code http.<port>};</li>
 *   <li>HTTPS that terminates TLS: a chain per server, matched by SNI, with the server's TLS
 *       and its own route configuration;</li>
 *   <li>TLS passthrough: a chain per VirtualService {@code tls} match, by its SNI hosts, to a
 *       tcp_proxy; AUTO_PASSTHROUGH: a chain per service port (and subset) whose SNI is the
 *       SNI-DNAT cluster name {@code outbound_.<port>_.<subset>_.<host>};</li>
 *   <li>TCP, or TLS terminated here: the first VirtualService {@code tcp} route that matches.</li>
 * </ul>
 * The AuthorizationPolicies selecting the gateway add their RBAC (and CUSTOM ext_authz)
 * filters to every connection manager and to the TCP and passthrough chains (not to
 * AUTO_PASSTHROUGH chains, as istiod).
 * A port left without any chain (no VirtualService for a TCP server) gets no listener: Envoy
 * refuses listeners without chains.
 */
public final class GatewayListenerBuilder {
    private static final System.Logger LOG = System.getLogger(GatewayListenerBuilder.class.getName());
    /** istiod's allIstioMtlsALPNs: what a sidecar's Istio mTLS client offers. */
    static final List<String> ISTIO_MTLS_ALPNS = List.of("istio", "istio-peer-exchange", "istio-http/1.0",
            "istio-http/1.1", "istio-h2");
    /** The server header gateways send (istiod's EnvoyServerName). */
    static final String SERVER_NAME = "istio-envoy";

    private GatewayListenerBuilder() {
    }

    public static List<Listener> listeners(Proxy proxy, PushContext push, MergedGateway merged) {
        List<Listener> out = new ArrayList<>();
        ProxyScope scope = push.scope(proxy);
        SecurityFilters security = SecurityFilters.forProxy(proxy, push);
        ListenerTelemetry telemetry = ListenerTelemetry.forProxy(proxy, push);
        for (MergedGateway.ServerPort port : merged.ports()) {
            // istiod's buildGatewayListeners: a server's bind replaces the wildcard address
            String address = port.bind().isEmpty() ? EnvoyFilters.WILDCARD : port.bind();
            String name = address + "_" + port.number();
            List<FilterChain> chains = new ArrayList<>();
            if (port.http()) {
                chains.add(FilterChain.newBuilder()
                        .addFilters(hcm("outbound_" + name, port.httpRouteName(), security, port.number())).build());
            } else {
                // the first chain for a match wins: Envoy refuses a listener with two equal matches
                Map<FilterChainMatch, FilterChain> byMatch = new LinkedHashMap<>();
                for (MergedGateway.GatewayServer server : port.servers()) {
                    for (FilterChain c : serverChains(server, port.number(), proxy, push, scope, security,
                            telemetry)) {
                        if (byMatch.putIfAbsent(c.getFilterChainMatch(), c) != null) {
                            LOG.log(System.Logger.Level.INFO, "gateway {0}: {1}: a filter chain for {2} on port {3} "
                                    + "is already there; skipped", proxy.id(), server.gateway(),
                                    c.getFilterChainMatch().getServerNamesList(), port.number());
                        }
                    }
                }
                chains.addAll(byMatch.values());
            }
            if (chains.isEmpty()) {
                LOG.log(System.Logger.Level.INFO, "gateway {0}: no listener on port {1}: no VirtualService "
                        + "routes its servers", proxy.id(), port.number());
                continue;
            }
            Listener.Builder l = Listener.newBuilder().setName(name)
                    .setAddress(EnvoyFilters.bindAddress(address, port.number()))
                    .setTrafficDirection(TrafficDirection.OUTBOUND)
                    .addAllFilterChains(chains);
            if (chains.stream().anyMatch(c -> c.getFilterChainMatch().getServerNamesCount() > 0
                    || c.getFilterChainMatch().getApplicationProtocolsCount() > 0)) {
                l.addListenerFilters(ListenerFilter.newBuilder().setName(EnvoyFilters.TLS_INSPECTOR)
                        .setTypedConfig(Any.pack(TlsInspector.getDefaultInstance())));
            }
            out.add(telemetry.apply(security.wasm().applyNetwork(l.build(), ListenerClass.GATEWAY), ListenerClass.GATEWAY,
                    true));
        }
        return out;
    }

    private static List<FilterChain> serverChains(MergedGateway.GatewayServer server, int listenerPort, Proxy proxy,
                                                  PushContext push, ProxyScope scope,
                                                  SecurityFilters security, ListenerTelemetry telemetry) {
        if (server.terminatesHttps()) {
            String statPrefix = server.server().getName().isEmpty()
                    ? "outbound_" + EnvoyFilters.WILDCARD + "_" + listenerPort : server.server().getName();
            return List.of(FilterChain.newBuilder()
                    .setFilterChainMatch(sni(server.sniHosts()))
                    .setTransportSocket(tls(server, true))
                    .addFilters(hcm(statPrefix, server.routeName(), security, listenerPort)).build());
        }
        if (server.autoPassthrough()) {
            return autoPassthrough(server, push, scope);
        }
        if (server.passthrough()) {
            return tlsRoutes(server, proxy, push, security);
        }
        // TCP, or TLS terminated here and forwarded as TCP
        Filter tcp = tcpRoute(server, proxy, push);
        if (tcp == null) {
            return List.of();
        }
        FilterChain.Builder chain = FilterChain.newBuilder();
        if (server.server().getTls().getMode() == ServerTLSSettings.TLSmode.ISTIO_MUTUAL) {
            chain.addAllFilters(telemetry.gatewayMutualTlsFilters());
        }
        chain.addAllFilters(security.network(ListenerClass.GATEWAY, server.server().getPort().getNumber()))
                .addFilters(tcp);
        if (server.server().hasTls()) {
            chain.setFilterChainMatch(sni(server.sniHosts())).setTransportSocket(tls(server, false));
        }
        return List.of(chain.build());
    }

    /** The first {@code tcp} route of a VirtualService bound to the server's Gateway whose match fits the server. */
    private static Filter tcpRoute(MergedGateway.GatewayServer server, Proxy proxy, PushContext push) {
        for (Config vs : push.virtualServicesForGateway(server.gateway(), proxy.namespace())) {
            VirtualService spec = (VirtualService) vs.spec();
            if (!hostsMatch(server.hosts(), spec, vs.namespace())) {
                continue;
            }
            for (TCPRoute r : spec.getTcpList()) {
                boolean matches = r.getMatchCount() == 0;
                for (L4MatchAttributes m : r.getMatchList()) {
                    matches |= l4Match(m.getPort(), m.getGatewaysList(), server, vs.namespace());
                }
                if (matches && r.getRouteCount() > 0) {
                    return TcpRouteTranslator.tcpProxy(r.getRouteList(), server.server().getPort().getNumber(), vs,
                            push);
                }
            }
        }
        return null;
    }

    /** SNI passthrough: a chain per {@code tls} match, skipping SNI names an earlier chain already claimed. */
    private static List<FilterChain> tlsRoutes(MergedGateway.GatewayServer server, Proxy proxy, PushContext push,
                                               SecurityFilters security) {
        List<FilterChain> out = new ArrayList<>();
        Set<String> claimed = new HashSet<>();
        for (Config vs : push.virtualServicesForGateway(server.gateway(), proxy.namespace())) {
            VirtualService spec = (VirtualService) vs.spec();
            if (!hostsMatch(server.hosts(), spec, vs.namespace())) {
                continue;
            }
            for (TLSRoute r : spec.getTlsList()) {
                for (TLSMatchAttributes m : r.getMatchList()) {
                    if (!l4Match(m.getPort(), m.getGatewaysList(), server, vs.namespace()) || r.getRouteCount() == 0) {
                        continue;
                    }
                    if (m.getSniHostsList().stream().anyMatch(claimed::contains)) {
                        LOG.log(System.Logger.Level.INFO, "gateway {0}: VirtualService {1}: tls match {2} skipped: "
                                + "SNI already routed on port {3}", proxy.id(), vs.key(), m.getSniHostsList(),
                                server.server().getPort().getNumber());
                        continue;
                    }
                    claimed.addAll(m.getSniHostsList());
                    out.add(FilterChain.newBuilder().setFilterChainMatch(sni(m.getSniHostsList()))
                            .addAllFilters(security.network(ListenerClass.GATEWAY,
                                    server.server().getPort().getNumber()))
                            .addFilters(TcpRouteTranslator.tcpProxy(r.getRouteList(),
                                    server.server().getPort().getNumber(), vs, push)).build());
                }
            }
        }
        return out;
    }

    /** AUTO_PASSTHROUGH: the client names the cluster in its SNI; only Istio mTLS clients are let through. */
    private static List<FilterChain> autoPassthrough(MergedGateway.GatewayServer server, PushContext push,
                                                     ProxyScope scope) {
        List<FilterChain> out = new ArrayList<>();
        for (GatewayClusterBuilder.SniDnatTarget t : GatewayClusterBuilder.sniDnatTargets(server.hosts(), push, scope)) {
            String cluster = t.name();
            out.add(FilterChain.newBuilder()
                    .setFilterChainMatch(FilterChainMatch.newBuilder().addServerNames(cluster)
                            .addAllApplicationProtocols(ISTIO_MTLS_ALPNS))
                    .addFilters(EnvoyFilters.tcpProxy(cluster, cluster)).build());
        }
        return out;
    }

    /** Whether a VirtualService host falls under one of the server's hosts (namespace-restricted ones included). */
    private static boolean hostsMatch(List<String> serverHosts, VirtualService vs, String vsNamespace) {
        return !GatewayRouteBuilder.intersect(serverHosts, vs, vsNamespace).isEmpty();
    }

    /** istiod's l4SingleMatch: the match's port (if any) is the server's, its gateways (if any) name this one. */
    private static boolean l4Match(int port, List<String> gateways, MergedGateway.GatewayServer server,
                                   String vsNamespace) {
        if (port != 0 && port != server.server().getPort().getNumber()) {
            return false;
        }
        if (gateways.isEmpty()) {
            return true;
        }
        return gateways.stream().map(g -> g.contains("/") ? g : vsNamespace + "/" + g)
                .anyMatch(server.gateway()::equals);
    }

    private static FilterChainMatch sni(List<String> hosts) {
        return FilterChainMatch.newBuilder().addAllServerNames(hosts).build();
    }

    private static TransportSocket tls(MergedGateway.GatewayServer server, boolean http) {
        return TransportSocket.newBuilder().setName(EnvoyFilters.TLS_TRANSPORT_SOCKET)
                .setTypedConfig(Any.pack(GatewayTls.context(server.server().getTls(), http))).build();
    }


    /**
     * istiod's gateway connection manager: the client address is the peer's (use_remote_address),
     * client certificate details sanitized and set, the {@code istio-envoy} server header, and
     * 100-continue passed on to the upstream. The security filters run first
     * ({@link SecurityFilters#http}).
     */
    static Filter hcm(String statPrefix, String routeName, SecurityFilters security, int port) {
        HttpConnectionManager hcm = EnvoyFilters.hcm(statPrefix)
                .setUseRemoteAddress(BoolValue.of(true))
                .setForwardClientCertDetails(HttpConnectionManager.ForwardClientCertDetails.SANITIZE_SET)
                .setSetCurrentClientCertDetails(HttpConnectionManager.SetCurrentClientCertDetails.newBuilder()
                        .setSubject(BoolValue.of(true)).setCert(true).setUri(true).setDns(true))
                .setServerName(SERVER_NAME)
                .setProxy100Continue(true) // ENABLE_100_CONTINUE_HEADERS, on by default
                .setHttpProtocolOptions(Http1ProtocolOptions.getDefaultInstance())
                .setRds(EnvoyFilters.rds(routeName))
                .addAllHttpFilters(security.http(ListenerClass.GATEWAY, port))
                .addAllHttpFilters(EnvoyFilters.httpFilters())
                .build();
        return Filter.newBuilder().setName(EnvoyFilters.HTTP_CONNECTION_MANAGER).setTypedConfig(Any.pack(hcm)).build();
    }


}
