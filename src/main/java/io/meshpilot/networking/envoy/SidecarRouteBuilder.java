package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.route.v3.Decorator;
import io.envoyproxy.envoy.config.route.v3.DirectResponseAction;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings.ConsistentHashLB;
import io.meshpilot.api.networking.v1alpha3.OutboundTrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.ConsistentHashing;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * RDS for Envoy sidecars: the outbound route configuration named by a port ({@code "9080"}),
 * as istiod builds it (BuildSidecarOutboundVirtualHosts): one virtual host
 * {@code <hostname>:<port>} per service with an HTTP (or sniffed) port of that number that the
 * Sidecar's egress listener of the port imports (else its catch-all listener's),
 * its routes from the first VirtualService bound to {@code mesh} for the host, else one
 * {@code default} route to {@code outbound|port||host}; then the catch-all virtual host
 * {@code allow_any} (PassthroughCluster) or {@code block_all} (502) by outbound traffic policy.
 */
public final class SidecarRouteBuilder {
    public static final String PASSTHROUGH_CLUSTER = "PassthroughCluster";
    public static final String ALLOW_ANY = "allow_any";
    public static final String BLOCK_ALL = "block_all";
    /** istiod's limit for direct response bodies (1 MiB, Envoy's default is 4 KiB). */
    static final int MAX_DIRECT_RESPONSE_BODY = 1024 * 1024;

    private SidecarRouteBuilder() {
    }

    /** The route configuration for a proxy whose labels are unknown (sourceLabels not evaluated). */
    public static Optional<RouteConfiguration> build(String routeName, PushContext push, ProxyScope scope) {
        return build(routeName, push, scope, null);
    }

    /**
     * @param proxyLabels the proxy's labels, for VirtualService {@code sourceLabels}; null when
     *                    unknown (such matches are then kept). Results depend on them only when a
     *                    VirtualService uses sourceLabels.
     * @return the route configuration of a port number, of a sniffed {@code <host>:<port>} of a
     *         service the scope imports on that port, or of a unix socket {@code unix://PATH} an
     *         egress listener binds (istiod's extractListenerPort); empty for any other name, so
     *         names a proxy makes up build and cache nothing
     */
    public static Optional<RouteConfiguration> build(String routeName, PushContext push, ProxyScope scope,
                                                     Map<String, String> proxyLabels) {
        boolean unix = routeName.startsWith(ProxyScope.EgressListener.UNIX_PREFIX);
        int colon = routeName.lastIndexOf(':');
        String sniffedHost = unix || colon < 0 ? null : routeName.substring(0, colon);
        int port;
        try {
            port = unix ? 0 : Integer.parseInt(routeName.substring(colon + 1));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        if (port < 0 || port > 65535 || port == 0 && !unix) {
            return Optional.empty();
        }
        var egress = scope.listenerForRoute(port, routeName);
        if (unix && egress.isEmpty()) {
            return Optional.empty();
        }
        List<Service> services = egress.map(l -> push.services(scope, l)).orElse(List.of());
        if (sniffedHost != null && services.stream().noneMatch(s -> s.hostname().equals(sniffedHost)
                && s.port(port).isPresent())) {
            return Optional.empty();
        }
        RouteConfiguration all = build(routeName, port, push, scope, proxyLabels, services);
        return Optional.of(sniffedHost == null ? all : sniffed(all, routeName, sniffedHost));
    }

    /**
     * istiod's getVirtualHostsForSniffedServicePort: a sniffed listener of one service (at a
     * bind) gets that service's virtual host alone, for every domain, and no catch-all.
     */
    private static RouteConfiguration sniffed(RouteConfiguration all, String routeName, String host) {
        RouteConfiguration.Builder out = all.toBuilder().clearVirtualHosts();
        for (VirtualHost vh : all.getVirtualHostsList()) {
            if (vh.getDomainsList().contains(routeName) || vh.getDomainsList().contains(host)) {
                out.addVirtualHosts(vh.toBuilder().clearDomains().addDomains("*"));
            }
        }
        return out.build();
    }

    /**
     * The virtual hosts of {@code services} on {@code port} (every HTTP or sniffed port for a
     * unix socket's port 0), then the catch-all.
     */
    private static RouteConfiguration build(String routeName, int port, PushContext push, ProxyScope scope,
                                            Map<String, String> proxyLabels, List<Service> services) {
        String proxyDomain = scope.namespace() + ".svc." + push.domainSuffix();
        HTTPRetry meshRetry = push.mesh().hasDefaultHttpRetryPolicy() ? push.mesh().getDefaultHttpRetryPolicy() : null;

        // one virtual host per service with the port; the routes of its VirtualService, else the default
        record Pending(Service service, int port, List<Route> routes) {
        }
        List<Pending> pending = new ArrayList<>();
        for (Service s : services) {
            List<Port> ports = port == 0 ? s.ports() : s.port(port).map(List::of).orElse(List.of());
            for (Port p : ports) {
                if (httpOrSniffed(p.protocol()) && !s.wildcard()) {
                    pending.add(new Pending(s, p.port(), routes(s, p.port(), push, scope, proxyLabels, meshRetry)));
                }
            }
        }
        pending.sort(Comparator.comparing((Pending p) -> p.service().hostname()).thenComparingInt(Pending::port));

        Set<String> knownFqdn = new HashSet<>();
        for (Pending p : pending) {
            knownFqdn.add(p.service().hostname());
            knownFqdn.add(p.service().hostname() + ":" + p.port());
        }
        Set<String> used = new HashSet<>();
        RouteConfiguration.Builder rc = RouteConfiguration.newBuilder().setName(routeName)
                .setValidateClusters(BoolValue.of(false))
                .setMaxDirectResponseBodySizeBytes(UInt32Value.of(MAX_DIRECT_RESPONSE_BODY))
                .setIgnorePortInHostMatching(true);
        for (Pending p : pending) {
            Domains d = domains(p.service(), proxyDomain);
            List<String> kept = new ArrayList<>();
            for (String domain : d.all()) {
                String lower = domain.toLowerCase(Locale.ROOT);
                // an expanded short name that is itself some service's FQDN stays that service's
                if (used.contains(lower) || d.alt().contains(domain) && knownFqdn.contains(domain)) {
                    continue;
                }
                used.add(lower);
                kept.add(domain);
            }
            if (!kept.isEmpty()) {
                rc.addVirtualHosts(VirtualHost.newBuilder().setName(p.service().hostname() + ":" + p.port())
                        .addAllDomains(kept).addAllRoutes(p.routes()).setIncludeRequestAttemptCount(true));
            }
        }
        rc.addVirtualHosts(catchAll(push.mesh(), scope));
        return rc.build();
    }

    /** The routes of {@code s} on {@code port}: its VirtualService's, else the default route. */
    private static List<Route> routes(Service s, int port, PushContext push, ProxyScope scope,
                                      Map<String, String> proxyLabels, HTTPRetry meshRetry) {
        for (Config vs : push.meshHttpVirtualServices(s.hostname(), scope)) {
            VirtualService spec = (VirtualService) vs.spec();
            List<Route> r = HttpRouteTranslator.routes(spec.getHttpList(), new HttpRouteTranslator.Context(port,
                    vs.namespace(), vs.name(), scope.namespace(), proxyLabels, push.domainSuffix(), meshRetry,
                    PushContext.MESH_GATEWAY, push).forVirtualService(vs));
            if (!r.isEmpty()) {
                return r; // the oldest VirtualService with routes for this port wins
            }
        }
        return List.of(defaultRoute(s.hostname(), port, meshRetry,
                ConsistentHashing.forService(push, scope, s.hostname(), port)));
    }

    /** istiod's IsHTTPOrSniffed: HTTP-family ports, and ports of unknown protocol (sniffed). */
    static boolean httpOrSniffed(Protocol p) {
        return p.isHttp() || p == Protocol.UNSUPPORTED;
    }

    /**
     * istiod's default outbound route: prefix "/", no timeout, the default retry policy, and the
     * hash policy of the service's consistent hash ({@code hash}, null for none).
     */
    static Route defaultRoute(String hostname, int port, HTTPRetry meshRetry, ConsistentHashLB hash) {
        RouteAction.Builder action = RouteAction.newBuilder().setCluster(ClusterNames.outbound(port, "", hostname))
                .setTimeout(HttpRouteTranslator.NO_TIMEOUT).setMaxGrpcTimeout(HttpRouteTranslator.NO_TIMEOUT);
        ConsistentHashing.hashPolicy(hash).ifPresent(action::addHashPolicy);
        var retry = HttpRouteTranslator.retryPolicy(meshRetry);
        if (retry != null) {
            action.setRetryPolicy(retry);
        }
        return Route.newBuilder().setName("default")
                .setMatch(HttpRouteTranslator.routeMatch(null))
                .setDecorator(Decorator.newBuilder().setOperation(hostname + ":" + port + "/*"))
                .setRoute(action).build();
    }

    /** The domains of a service's virtual host in order, and which of them are expanded short names. */
    record Domains(List<String> all, Set<String> alt) {
    }

    /**
     * istiod's generateVirtualHostDomains for sidecars, which match hosts ignoring the port
     * ({@code ignore_port_in_host_matching}), so no {@code :port} forms: the FQDN, the short
     * forms valid from the proxy's namespace ({@code name}, {@code name.ns}, {@code name.ns.svc}
     * in its own namespace; {@code name.ns}, {@code name.ns.svc} elsewhere; none for hosts that
     * are not {@code <name>.<ns>.svc.<suffix>}), then the VIPs.
     */
    static Domains domains(Service s, String proxyDomain) {
        String host = s.hostname();
        List<String> alt = altHosts(host, proxyDomain);
        LinkedHashSet<String> all = new LinkedHashSet<>();
        all.add(host);
        all.addAll(alt);
        if (s.resolution() == Resolution.PASSTHROUGH && "Kubernetes".equals(s.registry())) {
            // headless Kubernetes services: pods are also addressed as <pod>.<service>...
            for (String d : List.copyOf(all)) {
                all.add("*." + d);
            }
        }
        for (String vip : addresses(s)) {
            all.add(vip.contains(":") ? "[" + vip + "]" : vip);
        }
        return new Domains(List.copyOf(all), Set.copyOf(alt));
    }

    private static List<String> altHosts(String host, String proxyDomain) {
        int pd = proxyDomain.indexOf(".svc.");
        if (pd <= 0 || !host.endsWith(proxyDomain.substring(pd))) {
            return List.of(); // not a Kubernetes-style name of this cluster domain: short forms could clash
        }
        int ih = host.indexOf(".svc.");
        int dot = host.indexOf('.');
        if (ih <= 0 || dot + 1 > ih) {
            return List.of();
        }
        String nameNs = host.substring(0, ih);
        if (host.substring(dot + 1, ih).equals(proxyDomain.substring(0, pd))) {
            return List.of(host.substring(0, dot), nameNs + ".svc", nameNs);
        }
        return List.of(nameNs, nameNs + ".svc");
    }

    /** The service's addresses: its VIP and the per-cluster VIPs (none for 0.0.0.0). */
    private static List<String> addresses(Service s) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        if (!s.defaultAddress().isEmpty() && !Service.UNSPECIFIED_IP.equals(s.defaultAddress())) {
            out.add(s.defaultAddress());
        }
        s.clusterVips().values().forEach(l -> l.stream()
                .filter(a -> !a.isEmpty() && !Service.UNSPECIFIED_IP.equals(a)).forEach(out::add));
        return List.copyOf(out);
    }

    /**
     * The last virtual host, domains "*": with ALLOW_ANY (the Sidecar's outboundTrafficPolicy,
     * else the mesh's) to PassthroughCluster without a timeout, else a 502 direct response.
     */
    static VirtualHost catchAll(MeshConfig mesh, ProxyScope scope) {
        boolean allowAny;
        String cluster = PASSTHROUGH_CLUSTER;
        if (scope.sidecar() != null && ((Sidecar) scope.sidecar().spec()).hasOutboundTrafficPolicy()) {
            OutboundTrafficPolicy p = ((Sidecar) scope.sidecar().spec()).getOutboundTrafficPolicy();
            allowAny = p.getMode() == OutboundTrafficPolicy.Mode.ALLOW_ANY;
            if (p.hasEgressProxy()) {
                // unknown traffic goes to the named egress proxy instead (its port, else 0, as istiod)
                var d = p.getEgressProxy();
                cluster = ClusterNames.outbound(d.hasPort() ? d.getPort().getNumber() : 0, d.getSubset(), d.getHost());
            }
        } else {
            allowAny = mesh.getOutboundTrafficPolicy().getMode() != MeshConfig.OutboundTrafficPolicy.Mode.REGISTRY_ONLY;
        }
        RouteMatch all = RouteMatch.newBuilder().setPrefix("/").build();
        if (allowAny) {
            return VirtualHost.newBuilder().setName(ALLOW_ANY).addDomains("*").setIncludeRequestAttemptCount(true)
                    .addRoutes(Route.newBuilder().setName(ALLOW_ANY).setMatch(all)
                            .setRoute(RouteAction.newBuilder().setCluster(cluster)
                                    .setTimeout(HttpRouteTranslator.NO_TIMEOUT)
                                    .setMaxGrpcTimeout(HttpRouteTranslator.NO_TIMEOUT)))
                    .build();
        }
        return VirtualHost.newBuilder().setName(BLOCK_ALL).addDomains("*").setIncludeRequestAttemptCount(true)
                .addRoutes(Route.newBuilder().setName(BLOCK_ALL).setMatch(all)
                        .setDirectResponse(DirectResponseAction.newBuilder().setStatus(502)))
                .build();
    }
}
