package io.meshpilot.networking.envoy;

import com.github.xds.core.v3.CidrRange;
import com.github.xds.core.v3.TypedExtensionConfig;
import com.github.xds.type.matcher.v3.IPMatcher;
import com.github.xds.type.matcher.v3.Matcher;
import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.KeepaliveSettings;
import io.envoyproxy.envoy.config.core.v3.TrafficDirection;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.listener.http_inspector.v3.HttpInspector;
import io.envoyproxy.envoy.extensions.filters.listener.original_dst.v3.OriginalDst;
import io.envoyproxy.envoy.extensions.filters.network.set_filter_state.v3.Config;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.matching.common_inputs.network.v3.ApplicationProtocolInput;
import io.envoyproxy.envoy.extensions.matching.common_inputs.network.v3.DestinationIPInput;
import io.envoyproxy.envoy.extensions.matching.common_inputs.network.v3.DestinationPortInput;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Port;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.authz.AuthorizationFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A waypoint proxy's listeners, as istiod's listener_waypoint.go buildWaypointInbound builds them
 * for a waypoint on one network:
 * <ol>
 * <li>{@code connect_terminate} (0.0.0.0:15008): HBONE termination. Istio mutual TLS 1.3
 * ({@link HboneTls}), an HTTP/2 connection manager accepting CONNECT whose one route sends the
 * tunnel to {@code main_internal}; its {@code connect_authority} filter keeps the CONNECT
 * authority (the inner destination) as the original destination of the inner connection.</li>
 * <li>{@code main_internal} (an internal listener): one chain per served service port, chosen by
 * a matcher on the destination IP (the service's VIPs) and port; HTTP ports get a connection
 * manager with the service's routes ({@link WaypointRoutes}), TCP ports a tcp_proxy (by its tcp or tls route), ports of
 * unknown protocol both behind an application-protocol match; each behind the RBAC of the
 * AuthorizationPolicies targeting the waypoint, its class or that service
 * ({@link AuthorizationFilters#forWaypoint}). Chains {@code direct-tcp} and {@code direct-http}
 * carry traffic addressed to a workload bound to the waypoint (its IP, any port, after the VIPs;
 * HTTP told apart by ALPN) to {@code encap}, behind the policies targeting the waypoint.</li>
 * <li>{@code connect_originate} (an internal listener): tcp_proxy tunnelling to the
 * {@code connect_originate} cluster with CONNECT to the original destination.</li>
 * </ol>
 */
public final class WaypointListenerBuilder {
    public static final String CONNECT_TERMINATE = "connect_terminate";
    public static final String MAIN_INTERNAL = "main_internal";
    public static final String ENCAP = "encap";
    static final int HBONE_PORT = 15008;
    /** The chains of traffic addressed to a workload (istiod's direct pod access chains), both to {@link #ENCAP}. */
    static final String DIRECT_TCP = "direct-tcp";
    static final String DIRECT_HTTP = "direct-http";

    private WaypointListenerBuilder() {
    }

    /** The listeners of a waypoint that serves no workload. */
    public static List<Listener> listeners(Proxy proxy, PushContext push) {
        return listeners(proxy, push, List.of());
    }

    /**
     * @param workloadAddresses the IPs of the workloads bound to the waypoint
     *                          ({@link io.meshpilot.model.WaypointWorkloads}), matched to the direct chains
     */
    public static List<Listener> listeners(Proxy proxy, PushContext push, List<String> workloadAddresses) {
        WaypointRoutes routes = WaypointRoutes.of(proxy, push);
        return List.of(connectTerminate(push), mainInternal(routes, workloadAddresses), HboneOrigination.listener());
    }

    // ---- connect_terminate ----------------------------------------------------------------

    static Listener connectTerminate(PushContext push) {
        Route tunnel = Route.newBuilder()
                .setMatch(RouteMatch.newBuilder().setConnectMatcher(RouteMatch.ConnectMatcher.getDefaultInstance()))
                .setRoute(RouteAction.newBuilder().setCluster(MAIN_INTERNAL)
                        .addUpgradeConfigs(RouteAction.UpgradeConfig.newBuilder().setUpgradeType("CONNECT")
                                .setConnectConfig(RouteAction.UpgradeConfig.ConnectConfig.getDefaultInstance())))
                .build();
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setStatPrefix(CONNECT_TERMINATE)
                .setRouteConfig(RouteConfiguration.newBuilder().setName("default").addVirtualHosts(
                        VirtualHost.newBuilder().setName("default").addDomains("*").addRoutes(tunnel)))
                .setForwardClientCertDetails(HttpConnectionManager.ForwardClientCertDetails.APPEND_FORWARD)
                .setSetCurrentClientCertDetails(HttpConnectionManager.SetCurrentClientCertDetails.newBuilder()
                        .setSubject(BoolValue.of(true)).setUri(true).setDns(true))
                .setUseRemoteAddress(BoolValue.of(false))
                .setStreamIdleTimeout(Duration.getDefaultInstance())
                .addUpgradeConfigs(HttpConnectionManager.UpgradeConfig.newBuilder().setUpgradeType("CONNECT"))
                // all streams of one connection share a worker: bounded for fairness; keepalive prunes dead clients
                .setHttp2ProtocolOptions(Http2ProtocolOptions.newBuilder().setAllowConnect(true)
                        .setMaxConcurrentStreams(UInt32Value.of(100))
                        .setConnectionKeepalive(KeepaliveSettings.newBuilder()
                                .setInterval(Duration.newBuilder().setSeconds(10))
                                .setTimeout(Duration.newBuilder().setSeconds(20))))
                .addHttpFilters(ConnectAuthority.httpFilter())
                .addHttpFilters(EnvoyFilters.router())
                .build();
        return Listener.newBuilder().setName(CONNECT_TERMINATE)
                .setAddress(EnvoyFilters.address(EnvoyFilters.WILDCARD, HBONE_PORT))
                .addFilterChains(FilterChain.newBuilder().setName("default")
                        .setTransportSocket(TransportSocket.newBuilder().setName(EnvoyFilters.TLS)
                                .setTypedConfig(Any.pack(HboneTls.downstream(push.mesh()))))
                        .addFilters(hcmFilter(hcm)))
                // few long-lived tunnels: balanced exactly over the workers
                .setConnectionBalanceConfig(Listener.ConnectionBalanceConfig.newBuilder()
                        .setExactBalance(Listener.ConnectionBalanceConfig.ExactBalance.getDefaultInstance()))
                .build();
    }

    // ---- main_internal ----------------------------------------------------------------------

    static Listener mainInternal(WaypointRoutes routes, List<String> workloadAddresses) {
        Proxy proxy = routes.proxy();
        List<FilterChain> chains = new ArrayList<>();
        IPMatcher.Builder vips = IPMatcher.newBuilder();
        Map<Integer, Protocol> portProtocols = new TreeMap<>();
        for (Service svc : routes.services()) {
            Map<String, Matcher.OnMatch> byPort = new TreeMap<>();
            AuthorizationFilters authz = AuthorizationFilters.forWaypoint(proxy, routes.push(), svc);
            for (Port p : svc.ports()) {
                if (p.protocol() == Protocol.UDP) {
                    continue;
                }
                String tcpName = ClusterNames.inboundVip(p.port(), "tcp", "", svc.hostname());
                String httpName = ClusterNames.inboundVip(p.port(), "http", "", svc.hostname());
                FilterChain tcp = FilterChain.newBuilder().setName(tcpName).addAllFilters(authz.customTcp())
                        .addAllFilters(authz.tcp()).addFilters(routes.tcpProxy(svc, p)).build();
                FilterChain http = FilterChain.newBuilder().setName(httpName)
                        .addFilters(hcmFilter(serviceHcm(httpName, p.port(), routes.routes(svc, p), authz))).build();
                String port = Integer.toString(p.port());
                if (p.protocol() == Protocol.UNSUPPORTED) {
                    chains.add(tcp);
                    chains.add(http);
                    byPort.put(port, nested(appProtocol(tcpName, httpName)));
                    portProtocols.put(p.port(), Protocol.UNSUPPORTED);
                } else if (p.protocol().isHttp()) {
                    chains.add(http);
                    byPort.put(port, toChain(httpName));
                    portProtocols.merge(p.port(), Protocol.HTTP, (a, b) -> a == b ? a : Protocol.UNSUPPORTED);
                } else {
                    chains.add(tcp);
                    byPort.put(port, toChain(tcpName));
                    portProtocols.merge(p.port(), Protocol.TCP, (a, b) -> a == b ? a : Protocol.UNSUPPORTED);
                }
            }
            List<String> addresses = addresses(svc, proxy);
            if (!byPort.isEmpty() && !addresses.isEmpty()) {
                IPMatcher.IPRangeMatcher.Builder range = IPMatcher.IPRangeMatcher.newBuilder()
                        .setOnMatch(nested(exactMap(input("port", DestinationPortInput.getDefaultInstance()), byPort)));
                addresses.forEach(a -> range.addRanges(cidr(a)));
                vips.addRangeMatchers(range);
            }
        }
        AuthorizationFilters direct = AuthorizationFilters.forWaypoint(proxy, routes.push(), null);
        chains.add(FilterChain.newBuilder().setName(DIRECT_TCP).addFilters(connectAuthorityNetwork())
                .addAllFilters(direct.customTcp()).addAllFilters(direct.tcp())
                .addFilters(EnvoyFilters.tcpProxy(ENCAP, ENCAP)).build());
        chains.add(FilterChain.newBuilder().setName(DIRECT_HTTP).addFilters(connectAuthorityNetwork())
                .addFilters(hcmFilter(serviceHcm(ENCAP, 0, List.of(
                        SidecarInboundListenerBuilder.defaultInboundRoute(ENCAP, "", 0)), direct))).build());
        if (!workloadAddresses.isEmpty()) {
            // after the services' VIPs, as istiod: a workload is reached on any port, its protocol sniffed
            IPMatcher.IPRangeMatcher.Builder range = IPMatcher.IPRangeMatcher.newBuilder()
                    .setOnMatch(nested(appProtocol(DIRECT_TCP, DIRECT_HTTP)));
            workloadAddresses.forEach(a -> range.addRanges(cidr(a)));
            vips.addRangeMatchers(range);
        }
        Matcher byIp = Matcher.newBuilder().setMatcherTree(Matcher.MatcherTree.newBuilder()
                .setInput(input("ip", DestinationIPInput.getDefaultInstance()))
                .setCustomMatch(TypedExtensionConfig.newBuilder().setName("ip").setTypedConfig(Any.pack(vips.build()))))
                .build();
        return Listener.newBuilder().setName(MAIN_INTERNAL)
                .setInternalListener(Listener.InternalListenerConfig.getDefaultInstance())
                .addListenerFilters(ListenerFilter.newBuilder().setName(EnvoyFilters.ORIGINAL_DST)
                        .setTypedConfig(Any.pack(OriginalDst.getDefaultInstance())))
                .addListenerFilters(httpInspector(workloadAddresses.isEmpty() ? portProtocols : Map.of()))
                .setTrafficDirection(TrafficDirection.INBOUND)
                .addAllFilterChains(chains)
                .setFilterChainMatcher(byIp)
                .build();
    }

    /**
     * The HTTP inspector, off for the ports whose protocol is known (only sniffed ports need it:
     * it would stall server-first protocols); on every port of a waypoint serving workloads (none known).
     */
    private static ListenerFilter httpInspector(Map<Integer, Protocol> portProtocols) {
        ListenerFilter.Builder f = ListenerFilter.newBuilder().setName(EnvoyFilters.HTTP_INSPECTOR)
                .setTypedConfig(Any.pack(HttpInspector.getDefaultInstance()));
        List<Integer> known = portProtocols.entrySet().stream().filter(e -> e.getValue() != Protocol.UNSUPPORTED)
                .map(Map.Entry::getKey).toList();
        if (!known.isEmpty()) {
            f.setFilterDisabled(SidecarInboundListenerBuilder.portsPredicate(known));
        }
        return f.build();
    }

    /**
     * A served service port's connection manager: its routes inline (no RDS for inbound traffic),
     * the authorization filters first (istiod's buildWaypointHTTPFilters: CUSTOM, then RBAC).
     */
    private static HttpConnectionManager serviceHcm(String cluster, int port, List<Route> routes,
                                                    AuthorizationFilters authz) {
        return EnvoyFilters.hcm(EnvoyFilters.delimited("inbound_" + EnvoyFilters.WILDCARD + "_" + port))
                .setRouteConfig(SidecarInboundListenerBuilder.inboundRoutes(cluster, port, routes))
                .addAllHttpFilters(authz.customHttp())
                .addAllHttpFilters(authz.http())
                .addAllHttpFilters(EnvoyFilters.httpFilters())
                .build();
    }

    /**
     * istiod's ConnectAuthorityNetworkFilter on the direct chains: the workload address the inner
     * connection was for becomes the original destination again, for {@code encap}'s tunnel.
     */
    private static Filter connectAuthorityNetwork() {
        Config config = Config.newBuilder().addOnNewConnection(ConnectAuthority.filterState(
                ConnectAuthority.ORIGINAL_DST_LOCAL_IP,
                "%FILTER_STATE(" + ConnectAuthority.ORIGINAL_DST_LOCAL_IP + ":PLAIN)%", "")).build();
        return Filter.newBuilder().setName(ConnectAuthority.NAME).setTypedConfig(Any.pack(config)).build();
    }

    /** The service's addresses for the proxy's cluster (its VIPs there, else its default address), sorted. */
    static List<String> addresses(Service svc, Proxy proxy) {
        TreeSet<String> out = new TreeSet<>(svc.clusterVips().getOrDefault(proxy.clusterId(), List.of()));
        if (out.isEmpty() && !svc.defaultAddress().equals(Service.UNSPECIFIED_IP)) {
            out.add(svc.defaultAddress());
        }
        if (!svc.autoAllocatedIpv4().isEmpty()) {
            out.add(svc.autoAllocatedIpv4());
        }
        return List.copyOf(out);
    }

    private static CidrRange cidr(String address) {
        return CidrRange.newBuilder().setAddressPrefix(address)
                .setPrefixLen(UInt32Value.of(address.contains(":") ? 128 : 32)).build();
    }

    // ---- matchers (istiod's core/match) -------------------------------------------------------

    private static TypedExtensionConfig input(String name, Message config) {
        return TypedExtensionConfig.newBuilder().setName(name).setTypedConfig(Any.pack(config)).build();
    }

    private static Matcher.OnMatch toChain(String chain) {
        return Matcher.OnMatch.newBuilder().setAction(TypedExtensionConfig.newBuilder().setName(chain)
                .setTypedConfig(Any.pack(StringValue.of(chain)))).build();
    }

    private static Matcher.OnMatch nested(Matcher m) {
        return Matcher.OnMatch.newBuilder().setMatcher(m).build();
    }

    private static Matcher exactMap(TypedExtensionConfig input, Map<String, Matcher.OnMatch> map) {
        return Matcher.newBuilder().setMatcherTree(Matcher.MatcherTree.newBuilder().setInput(input)
                .setExactMatchMap(Matcher.MatcherTree.MatchMap.newBuilder().putAllMap(map))).build();
    }

    /** istiod's NewAppProtocol: HTTP (h2c, http/1.1) to the HTTP chain, anything else to the TCP chain. */
    private static Matcher appProtocol(String tcpChain, String httpChain) {
        return exactMap(input("application-protocol", ApplicationProtocolInput.getDefaultInstance()),
                Map.of("'h2c'", toChain(httpChain), "'http/1.1'", toChain(httpChain))).toBuilder()
                .setOnNoMatch(toChain(tcpChain)).build();
    }

    private static Filter hcmFilter(HttpConnectionManager hcm) {
        return Filter.newBuilder().setName(EnvoyFilters.HTTP_CONNECTION_MANAGER).setTypedConfig(Any.pack(hcm)).build();
    }
}
