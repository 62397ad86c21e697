package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.RouteSemantics;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * RDS for gateways (istiod's buildGatewayHTTPRouteConfig): the route configuration of one
 * HTTP port ({@code http.<port>}) or HTTPS server ({@code https.<port>.<name>.<gw>.<ns>}).
 * Each VirtualService bound to the server's Gateway contributes a virtual host per host it
 * shares with the server (server hosts may restrict the VirtualService's namespace with
 * {@code ns/host}); VirtualServices for the same host are merged in creation order, which
 * gateways allow and sidecars do not. {@code tls.httpsRedirect} makes a virtual host demand
 * TLS. With no virtual host at all, a {@code blackhole:<port>} host answers 404 to everything.
 */
public final class GatewayRouteBuilder {
    private GatewayRouteBuilder() {
    }

    /** @return empty when no server of {@code merged} uses {@code routeName} (e.g. a deleted Gateway) */
    public static Optional<RouteConfiguration> build(String routeName, Proxy proxy, PushContext push,
                                                     MergedGateway merged) {
        List<MergedGateway.GatewayServer> servers = merged.serversForRoute(routeName);
        if (servers.isEmpty()) {
            return Optional.empty();
        }
        HTTPRetry meshRetry = push.mesh().hasDefaultHttpRetryPolicy() ? push.mesh().getDefaultHttpRetryPolicy() : null;
        Map<String, VirtualHost.Builder> byHost = new LinkedHashMap<>();
        Map<String, List<Route>> routesByVs = new LinkedHashMap<>();
        for (MergedGateway.GatewayServer server : servers) {
            int port = server.server().getPort().getNumber();
            boolean redirect = server.server().hasTls() && server.server().getTls().getHttpsRedirect();
            for (Config vs : push.virtualServicesForGateway(server.gateway(), proxy.namespace())) {
                List<String> hosts = intersect(server.hosts(), (VirtualService) vs.spec(), vs.namespace());
                if (hosts.isEmpty()) {
                    continue;
                }
                List<Route> routes = routesByVs.computeIfAbsent(server.gateway() + "|" + vs.key(), k -> {
                    List<Route> translated = HttpRouteTranslator.routes(((VirtualService) vs.spec()).getHttpList(),
                            new HttpRouteTranslator.Context(port, vs.namespace(), vs.name(), proxy.namespace(),
                                    proxy.labels(), push.domainSuffix(), meshRetry, server.gateway(), push)
                                    .forVirtualService(vs));
                    return RouteSemantics.ingress(vs) ? translated.stream().map(GatewayRouteBuilder::segmentPrefix).toList()
                            : translated;
                });
                for (String host : hosts) {
                    VirtualHost.Builder vh = byHost.computeIfAbsent(host, h -> VirtualHost.newBuilder()
                            .setName(h + ":" + port).addAllDomains(domains(h, port))
                            .setIncludeRequestAttemptCount(true));
                    vh.addAllRoutes(routes);
                    if (redirect) {
                        vh.setRequireTls(VirtualHost.TlsRequirementType.ALL);
                    }
                }
            }
            if (redirect) {
                // a redirecting server answers for its hosts even without a VirtualService
                for (String h : server.hosts()) {
                    String name = MergedGateway.hostName(h);
                    byHost.computeIfAbsent(name, n -> VirtualHost.newBuilder().setName(n + ":" + port)
                                    .addAllDomains(domains(n, port)).setIncludeRequestAttemptCount(true))
                            .setRequireTls(VirtualHost.TlsRequirementType.ALL);
                }
            }
        }
        RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName(routeName)
                .setValidateClusters(BoolValue.of(false))
                .setMaxDirectResponseBodySizeBytes(UInt32Value.of(
                        SidecarRouteBuilder.MAX_DIRECT_RESPONSE_BODY))
                // istiod's buildGatewayHTTPRouteConfig: Host "bookinfo.com:8080" matches the
                // domain "bookinfo.com" (for Envoy; proxyless gRPC does not take gateway routes)
                .setIgnorePortInHostMatching(true);
        if (byHost.isEmpty()) {
            // no route: Envoy answers 404 (NR) on this port
            rc.addVirtualHosts(VirtualHost.newBuilder()
                    .setName("blackhole:" + servers.get(0).server().getPort().getNumber()).addDomains("*"));
        } else {
            byHost.values().stream().map(GatewayRouteBuilder::catchAllLast)
                    .sorted(Comparator.comparing(VirtualHost::getName))
                    .forEach(rc::addVirtualHosts);
        }
        return Optional.of(rc.build());
    }

    /** istiod's ingress semantics: prefixes match whole path segments ({@link HttpRouteTranslator#pathSeparatedPrefix}). */
    static Route segmentPrefix(Route r) {
        return r.toBuilder().setMatch(HttpRouteTranslator.pathSeparatedPrefix(r.getMatch())).build();
    }

    /**
     * The VirtualService hosts the server serves, in the VirtualService's order: a server host
     * {@code ns/h} only admits VirtualServices of {@code ns}; wildcards match either way and
     * the more specific name is kept (istiod's host intersection).
     */
    static List<String> intersect(List<String> serverHosts, VirtualService vs, String vsNamespace) {
        List<String> out = new ArrayList<>();
        for (String vsHost : vs.getHostsList()) {
            for (String serverHost : serverHosts) {
                String name = serverHost;
                int slash = serverHost.indexOf('/');
                if (slash >= 0) {
                    if (!serverHost.substring(0, slash).equals(vsNamespace)) {
                        continue;
                    }
                    name = serverHost.substring(slash + 1);
                }
                String kept = null;
                if (matches(name, vsHost)) {
                    kept = vsHost;
                } else if (matches(vsHost, name)) {
                    kept = name;
                }
                if (kept != null && !out.contains(kept)) {
                    out.add(kept);
                }
            }
        }
        return out;
    }

    /** Whether {@code pattern} (exact, {@code *}, or {@code *.suffix}) covers {@code host}. */
    static boolean matches(String pattern, String host) {
        if (pattern.equals("*") || pattern.equals(host)) {
            return true;
        }
        if (pattern.startsWith("*.")) {
            String suffix = pattern.substring(1);
            return host.endsWith(suffix) && (!host.startsWith("*.") || host.length() >= pattern.length());
        }
        return false;
    }

    /**
     * istiod's gateway domains: the host alone; the route configuration ignores the port in
     * Host (clients behind a load balancer send other ports).
     */
    static List<String> domains(String host, int port) {
        return List.of(host);
    }

    /** istiod's SortVHostRoutes: merged routes keep their order, catch-all routes move to the end. */
    private static VirtualHost catchAllLast(VirtualHost.Builder vh) {
        List<Route> routes = new ArrayList<>(vh.getRoutesList());
        List<Route> ordered = new ArrayList<>(routes.size());
        routes.stream().filter(r -> !HttpRouteTranslator.isCatchAll(r)).forEach(ordered::add);
        routes.stream().filter(HttpRouteTranslator::isCatchAll).forEach(ordered::add);
        return vh.clearRoutes().addAllRoutes(ordered).build();
    }
}
