package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Message;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.CidrRange;
import io.envoyproxy.envoy.config.core.v3.TrafficDirection;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.extensions.filters.listener.http_inspector.v3.HttpInspector;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpPrefix;
import io.meshpilot.util.IpSyntaxException;
import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A sidecar's outbound listeners (istiod's buildSidecarOutboundListeners and the virtual
 * outbound listener), built per egress listener of the Sidecar (see {@link #outbound}).
 * Unless an egress listener has a {@code bind} or captureMode NONE (see {@link #atBind}), none
 * binds a port: iptables sends outbound connections to
 * {@code virtualOutbound} (0.0.0.0:15001, use_original_dst), which hands each one to the
 * listener of its original destination, or keeps it when there is none: to
 * {@code PassthroughCluster} under ALLOW_ANY, to {@code BlackHoleCluster} under REGISTRY_ONLY
 * (connections to 15001 itself always to BlackHoleCluster).
 * <ul>
 * <li>HTTP-family service ports (HTTP, HTTP2, gRPC, gRPC-Web): one {@code 0.0.0.0_<port>}
 * listener per port, shared by every service on it, with an HttpConnectionManager taking the
 * route configuration {@code "<port>"} over ADS.</li>
 * <li>Other TCP protocols (TCP, TLS, HTTPS, Mongo, Redis, MySQL, ...): {@code <vip>_<port>} with
 * tcp_proxy to {@code outbound|<port>||<host>}; a service without a VIP gets
 * {@code 0.0.0.0_<port>}, unless an HTTP or another listener already holds it (then the oldest
 * service wins, as istiod, and the others are logged).</li>
 * <li>Non-HTTP ports of headless Kubernetes Services: {@code <endpoint ip>_<port>} per endpoint
 * (not the proxy's own), tcp_proxy to the service's original-destination cluster.</li>
 * <li>Ports of unknown protocol (istiod's sniffing): {@code 0.0.0.0_<port>} with TLS and HTTP
 * inspectors; per service with a VIP one chain for HTTP (ALPN http/1.1 or h2c, to the RDS
 * route {@code "<port>"}) and one for the rest (tcp_proxy), both matched on the VIP; the
 * catch-all pair goes to RDS and to the VIP-less service (or the pass-through cluster).</li>
 * </ul>
 * UDP ports get no listener; ports equal to the capture ports (15001, 15006) are skipped so
 * addresses stay unique.
 */
public final class SidecarOutboundListenerBuilder {
    private static final System.Logger LOG = System.getLogger(SidecarOutboundListenerBuilder.class.getName());
    static final String CATCHALL_TCP_CHAIN = "virtualOutbound-catchall-tcp";
    static final String BLACKHOLE_CHAIN = "virtualOutbound-blackhole";
    static final String PASSTHROUGH_CHAIN = "PassthroughFilterChain";
    /** istiod's actualLocalHosts for IPv4: where a listener binding its own socket listens without a bind. */
    static final String LOCALHOST = "127.0.0.1";

    private SidecarOutboundListenerBuilder() {
    }

    /** The cluster unknown destinations go to under the proxy's outbound traffic policy. */
    static String egressCluster(Proxy proxy, PushContext push, ProxyScope scope) {
        return EnvoyFilters.allowAny(push.mesh(), scope, proxy) ? EnvoyFilters.PASSTHROUGH_CLUSTER
                : EnvoyFilters.BLACKHOLE_CLUSTER;
    }

    public static Listener virtualOutbound(Proxy proxy, PushContext push, ProxyScope scope) {
        int capture = EnvoyFilters.outboundCapturePort(push.mesh());
        String egress = egressCluster(proxy, push, scope);
        return Listener.newBuilder().setName(EnvoyFilters.VIRTUAL_OUTBOUND)
                .setAddress(EnvoyFilters.address(EnvoyFilters.WILDCARD, capture))
                .setUseOriginalDst(BoolValue.of(true))
                .setTrafficDirection(TrafficDirection.OUTBOUND)
                .addFilterChains(FilterChain.newBuilder().setName(BLACKHOLE_CHAIN)
                        .setFilterChainMatch(FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(capture)))
                        .addFilters(EnvoyFilters.tcpProxy(EnvoyFilters.BLACKHOLE_CLUSTER, EnvoyFilters.BLACKHOLE_CLUSTER)))
                .addFilterChains(FilterChain.newBuilder().setName(CATCHALL_TCP_CHAIN)
                        .addFilters(EnvoyFilters.tcpProxy(egress, egress)))
                .build();
    }

    /** A service port seen from this proxy, with the service's VIP (null without one). */
    private record Target(Service service, Port port, String vip) {
        String cluster() {
            return ClusterNames.outbound(port.port(), null, service.hostname());
        }
    }

    /**
     * istiod's outboundListenerConflict: a TCP service that loses its listener to the TCP
     * service already there (the oldest keeps it), keyed by listener name.
     */
    private static void reportTcpConflict(Proxy proxy, PushContext push, String listener, Target kept, Target rejected) {
        push.addMetric(PushMetric.CONFLICT_OUTBOUND_TCP_OVER_TCP, listener, proxy.id(),
                "Listener=" + listener + " Accepted=" + kept.port().protocol() + " Rejected="
                        + rejected.port().protocol() + " (" + rejected.service().hostname() + ")");
    }

    /**
     * The per-service-port listeners, ordered by name: those of each egress listener of the
     * scope in the Sidecar's order. As istiod's buildSidecarOutboundListeners locks the entries
     * the listeners with a port made, a later listener (the catch-all) adds nothing at an
     * address and port one of them holds.
     */
    public static List<Listener> outbound(Proxy proxy, PushContext push, ProxyScope scope) {
        Map<String, Listener> listeners = new TreeMap<>();
        for (ProxyScope.EgressListener egress : scope.egress()) {
            forEgressListener(proxy, push, scope, egress).forEach(listeners::putIfAbsent);
        }
        return List.copyOf(listeners.values());
    }

    /**
     * The listeners of one egress listener by name. A listener with a port builds every
     * imported service on that port with the port's protocol (istiod's listenPort); the
     * catch-all builds every port of every imported service.
     */
    private static Map<String, Listener> forEgressListener(Proxy proxy, PushContext push, ProxyScope scope,
                                                           ProxyScope.EgressListener listener) {
        if (listener.port() != null && listener.port().protocol() == Protocol.HTTP_PROXY) {
            return Map.of(); // istiod's generic egress HTTP proxy: not built, reported by UnappliedConfig
        }
        List<Service> services = new ArrayList<>(push.services(scope, listener));
        services.sort(Comparator.comparing((Service s) -> s.creationTime() == null ? Instant.EPOCH : s.creationTime())
                .thenComparing(Service::hostname));
        // istiod: a bind, else 127.0.0.1 for a listener binding its own socket, replaces the VIPs and 0.0.0.0
        String bind = listener.bind().isEmpty() && listener.bindsToPort() ? LOCALHOST : listener.bind();
        if (!bind.isEmpty()) {
            return atBind(proxy, push, scope, listener, bind, services);
        }
        MeshConfig mesh = push.mesh();
        int out = EnvoyFilters.outboundCapturePort(mesh);
        int in = EnvoyFilters.inboundCapturePort(mesh);
        TreeSet<Integer> httpPorts = new TreeSet<>();
        Map<Integer, List<Target>> autoPorts = new TreeMap<>();
        Map<String, Target> tcpByVip = new TreeMap<>();
        Map<Integer, Target> tcpWildcard = new TreeMap<>();
        Map<Integer, List<Target>> tlsWildcard = new TreeMap<>();
        for (Service s : services) {
            String vip = vip(s, proxy);
            for (Port p : listener.port() == null ? s.ports() : List.of(listener.port())) {
                int n = p.port();
                if (n == out || n == in || p.protocol() == Protocol.UDP) {
                    continue;
                }
                Target t = new Target(s, p, vip);
                if (p.protocol().isHttp()) {
                    httpPorts.add(n);
                } else if (vip == null && headlessKubernetes(s)) {
                    // istiod: a headless Service's non-HTTP ports get a listener per endpoint IP,
                    // the address its clients connect to (they resolve the pods themselves)
                    for (String ip : endpointIps(s, p, push, proxy)) {
                        tcpByVip.putIfAbsent(ip + "_" + n, new Target(s, p, ip));
                    }
                } else if (p.protocol() == Protocol.UNSUPPORTED) {
                    autoPorts.computeIfAbsent(n, k -> new ArrayList<>()).add(t);
                } else if (vip != null) {
                    Target old = tcpByVip.putIfAbsent(vip + "_" + n, t);
                    if (old != null && !old.service().hostname().equals(s.hostname())) {
                        LOG.log(Level.WARNING, "outbound listener " + vip + "_" + n + ": " + s.hostname()
                                + " conflicts with " + old.service().hostname() + " proxy=" + proxy.id());
                        reportTcpConflict(proxy, push, vip + "_" + n, old, t);
                    }
                } else if (p.protocol() == Protocol.TLS || p.protocol() == Protocol.HTTPS) {
                    tlsWildcard.computeIfAbsent(n, k -> new ArrayList<>()).add(t); // told apart by SNI
                } else {
                    Target old = tcpWildcard.putIfAbsent(n, t);
                    if (old != null && !old.service().hostname().equals(s.hostname())) {
                        reportTcpConflict(proxy, push, EnvoyFilters.WILDCARD + "_" + n, old, t);
                    }
                }
            }
        }
        Map<String, Listener> listeners = new TreeMap<>();
        for (int port : httpPorts) {
            String name = EnvoyFilters.WILDCARD + "_" + port;
            listeners.put(name, listener(name, EnvoyFilters.WILDCARD, port, List.of(FilterChain.newBuilder()
                    .addFilters(EnvoyFilters.rdsHcm("outbound_" + name, String.valueOf(port))).build()), List.of()));
        }
        String egress = egressCluster(proxy, push, scope);
        autoPorts.forEach((port, targets) -> {
            String name = EnvoyFilters.WILDCARD + "_" + port;
            if (httpPorts.contains(port)) {
                LOG.log(Level.DEBUG, "port " + port + " of unknown protocol served by the HTTP listener " + name);
                return;
            }
            listeners.put(name, sniffing(name, port, targets, tcpWildcard.get(port), egress));
        });
        tcpWildcard.forEach((port, t) -> {
            String name = EnvoyFilters.WILDCARD + "_" + port;
            if (listeners.containsKey(name)) {
                if (!autoPorts.containsKey(port)) {
                    LOG.log(Level.WARNING, "outbound listener " + name + ": TCP service " + t.service().hostname()
                            + " without a VIP conflicts with an HTTP listener proxy=" + proxy.id());
                }
                return;
            }
            listeners.put(name, tcpListener(name, EnvoyFilters.WILDCARD, t, proxy, push, scope));
        });
        tcpByVip.forEach((name, t) -> listeners.put(name, tcpListener(name, t.vip(), t, proxy, push, scope)));
        tlsWildcard.forEach((port, targets) -> {
            String name = EnvoyFilters.WILDCARD + "_" + port;
            if (listeners.containsKey(name)) {
                LOG.log(Level.WARNING, "outbound listener " + name + ": TLS services without a VIP "
                        + targets.stream().map(t -> t.service().hostname()).toList()
                        + " conflict with another listener on the port proxy=" + proxy.id());
                return;
            }
            List<FilterChain> chains = SidecarTcpRoutes.wildcardTlsChains(targets.stream()
                    .map(t -> Map.entry(t.service(), t.port())).toList(), proxy, push, scope, egress);
            listeners.put(name, listener(name, EnvoyFilters.WILDCARD, port, chains, List.of(ListenerFilter.newBuilder()
                    .setName(EnvoyFilters.TLS_INSPECTOR).setTypedConfig(Any.pack(TlsInspector.getDefaultInstance()))
                    .build())));
        });
        return listeners;
    }

    /**
     * The listeners of an egress listener with an address of its own (istiod's
     * buildSidecarOutboundListener with a bind): one per port at {@code bind}, a real socket
     * when the listener binds its port. The first service of a port decides: an HTTP port
     * shares route {@code "<port>"} (a unix socket's route is named by its address), a port of
     * unknown protocol is sniffed for that service alone (route {@code "<host>:<port>"}), any
     * other TCP protocol is that service's tcp_proxy; later services on the port are left out.
     */
    private static Map<String, Listener> atBind(Proxy proxy, PushContext push, ProxyScope scope,
                                                ProxyScope.EgressListener listener, String bind,
                                                List<Service> services) {
        boolean unix = bind.startsWith(ProxyScope.EgressListener.UNIX_PREFIX);
        Map<String, Target> firstByName = new TreeMap<>();
        for (Service s : services) {
            for (Port p : listener.port() == null ? s.ports() : List.of(listener.port())) {
                if (p.protocol() == Protocol.UDP || unix && !p.protocol().isHttp()) {
                    continue; // a unix socket carries HTTP only here: UnappliedConfig reports the others
                }
                String name = bind + "_" + p.port();
                Target kept = firstByName.putIfAbsent(name, new Target(s, p, bind));
                if (kept != null && !kept.port().protocol().isHttp()) {
                    LOG.log(Level.WARNING, "outbound listener " + name + ": " + s.hostname() + " conflicts with "
                            + kept.service().hostname() + " proxy=" + proxy.id());
                }
            }
        }
        Map<String, Listener> listeners = new TreeMap<>();
        boolean bound = listener.bindsToPort();
        firstByName.forEach((name, t) -> {
            int port = t.port().port();
            Protocol protocol = t.port().protocol();
            if (protocol.isHttp()) {
                Filter rds = EnvoyFilters.rdsHcm("outbound_" + name, unix ? bind : String.valueOf(port));
                listeners.put(name, listener(name, bind, port, bound, List.of(FilterChain.newBuilder()
                        .addFilters(rds).build()), List.of()));
            } else if (protocol == Protocol.UNSUPPORTED) {
                Filter rds = EnvoyFilters.rdsHcm("outbound_" + name, t.service().hostname() + ":" + port);
                listeners.put(name, listener(name, bind, port, bound, List.of(
                        FilterChain.newBuilder().setFilterChainMatch(FilterChainMatch.newBuilder()
                                .addAllApplicationProtocols(SidecarInboundListenerBuilder.PLAINTEXT_HTTP_ALPNS))
                                .addFilters(rds).build(),
                        FilterChain.newBuilder().addFilters(EnvoyFilters.tcpProxy(t.cluster(), t.cluster())).build()),
                        List.of(inspector(EnvoyFilters.TLS_INSPECTOR, TlsInspector.getDefaultInstance()),
                                inspector(EnvoyFilters.HTTP_INSPECTOR, HttpInspector.getDefaultInstance()))));
            } else {
                listeners.put(name, tcpListener(name, bind, bound, t, proxy, push, scope));
            }
        });
        return listeners;
    }

    private static ListenerFilter inspector(String name, Message config) {
        return ListenerFilter.newBuilder().setName(name).setTypedConfig(Any.pack(config)).build();
    }

    private static Listener sniffing(String name, int port, List<Target> targets, Target tcpWithoutVip,
                                     String egress) {
        List<FilterChain> chains = new ArrayList<>();
        Target wildcard = tcpWithoutVip;
        Map<String, Target> byVip = new LinkedHashMap<>();
        for (Target t : targets) {
            if (t.vip() == null) {
                wildcard = wildcard == null ? t : wildcard;
            } else {
                byVip.putIfAbsent(t.vip(), t);
            }
        }
        Filter rds = EnvoyFilters.rdsHcm("outbound_" + name, String.valueOf(port));
        byVip.forEach((vip, t) -> {
            CidrRange cidr = cidrOf(vip);
            if (cidr == null) {
                LOG.log(Level.WARNING, "outbound listener " + name + ": VIP \"" + vip + "\" of " + t.service().hostname()
                        + " is not an IP address or CIDR block; it gets no filter chain of its own");
                return;
            }
            chains.add(FilterChain.newBuilder().setFilterChainMatch(FilterChainMatch.newBuilder().addPrefixRanges(cidr)
                    .addAllApplicationProtocols(SidecarInboundListenerBuilder.PLAINTEXT_HTTP_ALPNS)).addFilters(rds).build());
            chains.add(FilterChain.newBuilder().setFilterChainMatch(FilterChainMatch.newBuilder().addPrefixRanges(cidr))
                    .addFilters(EnvoyFilters.tcpProxy(t.cluster(), t.cluster())).build());
        });
        chains.add(FilterChain.newBuilder().setFilterChainMatch(FilterChainMatch.newBuilder()
                .addAllApplicationProtocols(SidecarInboundListenerBuilder.PLAINTEXT_HTTP_ALPNS)).addFilters(rds).build());
        String fallback = wildcard == null ? egress : wildcard.cluster();
        chains.add(FilterChain.newBuilder().setName(wildcard == null ? PASSTHROUGH_CHAIN : "")
                .addFilters(EnvoyFilters.tcpProxy(fallback, fallback)).build());
        return listener(name, EnvoyFilters.WILDCARD, port, chains, List.of(
                ListenerFilter.newBuilder().setName(EnvoyFilters.TLS_INSPECTOR)
                        .setTypedConfig(Any.pack(TlsInspector.getDefaultInstance())).build(),
                ListenerFilter.newBuilder().setName(EnvoyFilters.HTTP_INSPECTOR)
                        .setTypedConfig(Any.pack(HttpInspector.getDefaultInstance())).build()));
    }

    /** A TCP or TLS service port: its VirtualService's tcp/tls routes, SNI chains behind the TLS inspector. */
    private static Listener tcpListener(String name, String ip, Target t, Proxy proxy, PushContext push,
                                        ProxyScope scope) {
        return tcpListener(name, ip, false, t, proxy, push, scope);
    }

    private static Listener tcpListener(String name, String ip, boolean bound, Target t, Proxy proxy,
                                        PushContext push, ProxyScope scope) {
        List<FilterChain> chains = SidecarTcpRoutes.chains(t.service(), t.port(), proxy, push, scope);
        List<ListenerFilter> filters = chains.size() > 1
                ? List.of(inspector(EnvoyFilters.TLS_INSPECTOR, TlsInspector.getDefaultInstance())) : List.of();
        return listener(name, ip, t.port().port(), bound, chains, filters);
    }

    private static Listener listener(String name, String ip, int port, List<FilterChain> chains,
                                     List<ListenerFilter> filters) {
        return listener(name, ip, port, false, chains, filters);
    }

    /**
     * @param bound whether the listener binds a socket of its own (captureMode NONE, unix
     *              sockets) instead of taking the connections virtualOutbound hands over
     */
    private static Listener listener(String name, String address, int port, boolean bound, List<FilterChain> chains,
                                     List<ListenerFilter> filters) {
        Listener.Builder l = Listener.newBuilder().setName(name).setAddress(EnvoyFilters.bindAddress(address, port))
                .setTrafficDirection(TrafficDirection.OUTBOUND)
                .addAllFilterChains(chains)
                .addAllListenerFilters(filters);
        if (!bound) {
            l.setBindToPort(BoolValue.of(false));
        }
        if (!filters.isEmpty()) {
            l.setContinueOnListenerFiltersTimeout(true);
        }
        return l.build();
    }

    /**
     * istiod's ConvertAddressToCidr: a CIDR block keeps its length, a single address matches
     * alone (32 or 128 bits); null when {@code vip} is neither.
     */
    static CidrRange cidrOf(String vip) {
        try {
            if (vip.indexOf('/') >= 0) {
                IpPrefix p = IpPrefix.parse(vip);
                return CidrRange.newBuilder().setAddressPrefix(vip.substring(0, vip.lastIndexOf('/')))
                        .setPrefixLen(UInt32Value.of(p.bits())).build();
            }
            return CidrRange.newBuilder().setAddressPrefix(vip)
                    .setPrefixLen(UInt32Value.of(IpAddr.parse(vip).bitLen())).build();
        } catch (IpSyntaxException e) {
            return null;
        }
    }

    static boolean headlessKubernetes(Service s) {
        return s.resolution() == Resolution.PASSTHROUGH && "Kubernetes".equals(s.registry());
    }

    /**
     * The IP endpoints of a headless service's port, sorted, without the proxy's own (its app
     * reaching itself by pod IP never passes the outbound listener, and the inbound one has it).
     */
    private static List<String> endpointIps(Service s, Port p, PushContext push, Proxy proxy) {
        var shards = push.endpoints().shards(s.hostname(), s.namespace());
        if (shards == null) {
            return List.of();
        }
        TreeSet<String> out = new TreeSet<>();
        for (var e : shards.all()) {
            if (e.servicePortName().equals(p.name()) && e.sentToProxies() && cidrOf(e.address()) != null
                    && !e.address().contains("/") && (proxy.ips().isEmpty() || !proxy.ips().get(0).equals(e.address()))) {
                out.add(e.address());
            }
        }
        return List.copyOf(out);
    }

    /** The VIP the proxy reaches {@code s} at: its cluster's, else the default address; null without one. */
    static String vip(Service s, Proxy proxy) {
        List<String> clusterVips = s.clusterVips().get(proxy.clusterId());
        if (clusterVips != null && !clusterVips.isEmpty()) {
            return clusterVips.get(0);
        }
        String a = s.defaultAddress();
        return a == null || a.isEmpty() || a.equals(Service.UNSPECIFIED_IP) ? null : a;
    }
}
