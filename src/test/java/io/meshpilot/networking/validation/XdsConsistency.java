package io.meshpilot.networking.validation;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What Envoy's C++ checks across (and within) resources that PGV cannot see, over one proxy's
 * whole config: unique names and bound addresses, non-overlapping filter chains, every route
 * configuration a listener asks RDS for, every cluster a listener, route or TCP proxy names,
 * an assignment for every EDS cluster.
 *
 * <p>Clusters a route names that do not exist are "dangling", reported apart: a route
 * configuration with {@code validate_clusters} false (the RDS default) loads anyway and Envoy
 * answers 503 on such routes, which Istio does on purpose for hosts that are no service. With
 * {@code validate_clusters} true (the default of an inline route configuration) they are
 * violations, as Envoy then rejects the route table.
 */
public final class XdsConsistency {
    /** A reference to a cluster no CDS resource defines. */
    public record Dangling(String path, String cluster) {
        @Override
        public String toString() {
            return path + ": no cluster " + cluster;
        }
    }

    public record Result(List<Violation> violations, List<Dangling> dangling) {
    }

    private final ProxyConfig config;
    /** The ECDS resources the proxy gets, or null when not given (then references are not checked). */
    private final Set<String> extensionConfigs;
    private final Set<String> clusters = new HashSet<>();
    private final List<Violation> violations = new ArrayList<>();
    private final List<Dangling> dangling = new ArrayList<>();

    private XdsConsistency(ProxyConfig config, Set<String> extensionConfigs) {
        this.config = config;
        this.extensionConfigs = extensionConfigs;
    }

    public static Result check(ProxyConfig config) {
        return check(config, null);
    }

    /**
     * As {@link #check(ProxyConfig)}, and every HTTP filter a listener takes over ECDS
     * ({@code config_discovery}) must name one of {@code extensionConfigs}: Envoy keeps such a
     * listener warming until the extension config arrives.
     */
    public static Result check(ProxyConfig config, Set<String> extensionConfigs) {
        XdsConsistency c = new XdsConsistency(config, extensionConfigs);
        c.run();
        return new Result(List.copyOf(c.violations), List.copyOf(c.dangling));
    }

    private void run() {
        unique("listeners", config.listeners().stream().map(Listener::getName).toList());
        unique("routes", config.routes().stream().map(RouteConfiguration::getName).toList());
        unique("clusters", config.clusters().stream().map(Cluster::getName).toList());
        if (config.hasEndpoints()) {
            unique("endpoints", config.endpoints().stream().map(ClusterLoadAssignment::getClusterName).toList());
        }
        config.clusters().forEach(c -> clusters.add(c.getName()));
        addresses();
        Set<String> routeNames = new HashSet<>();
        config.routes().forEach(r -> routeNames.add(r.getName()));
        for (Listener l : config.listeners()) {
            String path = "listeners[" + l.getName() + "]";
            filterChains(path, l);
            List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
            for (int i = 0; i < chains.size(); i++) {
                filters(path + ".filter_chains[" + i + "]", chains.get(i), routeNames);
            }
            if (l.hasDefaultFilterChain()) {
                filters(path + ".default_filter_chain", l.getDefaultFilterChain(), routeNames);
            }
        }
        for (RouteConfiguration rc : config.routes()) {
            routeConfig("routes[" + rc.getName() + "]", rc, rc.hasValidateClusters() && rc.getValidateClusters().getValue());
        }
        if (config.hasEndpoints()) {
            edsAssignments();
        }
    }

    private void unique(String kind, List<String> names) {
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            if (!seen.add(n)) {
                violations.add(new Violation(kind + "[" + n + "]", "duplicate name"));
            }
        }
    }

    /** Envoy refuses a second listener on an address it already binds ("duplicate address"). */
    private void addresses() {
        Map<String, String> bound = new HashMap<>();
        for (Listener l : config.listeners()) {
            String path = "listeners[" + l.getName() + "]";
            if (!l.hasAddress()) {
                if (!l.hasApiListener()) {
                    violations.add(new Violation(path + ".address", "a listener needs an address (or api_listener)"));
                }
                continue;
            }
            if (l.hasBindToPort() && !l.getBindToPort().getValue()) {
                continue;
            }
            List<Address> all = new ArrayList<>();
            all.add(l.getAddress());
            l.getAdditionalAddressesList().forEach(a -> all.add(a.getAddress()));
            for (Address a : all) {
                String key = key(a);
                String other = bound.putIfAbsent(key, l.getName());
                if (other != null && !other.equals(l.getName())) {
                    violations.add(new Violation(path + ".address", "address " + key + " already bound by listener " + other));
                }
            }
        }
    }

    static String key(Address a) {
        return switch (a.getAddressCase()) {
            case SOCKET_ADDRESS -> a.getSocketAddress().getProtocol() + " " + a.getSocketAddress().getAddress() + ":"
                    + (a.getSocketAddress().hasNamedPort() ? a.getSocketAddress().getNamedPort() : a.getSocketAddress().getPortValue());
            case PIPE -> "pipe " + a.getPipe().getPath();
            case ENVOY_INTERNAL_ADDRESS -> "internal " + a.getEnvoyInternalAddress().getServerListenerName();
            default -> a.getAddressCase().name();
        };
    }

    /** Envoy's filter-chain tree takes each match leaf once (see {@link FilterChainMatches}). */
    private void filterChains(String path, Listener l) {
        if (l.hasFilterChainMatcher()) {
            return; // the matcher API selects chains by name; FilterChainMatch is ignored
        }
        Map<String, Integer> owner = new HashMap<>();
        for (int i = 0; i < l.getFilterChainsCount(); i++) {
            var match = l.getFilterChains(i).getFilterChainMatch();
            List<String> leaves = FilterChainMatches.leaves(match);
            if (leaves == null) {
                continue;
            }
            Set<Integer> reported = new HashSet<>();
            for (String leaf : leaves) {
                Integer other = owner.putIfAbsent(leaf, i);
                if (other != null && reported.add(other)) {
                    boolean same = l.getFilterChains(other).getFilterChainMatch().equals(match);
                    violations.add(new Violation(path + ".filter_chains[" + i + "].filter_chain_match",
                            (same ? "same matching rules as" : "overlapping matching rules with")
                                    + " filter_chains[" + other + "]"));
                }
            }
        }
    }

    private void filters(String path, FilterChain chain, Set<String> routeNames) {
        for (int j = 0; j < chain.getFiltersCount(); j++) {
            String at = path + ".filters[" + j + "].typed_config";
            Any cfg = chain.getFilters(j).getTypedConfig();
            try {
                if (cfg.is(HttpConnectionManager.class)) {
                    hcm(at + "(HttpConnectionManager)", cfg.unpack(HttpConnectionManager.class), routeNames);
                } else if (cfg.is(TcpProxy.class)) {
                    tcpProxy(at + "(TcpProxy)", cfg.unpack(TcpProxy.class));
                }
            } catch (InvalidProtocolBufferException e) {
                violations.add(new Violation(at, "does not parse: " + e.getMessage()));
            }
        }
    }

    private void hcm(String path, HttpConnectionManager h, Set<String> routeNames) {
        for (int i = 0; i < h.getHttpFiltersCount(); i++) {
            var f = h.getHttpFilters(i);
            if (f.hasConfigDiscovery() && extensionConfigs != null && !extensionConfigs.contains(f.getName())) {
                violations.add(new Violation(path + ".http_filters[" + i + "].config_discovery",
                        "no extension config " + f.getName()));
            }
        }
        if (h.hasRds()) {
            if (!routeNames.contains(h.getRds().getRouteConfigName())) {
                violations.add(new Violation(path + ".rds.route_config_name",
                        "no route configuration " + h.getRds().getRouteConfigName()));
            }
        } else if (h.hasRouteConfig()) {
            RouteConfiguration rc = h.getRouteConfig();
            // inline (static) route tables validate their clusters unless told not to
            routeConfig(path + ".route_config", rc, !rc.hasValidateClusters() || rc.getValidateClusters().getValue());
        }
    }

    private void tcpProxy(String path, TcpProxy t) {
        if (t.getClusterSpecifierCase() == TcpProxy.ClusterSpecifierCase.CLUSTER) {
            requireCluster(path + ".cluster", t.getCluster());
        }
        var weighted = t.getWeightedClusters().getClustersList();
        for (int i = 0; i < weighted.size(); i++) {
            requireCluster(path + ".weighted_clusters.clusters[" + i + "].name", weighted.get(i).getName());
        }
    }

    private void requireCluster(String path, String name) {
        if (!clusters.contains(name)) {
            violations.add(new Violation(path, "no cluster " + name));
        }
    }

    private void routeConfig(String path, RouteConfiguration rc, boolean validateClusters) {
        Map<String, Integer> domains = new HashMap<>();
        for (int v = 0; v < rc.getVirtualHostsCount(); v++) {
            VirtualHost vh = rc.getVirtualHosts(v);
            String vp = path + ".virtual_hosts[" + v + "]";
            for (String d : vh.getDomainsList()) {
                Integer other = domains.putIfAbsent(d.toLowerCase(Locale.ROOT), v);
                if (other != null) {
                    violations.add(new Violation(vp + ".domains", "domain " + d + " also in virtual_hosts[" + other
                            + "] (Envoy: only unique values for domains are permitted)"));
                }
            }
            for (int m = 0; m < vh.getRequestMirrorPoliciesCount(); m++) {
                routeCluster(vp + ".request_mirror_policies[" + m + "].cluster",
                        vh.getRequestMirrorPolicies(m).getCluster(), validateClusters);
            }
            for (int r = 0; r < vh.getRoutesCount(); r++) {
                Route route = vh.getRoutes(r);
                if (route.hasRoute()) {
                    routeAction(vp + ".routes[" + r + "].route", route.getRoute(), validateClusters);
                }
            }
        }
    }

    private void routeAction(String path, RouteAction a, boolean validateClusters) {
        if (a.getClusterSpecifierCase() == RouteAction.ClusterSpecifierCase.CLUSTER) {
            routeCluster(path + ".cluster", a.getCluster(), validateClusters);
        } else if (a.hasWeightedClusters()) {
            List<WeightedCluster.ClusterWeight> ws = a.getWeightedClusters().getClustersList();
            long sum = 0;
            for (int i = 0; i < ws.size(); i++) {
                WeightedCluster.ClusterWeight w = ws.get(i);
                String wp = path + ".weighted_clusters.clusters[" + i + "]";
                sum += w.getWeight().getValue();
                if (w.getName().isEmpty() && w.getClusterHeader().isEmpty()) {
                    violations.add(new Violation(wp, "needs name or cluster_header"));
                } else if (!w.getName().isEmpty()) {
                    routeCluster(wp + ".name", w.getName(), validateClusters);
                }
            }
            if (!ws.isEmpty() && sum == 0) {
                violations.add(new Violation(path + ".weighted_clusters", "sum of weights must be greater than 0"));
            } else if (sum > 0xFFFF_FFFFL) {
                violations.add(new Violation(path + ".weighted_clusters", "sum of weights " + sum + " exceeds uint32"));
            }
        }
        for (int m = 0; m < a.getRequestMirrorPoliciesCount(); m++) {
            routeCluster(path + ".request_mirror_policies[" + m + "].cluster", a.getRequestMirrorPolicies(m).getCluster(),
                    validateClusters);
        }
    }

    private void routeCluster(String path, String name, boolean validateClusters) {
        if (name.isEmpty() || clusters.contains(name)) {
            return; // empty: PGV's min_len reports it (or a cluster_header mirror)
        }
        if (validateClusters) {
            violations.add(new Violation(path, "no cluster " + name + " (validate_clusters)"));
        } else {
            dangling.add(new Dangling(path, name));
        }
    }

    /** An EDS cluster without an assignment stays warming until Envoy's initial fetch timeout. */
    private void edsAssignments() {
        Set<String> assigned = new HashSet<>();
        config.endpoints().forEach(e -> assigned.add(e.getClusterName()));
        for (Cluster c : config.clusters()) {
            if (c.getType() == Cluster.DiscoveryType.EDS && c.getClusterDiscoveryTypeCase() == Cluster.ClusterDiscoveryTypeCase.TYPE) {
                String service = c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
                        : c.getEdsClusterConfig().getServiceName();
                if (!assigned.contains(service)) {
                    violations.add(new Violation("clusters[" + c.getName() + "]", "EDS cluster without an assignment for " + service));
                }
            }
        }
    }
}
