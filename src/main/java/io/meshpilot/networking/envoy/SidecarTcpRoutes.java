package io.meshpilot.networking.envoy;

import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.meshpilot.api.networking.v1alpha3.L4MatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSMatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The filter chains of a sidecar's outbound TCP or TLS service port (istiod's
 * buildSidecarOutboundTCPTLSFilterChainOpts): VirtualService {@code tls} matches become SNI
 * chains on TLS and HTTPS ports; a {@code tcp} route whose match fits decides the last chain;
 * without one, traffic goes to the service's own cluster. Matches apply to sidecars when they
 * name no gateway or {@code mesh}, and when their port and source labels fit.
 */
final class SidecarTcpRoutes {
    private SidecarTcpRoutes() {
    }

    static List<FilterChain> chains(Service service, Port port, Proxy proxy, PushContext push, ProxyScope scope) {
        List<FilterChain> out = new ArrayList<>();
        List<Config> virtualServices = push.virtualServices(PushContext.MESH_GATEWAY, service.hostname(), scope);
        boolean tls = port.protocol() == Protocol.TLS || port.protocol() == Protocol.HTTPS;
        Set<String> claimed = new HashSet<>();
        if (tls) {
            out.addAll(sniChains(virtualServices, port, proxy, push, claimed));
        }
        out.add(FilterChain.newBuilder().addFilters(tcpRoute(virtualServices, service, port, proxy, push)).build());
        return out;
    }

    /**
     * A TLS port of services without a VIP, on the wildcard listener: nothing in the address
     * tells the services apart, so each gets its VirtualService's SNI chains and a chain for
     * its own hostname as SNI (istiod's SNI match for TLS without a VIP); other TLS traffic on
     * the port goes to {@code fallback} (passthrough or blackhole by outbound traffic policy).
     */
    static List<FilterChain> wildcardTlsChains(List<Map.Entry<Service, Port>> services, Proxy proxy, PushContext push,
                                               ProxyScope scope, String fallback) {
        List<FilterChain> out = new ArrayList<>();
        Set<String> claimed = new HashSet<>();
        for (Map.Entry<Service, Port> e : services) {
            Service service = e.getKey();
            Port port = e.getValue();
            List<Config> virtualServices = push.virtualServices(PushContext.MESH_GATEWAY, service.hostname(), scope);
            out.addAll(sniChains(virtualServices, port, proxy, push, claimed));
            if (claimed.add(service.hostname())) {
                out.add(FilterChain.newBuilder()
                        .setFilterChainMatch(FilterChainMatch.newBuilder().addServerNames(service.hostname()))
                        .addFilters(tcpRoute(virtualServices, service, port, proxy, push)).build());
            }
        }
        out.add(FilterChain.newBuilder().addFilters(EnvoyFilters.tcpProxy(fallback, fallback)).build());
        return out;
    }

    private static List<FilterChain> sniChains(List<Config> virtualServices, Port port, Proxy proxy, PushContext push,
                                               Set<String> claimed) {
        List<FilterChain> out = new ArrayList<>();
        for (Config vs : virtualServices) {
            for (TLSRoute r : ((VirtualService) vs.spec()).getTlsList()) {
                for (TLSMatchAttributes m : r.getMatchList()) {
                    if (r.getRouteCount() == 0 || !applies(m.getPort(), m.getGatewaysList(), m.getSourceLabelsMap(),
                            m.getSourceNamespace(), port, proxy, vs.namespace())
                            || m.getSniHostsList().stream().anyMatch(claimed::contains)) {
                        continue;
                    }
                    claimed.addAll(m.getSniHostsList());
                    out.add(FilterChain.newBuilder()
                            .setFilterChainMatch(FilterChainMatch.newBuilder().addAllServerNames(m.getSniHostsList()))
                            .addFilters(TcpRouteTranslator.tcpProxy(r.getRouteList(), port.port(), vs, push)).build());
                }
            }
        }
        return out;
    }

    private static Filter tcpRoute(List<Config> virtualServices, Service service,
                                                                          Port port, Proxy proxy, PushContext push) {
        for (Config vs : virtualServices) {
            for (TCPRoute r : ((VirtualService) vs.spec()).getTcpList()) {
                boolean matches = r.getMatchCount() == 0;
                for (L4MatchAttributes m : r.getMatchList()) {
                    matches |= applies(m.getPort(), m.getGatewaysList(), m.getSourceLabelsMap(), m.getSourceNamespace(),
                            port, proxy, vs.namespace());
                }
                if (matches && r.getRouteCount() > 0) {
                    return TcpRouteTranslator.tcpProxy(r.getRouteList(), port.port(), vs, push);
                }
            }
        }
        String cluster = ClusterNames.outbound(port.port(), "", service.hostname());
        return EnvoyFilters.tcpProxy(cluster, cluster);
    }

    private static boolean applies(int matchPort, List<String> gateways, Map<String, String> sourceLabels,
                                   String sourceNamespace, Port port, Proxy proxy, String vsNamespace) {
        if (matchPort != 0 && matchPort != port.port()) {
            return false;
        }
        if (!gateways.isEmpty() && !gateways.contains(PushContext.MESH_GATEWAY)) {
            return false;
        }
        if (!LabelSelector.subsetOf(sourceLabels, proxy.labels())) {
            return false;
        }
        return sourceNamespace.isEmpty() || sourceNamespace.equals(proxy.namespace());
    }
}
