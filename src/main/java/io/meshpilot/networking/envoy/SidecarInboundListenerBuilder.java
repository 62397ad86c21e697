package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.TrafficDirection;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilterChainMatchPredicate;
import io.envoyproxy.envoy.config.route.v3.Decorator;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.listener.http_inspector.v3.HttpInspector;
import io.envoyproxy.envoy.extensions.filters.listener.original_dst.v3.OriginalDst;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.type.v3.Int32Range;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.networking.PeerAuthenticationPolicy;
import io.meshpilot.networking.telemetry.ListenerClass;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code virtualInbound} (0.0.0.0:15006, where iptables redirects inbound connections), as
 * istiod's listener_inbound builds it: a blackhole chain for connections to 15006 itself,
 * passthrough chains for ports no service declares (to {@code InboundPassthroughCluster}),
 * and chains per workload port (to {@code inbound|<port>||}): an HttpConnectionManager with an
 * inline route for HTTP ports, tcp_proxy for TCP ports, both (told apart by the HTTP
 * inspector's ALPN) for ports of unknown protocol. The PeerAuthentication mode of each port
 * picks the chains (istiod's filterchain_options): STRICT only mutual TLS chains, PERMISSIVE
 * mutual TLS chains matched on transport "tls" and Istio's ALPNs plus "raw_buffer" plaintext
 * chains, DISABLE plaintext only. Listener filters: original_dst, then tls_inspector and
 * http_inspector only for the ports whose chains need them. The AuthorizationPolicies of the
 * workload guard every chain but the blackhole: RBAC (and CUSTOM ext_authz) HTTP filters in the
 * connection manager before fault, CORS and the router, network RBAC before tcp_proxy.
 */
public final class SidecarInboundListenerBuilder {
    /** ALPNs istiod matches for HTTP over Istio mutual TLS, for plaintext HTTP, and for any Istio mTLS. */
    static final List<String> MTLS_HTTP_ALPNS = List.of("istio-http/1.0", "istio-http/1.1", "istio-h2");
    static final List<String> PLAINTEXT_HTTP_ALPNS = List.of("http/1.1", "h2c");
    static final List<String> ALL_ISTIO_MTLS_ALPNS = List.of("istio", "istio-peer-exchange", "istio-http/1.0",
            "istio-http/1.1", "istio-h2");
    static final List<String> MTLS_TCP_ALPNS = List.of("istio-peer-exchange", "istio");
    static final String CATCHALL_HTTP_CHAIN = "virtualInbound-catchall-http";
    static final String BLACKHOLE_CHAIN = "virtualInbound-blackhole";

    private SidecarInboundListenerBuilder() {
    }

    /** How a chain matches and what it runs (istiod's FilterChainMatchOptions). */
    record Option(List<String> alpn, String transport, boolean http, boolean tls) {
    }

    enum ListenerProtocol { HTTP, TCP, AUTO }

    /** istiod's getFilterChainMatchOptions (no pre-existing TLS chain). */
    static List<Option> options(Mode mode, ListenerProtocol protocol) {
        String tls = EnvoyFilters.TLS;
        String raw = EnvoyFilters.RAW_BUFFER;
        return switch (protocol) {
            case HTTP -> switch (mode) {
                case STRICT -> List.of(new Option(List.of(), tls, true, true));
                case PERMISSIVE -> List.of(new Option(ALL_ISTIO_MTLS_ALPNS, tls, true, true),
                        new Option(List.of(), raw, true, false));
                default -> List.of(new Option(List.of(), raw, true, false));
            };
            case AUTO -> switch (mode) {
                case STRICT -> List.of(new Option(MTLS_HTTP_ALPNS, tls, true, true),
                        new Option(List.of(), tls, false, true));
                case PERMISSIVE -> List.of(new Option(MTLS_HTTP_ALPNS, tls, true, true),
                        new Option(PLAINTEXT_HTTP_ALPNS, raw, true, false),
                        new Option(MTLS_TCP_ALPNS, tls, false, true),
                        new Option(List.of(), raw, false, false),
                        new Option(List.of(), tls, false, false));
                default -> List.of(new Option(PLAINTEXT_HTTP_ALPNS, raw, true, false),
                        new Option(List.of(), raw, false, false));
            };
            case TCP -> switch (mode) {
                case STRICT -> List.of(new Option(List.of(), tls, false, true));
                case PERMISSIVE -> List.of(new Option(ALL_ISTIO_MTLS_ALPNS, tls, false, true),
                        new Option(List.of(), raw, false, false),
                        new Option(List.of(), tls, false, false));
                default -> List.of(new Option(List.of(), raw, false, false));
            };
        };
    }

    static ListenerProtocol listenerProtocol(Protocol p) {
        if (p.isHttp()) {
            return ListenerProtocol.HTTP;
        }
        return p == Protocol.UNSUPPORTED ? ListenerProtocol.AUTO : ListenerProtocol.TCP;
    }

    /**
     * What one group of chains serves: its port (0: any), cluster, service port for naming, and
     * the address its name carries (istiod's getListenerName(bind, port)).
     */
    private record ChainConfig(int targetPort, int servicePort, String hostname, Protocol protocol,
                               String cluster, boolean passthrough, String address) {
        ChainConfig(InboundPorts.InboundPort p) {
            this(p.targetPort(), p.servicePort().port(), p.hostname(), p.servicePort().protocol(),
                    SidecarClusterBuilder.inboundName(p.targetPort()), false, p.address());
        }

        String name(boolean http) {
            if (passthrough) {
                return http ? CATCHALL_HTTP_CHAIN : EnvoyFilters.VIRTUAL_INBOUND;
            }
            return address + "_" + targetPort;
        }

        String httpStatPrefix() {
            return EnvoyFilters.delimited(passthrough ? cluster : "inbound_" + name(true));
        }
    }

    /**
     * What the inbound chains of a proxy read: the mesh, its inbound capture port, the proxy's
     * PeerAuthentication and its security filters.
     */
    private record Inputs(MeshConfig mesh, int capture, PeerAuthenticationPolicy policy, SecurityFilters security) {
        static Inputs of(Proxy proxy, PushContext push) {
            return new Inputs(push.mesh(), EnvoyFilters.inboundCapturePort(push.mesh()),
                    PeerAuthenticationPolicy.forProxy(push.peerAuthentications(), push.rootNamespace(), proxy),
                    SecurityFilters.forProxy(proxy, push));
        }
    }

    public static Listener virtualInbound(Proxy proxy, PushContext push) {
        Inputs in = Inputs.of(proxy, push);
        MeshConfig mesh = in.mesh();
        int capture = in.capture();
        PeerAuthenticationPolicy policy = in.policy();
        SecurityFilters security = in.security();
        List<FilterChain> chains = new ArrayList<>();
        chains.add(FilterChain.newBuilder().setName(BLACKHOLE_CHAIN)
                .setFilterChainMatch(FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(capture)))
                .addFilters(EnvoyFilters.tcpProxy(EnvoyFilters.BLACKHOLE_CLUSTER, EnvoyFilters.BLACKHOLE_CLUSTER))
                .build());
        List<InboundPorts.InboundPort> ports = InboundPorts.of(proxy, push).stream()
                .filter(p -> p.targetPort() != capture).toList();
        Set<Integer> servicePorts = new HashSet<>();
        ports.forEach(p -> servicePorts.add(p.targetPort()));
        // passthrough: the workload's mode on any port, and port-level modes of undeclared ports
        Map<Integer, Mode> passthrough = new TreeMap<>();
        passthrough.put(0, policy.mode());
        policy.ports().forEach((port, mode) -> {
            if (!servicePorts.contains(port) && port != capture) {
                passthrough.put(port, mode);
            }
        });
        passthrough.forEach((port, mode) -> chains.addAll(chains(new ChainConfig(port, 0, "", Protocol.UNSUPPORTED,
                EnvoyFilters.INBOUND_PASSTHROUGH_CLUSTER, true, EnvoyFilters.WILDCARD), mode, mesh, security)));
        for (InboundPorts.InboundPort p : ports) {
            if (!p.bound()) {
                chains.addAll(chains(new ChainConfig(p), policy.mode(p.targetPort()), mesh, security));
            }
        }
        return inboundListener(EnvoyFilters.VIRTUAL_INBOUND, EnvoyFilters.WILDCARD, capture, true, chains, mesh);
    }

    /**
     * The Sidecar ingress ports with captureMode NONE (istiod's inboundCustomListener): each a
     * listener {@code <bind>_<port>} binding {@code <bind>:<port>} itself (0.0.0.0 without a
     * bind), with the chains virtualInbound would have had for it and no original_dst, by port.
     */
    public static List<Listener> boundInbound(Proxy proxy, PushContext push) {
        Inputs in = Inputs.of(proxy, push);
        List<Listener> out = new ArrayList<>();
        for (InboundPorts.InboundPort p : InboundPorts.of(proxy, push)) {
            if (p.bound() && p.targetPort() != in.capture()) {
                ChainConfig cc = new ChainConfig(p);
                out.add(inboundListener(cc.name(false), p.address(), p.targetPort(), false,
                        chains(cc, in.policy().mode(p.targetPort()), in.mesh(), in.security()), in.mesh()));
            }
        }
        return out;
    }

    /**
     * istiod's buildInboundListener: a redirected listener (virtualInbound) recovers the
     * original destination; one binding its own socket already has it.
     */
    private static Listener inboundListener(String name, String address, int port, boolean redirected,
                                            List<FilterChain> chains, MeshConfig mesh) {
        Listener.Builder l = Listener.newBuilder().setName(name)
                .setAddress(EnvoyFilters.address(address, port))
                .setTrafficDirection(TrafficDirection.INBOUND)
                .setContinueOnListenerFiltersTimeout(true)
                .addAllFilterChains(chains)
                .addAllListenerFilters(listenerFilters(chains, redirected));
        if (mesh.hasProtocolDetectionTimeout()) {
            l.setListenerFiltersTimeout(mesh.getProtocolDetectionTimeout());
        }
        return l.build();
    }

    private static List<FilterChain> chains(ChainConfig cc, Mode mode, MeshConfig mesh, SecurityFilters security) {
        List<FilterChain> out = new ArrayList<>();
        for (Option o : options(mode, listenerProtocol(cc.protocol()))) {
            FilterChainMatch.Builder match = FilterChainMatch.newBuilder().addAllApplicationProtocols(o.alpn())
                    .setTransportProtocol(o.transport());
            if (cc.targetPort() > 0) {
                match.setDestinationPort(UInt32Value.of(cc.targetPort()));
            }
            FilterChain.Builder chain = FilterChain.newBuilder().setName(cc.name(o.http())).setFilterChainMatch(match)
                    .addAllFilters(o.http() ? List.of(httpFilter(cc, security)) : tcpFilters(cc, security));
            if (o.tls()) {
                chain.setTransportSocket(TransportSocket.newBuilder().setName(EnvoyFilters.TLS_TRANSPORT_SOCKET)
                        .setTypedConfig(Any.pack(InboundTls.context(o.http(), mesh))));
            }
            out.add(chain.build());
        }
        return out;
    }

    /**
     * istiod's inbound HCM: an inline route (no RDS) sending everything to the chain's
     * cluster without a timeout, client certificate details forwarded (APPEND_FORWARD, with
     * subject, URI and DNS of the current one), HTTP/2 options on HTTP/2 and gRPC ports; the
     * security filters first ({@link SecurityFilters#http}).
     */
    private static Filter httpFilter(ChainConfig cc, SecurityFilters security) {
        RouteConfiguration routes = inboundRoutes(cc.cluster(), cc.servicePort(),
                List.of(defaultInboundRoute(cc.cluster(), cc.passthrough() ? "" : cc.hostname(), cc.servicePort())));
        HttpConnectionManager.Builder hcm = EnvoyFilters.hcm(cc.httpStatPrefix())
                .setRouteConfig(routes)
                .setForwardClientCertDetails(HttpConnectionManager.ForwardClientCertDetails.APPEND_FORWARD)
                .setSetCurrentClientCertDetails(HttpConnectionManager.SetCurrentClientCertDetails.newBuilder()
                        .setSubject(BoolValue.of(true)).setUri(true).setDns(true))
                .addAllHttpFilters(security.http(ListenerClass.SIDECAR_INBOUND, cc.targetPort()))
                .addAllHttpFilters(EnvoyFilters.httpFilters()); // istiod gives inbound HCMs fault and CORS too
        Protocol p = cc.protocol();
        if (p == Protocol.HTTP2 || p == Protocol.GRPC || p == Protocol.GRPC_WEB) {
            hcm.setHttp2ProtocolOptions(Http2ProtocolOptions.getDefaultInstance());
        }
        return Filter.newBuilder().setName(EnvoyFilters.HTTP_CONNECTION_MANAGER).setTypedConfig(Any.pack(hcm.build()))
                .build();
    }

    /**
     * istiod's inbound route configuration (buildSidecarInboundHTTPRouteConfig): named for the
     * chain's cluster, one virtual host {@code inbound|http|<port>} for every domain, clusters not validated.
     */
    static RouteConfiguration inboundRoutes(String cluster, int servicePort, List<Route> routes) {
        return RouteConfiguration.newBuilder().setName(cluster).setValidateClusters(BoolValue.of(false))
                .addVirtualHosts(VirtualHost.newBuilder().setName("inbound|http|" + servicePort).addDomains("*")
                        .addAllRoutes(routes))
                .build();
    }

    /** istiod's default inbound route: everything to {@code cluster}, no timeout, decorated {@code host:port/*}. */
    static Route defaultInboundRoute(String cluster, String hostname, int servicePort) {
        return Route.newBuilder().setName("default")
                .setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setDecorator(Decorator.newBuilder().setOperation(hostname + ":" + servicePort + "/*"))
                .setRoute(RouteAction.newBuilder().setCluster(cluster)
                        .setTimeout(Duration.getDefaultInstance())
                        .setMaxStreamDuration(RouteAction.MaxStreamDuration.newBuilder()
                                .setMaxStreamDuration(Duration.getDefaultInstance())
                                .setGrpcTimeoutHeaderMax(Duration.getDefaultInstance())))
                .build();
    }

    /** A TCP chain's filters: CUSTOM (gRPC ext_authz), then network RBAC, then tcp_proxy (istiod's order). */
    private static List<Filter> tcpFilters(ChainConfig cc, SecurityFilters security) {
        List<Filter> out = new ArrayList<>(security.network(ListenerClass.SIDECAR_INBOUND, cc.targetPort()));
        out.add(EnvoyFilters.tcpProxy(cc.cluster(), cc.cluster()));
        return out;
    }

    /**
     * istiod's populateListenerFilters: original_dst for a redirected listener, then the TLS
     * inspector when a chain matches transport "tls" and the HTTP inspector when a chain
     * matches a plaintext HTTP ALPN, each disabled on the ports that do not need it.
     */
    static List<ListenerFilter> listenerFilters(List<FilterChain> chains, boolean redirected) {
        List<ListenerFilter> out = new ArrayList<>();
        if (redirected) {
            out.add(ListenerFilter.newBuilder().setName(EnvoyFilters.ORIGINAL_DST)
                    .setTypedConfig(Any.pack(OriginalDst.getDefaultInstance())).build());
        }
        Map<Integer, boolean[]> inspectors = new TreeMap<>(); // port -> {tls, http}
        for (FilterChain fc : chains) {
            int port = fc.getFilterChainMatch().getDestinationPort().getValue();
            boolean[] need = inspectors.computeIfAbsent(port, p -> new boolean[2]);
            need[0] |= EnvoyFilters.TLS.equals(fc.getFilterChainMatch().getTransportProtocol());
            for (String alpn : fc.getFilterChainMatch().getApplicationProtocolsList()) {
                need[1] |= alpn.equals("http/1.1") || alpn.equals("h2c");
            }
        }
        if (inspectors.values().stream().anyMatch(n -> n[0])) {
            ListenerFilter.Builder f = ListenerFilter.newBuilder().setName(EnvoyFilters.TLS_INSPECTOR)
                    .setTypedConfig(Any.pack(TlsInspector.getDefaultInstance()));
            boolean byDefault = inspectors.getOrDefault(0, new boolean[2])[0];
            List<Integer> ports = inspectors.entrySet().stream()
                    .filter(e -> e.getKey() != 0 && e.getValue()[0] != byDefault).map(Map.Entry::getKey).toList();
            if (!ports.isEmpty()) {
                // enabled by default: switch it off where no chain needs it; else on only where one does
                f.setFilterDisabled(byDefault ? portsPredicate(ports) : ListenerFilterChainMatchPredicate.newBuilder()
                        .setNotMatch(portsPredicate(ports)).build());
            }
            out.add(f.build());
        }
        if (inspectors.values().stream().anyMatch(n -> n[1])) {
            ListenerFilter.Builder f = ListenerFilter.newBuilder().setName(EnvoyFilters.HTTP_INSPECTOR)
                    .setTypedConfig(Any.pack(HttpInspector.getDefaultInstance()));
            List<Integer> off = inspectors.entrySet().stream().filter(e -> !e.getValue()[1]).map(Map.Entry::getKey)
                    .toList();
            if (!off.isEmpty()) {
                f.setFilterDisabled(portsPredicate(off));
            }
            out.add(f.build());
        }
        return out;
    }

    /** Matches a connection to any of {@code ports} (half-open ranges [p, p+1), as istiod). */
    static ListenerFilterChainMatchPredicate portsPredicate(List<Integer> ports) {
        List<ListenerFilterChainMatchPredicate> rules = ports.stream().map(p -> ListenerFilterChainMatchPredicate
                .newBuilder().setDestinationPortRange(Int32Range.newBuilder().setStart(p).setEnd(p + 1)).build())
                .toList();
        if (rules.size() == 1) {
            return rules.get(0);
        }
        return ListenerFilterChainMatchPredicate.newBuilder().setOrMatch(
                ListenerFilterChainMatchPredicate.MatchSet.newBuilder().addAllRules(rules)).build();
    }
}
