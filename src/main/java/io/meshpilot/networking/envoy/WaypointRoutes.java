package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.L4MatchAttributes;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSMatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Port;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The services one waypoint proxy serves and their HTTP routes (istiod's findWaypointResources,
 * buildWaypointInboundHTTPRouteConfig and getWaypointDestinationCluster). A served service's
 * routes come from the mesh VirtualServices (Gateway API routes with the Service as parent
 * included) of its own or the waypoint's namespace, translated as for sidecars, merged in order;
 * matches on {@code sourceLabels} are dropped (ambient has no source labels). A destination the
 * waypoint serves goes to its {@code inbound-vip|<port>|<http|tcp>[/<subset>]|<host>} cluster,
 * any other to its outbound cluster. Without routes, a service port goes to its own
 * {@code inbound-vip} cluster. TCP ports take their VirtualService's {@code tls} or {@code tcp} route.
 */
final class WaypointRoutes {
    private final Proxy proxy;
    private final PushContext push;
    private final ProxyScope scope;
    private final Map<String, Service> served;

    private WaypointRoutes(Proxy proxy, PushContext push, List<Service> served) {
        this.proxy = proxy;
        this.push = push;
        this.scope = push.scope(proxy);
        Map<String, Service> byHost = new LinkedHashMap<>();
        served.forEach(s -> byHost.putIfAbsent(s.hostname(), s));
        this.served = byHost;
    }

    static WaypointRoutes of(Proxy proxy, PushContext push) {
        return new WaypointRoutes(proxy, push, push.waypointServices().servedBy(proxy));
    }

    /** The served services, oldest first. */
    List<Service> services() {
        return List.copyOf(served.values());
    }

    PushContext push() {
        return push;
    }

    Proxy proxy() {
        return proxy;
    }

    /** istiod's portToSubset: {@code http} for HTTP and sniffed ports (and unknown ones), else {@code tcp}. */
    static String protocolOf(Service svc, int port) {
        Optional<Port> p = svc == null ? Optional.empty() : svc.port(port);
        return p.isEmpty() || p.get().protocol().isHttp() || p.get().protocol() == Protocol.UNSUPPORTED ? "http" : "tcp";
    }

    /** The routes of a served service's HTTP port, their clusters the waypoint's. */
    List<Route> routes(Service svc, Port port) {
        HTTPRetry meshRetry = push.mesh().hasDefaultHttpRetryPolicy() ? push.mesh().getDefaultHttpRetryPolicy() : null;
        List<Route> out = new ArrayList<>();
        for (Config vs : virtualServices(svc)) {
            VirtualService spec = (VirtualService) vs.spec();
            // no source labels in ambient: an empty label set drops every match that names some
            out.addAll(HttpRouteTranslator.routes(spec.getHttpList(), new HttpRouteTranslator.Context(port.port(),
                    vs.namespace(), vs.name(), proxy.namespace(), Map.of(), push.domainSuffix(), meshRetry,
                    PushContext.MESH_GATEWAY, push).forVirtualService(vs)));
        }
        if (out.isEmpty()) {
            String cluster = ClusterNames.inboundVip(port.port(), "http", "", svc.hostname());
            return List.of(SidecarInboundListenerBuilder.defaultInboundRoute(cluster, svc.hostname(), port.port()));
        }
        return out.stream().map(this::withWaypointClusters).toList();
    }

    /** istiod's getVirtualServiceForWaypoint: the service's mesh VirtualServices of its or the waypoint's namespace. */
    private List<Config> virtualServices(Service svc) {
        return push.virtualServices(PushContext.MESH_GATEWAY, svc.hostname(), scope).stream()
                .filter(vs -> vs.namespace().equals(proxy.namespace()) || vs.namespace().equals(svc.namespace()))
                .toList();
    }

    /**
     * The tcp_proxy of a served service's TCP port (istiod's buildWaypointNetworkFilters): the
     * destinations of the first VirtualService route that applies (istiod's getWaypointTCPRoutes:
     * a {@code tls} route whose match names the service's host as its one SNI host, then a
     * {@code tcp} route; a match applies by port and the {@code mesh} gateway, never when it names
     * source labels or a source namespace, which a waypoint does not have), else the port's own
     * cluster; the stat prefix is the chain's cluster.
     */
    Filter tcpProxy(Service svc, Port port) {
        String own = ClusterNames.inboundVip(port.port(), "tcp", "", svc.hostname());
        for (Config vs : virtualServices(svc)) {
            List<RouteDestination> route = tcpRoute((VirtualService) vs.spec(), svc.hostname(), port.port());
            if (route == null) {
                continue;
            }
            HttpRouteTranslator.Context ctx = new HttpRouteTranslator.Context(port.port(), vs.namespace(), vs.name(),
                    proxy.namespace(), Map.of(), push.domainSuffix(), null, PushContext.MESH_GATEWAY, push);
            TcpProxy.Builder tcp = TcpProxy.newBuilder().setStatPrefix(own);
            if (route.size() == 1) {
                tcp.setCluster(clusterFor(HttpRouteTranslator.cluster(route.get(0).getDestination(), ctx)));
            } else {
                TcpProxy.WeightedCluster.Builder weighted = tcp.getWeightedClustersBuilder();
                for (RouteDestination d : route) {
                    if (d.getWeight() > 0) {
                        weighted.addClusters(TcpProxy.WeightedCluster.ClusterWeight.newBuilder()
                                .setName(clusterFor(HttpRouteTranslator.cluster(d.getDestination(), ctx)))
                                .setWeight(d.getWeight()));
                    }
                }
            }
            return Filter.newBuilder().setName(EnvoyFilters.TCP_PROXY).setTypedConfig(Any.pack(tcp.build())).build();
        }
        return EnvoyFilters.tcpProxy(own, own);
    }

    /** istiod's getWaypointTCPRoutes for one VirtualService: its applying tls route's destinations, else tcp's, else null. */
    private static List<RouteDestination> tcpRoute(VirtualService vs, String hostname, int port) {
        for (TLSRoute r : vs.getTlsList()) {
            if (r.getMatchCount() == 0) {
                return r.getRouteList();
            }
            for (TLSMatchAttributes m : r.getMatchList()) {
                // waypoints match no SNI but the service's own host
                if (m.getSniHostsList().equals(List.of(hostname)) && m.getSourceLabelsCount() == 0
                        && m.getSourceNamespace().isEmpty() && applies(m.getPort(), m.getGatewaysList(), port)) {
                    return r.getRouteList();
                }
            }
        }
        for (TCPRoute r : vs.getTcpList()) {
            if (r.getMatchCount() == 0) {
                return r.getRouteList();
            }
            for (L4MatchAttributes m : r.getMatchList()) {
                if (m.getSourceLabelsCount() == 0 && m.getSourceNamespace().isEmpty()
                        && applies(m.getPort(), m.getGatewaysList(), port)) {
                    return r.getRouteList();
                }
            }
        }
        return null;
    }

    private static boolean applies(int matchPort, List<String> gateways, int port) {
        return (matchPort == 0 || matchPort == port) && (gateways.isEmpty() || gateways.contains(PushContext.MESH_GATEWAY));
    }

    /** The outbound clusters the served services' routes send to (destinations the waypoint does not serve). */
    Set<String> outboundClusters() {
        Set<String> out = new LinkedHashSet<>();
        for (Service svc : served.values()) {
            for (Port p : svc.ports()) {
                if (SidecarRouteBuilder.httpOrSniffed(p.protocol())) {
                    for (Route r : routes(svc, p)) {
                        clusters(r.getRoute()).stream().filter(c -> c.startsWith("outbound|")).forEach(out::add);
                    }
                }
                if (p.protocol() != Protocol.UDP && !p.protocol().isHttp()) {
                    TcpProxy tcp = unpackTcpProxy(tcpProxy(svc, p));
                    Stream.concat(Stream.of(tcp.getCluster()), tcp.getWeightedClusters().getClustersList().stream()
                            .map(TcpProxy.WeightedCluster.ClusterWeight::getName))
                            .filter(c -> c.startsWith("outbound|")).forEach(out::add);
                }
            }
        }
        return out;
    }

    private static TcpProxy unpackTcpProxy(Filter f) {
        try {
            return f.getTypedConfig().unpack(TcpProxy.class);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("a tcp_proxy filter built here holds a TcpProxy", e);
        }
    }

    private static List<String> clusters(RouteAction a) {
        List<String> out = new ArrayList<>();
        if (!a.getCluster().isEmpty()) {
            out.add(a.getCluster());
        }
        a.getWeightedClusters().getClustersList().forEach(w -> out.add(w.getName()));
        a.getRequestMirrorPoliciesList().forEach(m -> out.add(m.getCluster()));
        return out;
    }

    private Route withWaypointClusters(Route r) {
        if (!r.hasRoute()) {
            return r; // redirects and direct responses name no cluster
        }
        RouteAction.Builder a = r.getRoute().toBuilder();
        if (a.hasWeightedClusters()) { // (its builder getter would set the cluster specifier)
            for (WeightedCluster.ClusterWeight.Builder w : a.getWeightedClustersBuilder().getClustersBuilderList()) {
                w.setName(clusterFor(w.getName()));
            }
        } else if (!a.getCluster().isEmpty()) {
            a.setCluster(clusterFor(a.getCluster()));
        }
        for (RouteAction.RequestMirrorPolicy.Builder m : a.getRequestMirrorPoliciesBuilderList()) {
            m.setCluster(clusterFor(m.getCluster()));
        }
        return r.toBuilder().setRoute(a).build();
    }

    /** An outbound cluster of a served service becomes the waypoint's inbound-vip cluster; others stay. */
    String clusterFor(String outbound) {
        ClusterNames.Outbound o = ClusterNames.parseOutbound(outbound);
        Service svc = o == null ? null : served.get(o.host());
        if (svc == null) {
            return outbound;
        }
        return ClusterNames.inboundVip(o.port(), protocolOf(svc, o.port()), o.subset(), o.host());
    }
}
