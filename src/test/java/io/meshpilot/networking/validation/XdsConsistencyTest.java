package io.meshpilot.networking.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** A small consistent sidecar config, then each cross-resource rule broken once. */
class XdsConsistencyTest {
    static final String A = "outbound|80||a.default.svc.cluster.local";
    static final String PASSTHROUGH = "PassthroughCluster";

    static Address addr(String ip, int port) {
        return Address.newBuilder().setSocketAddress(SocketAddress.newBuilder().setAddress(ip).setPortValue(port)).build();
    }

    static Filter hcm(String routeName) {
        return Filter.newBuilder().setName("envoy.filters.network.http_connection_manager").setTypedConfig(Any.pack(
                HttpConnectionManager.newBuilder().setStatPrefix("x").setRds(Rds.newBuilder().setRouteConfigName(routeName)
                        .setConfigSource(ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance()))).build())).build();
    }

    static Filter tcp(String cluster) {
        return Filter.newBuilder().setName("envoy.filters.network.tcp_proxy").setTypedConfig(Any.pack(
                TcpProxy.newBuilder().setStatPrefix(cluster).setCluster(cluster).build())).build();
    }

    static FilterChain chain(int port, Filter f) {
        return FilterChain.newBuilder().setFilterChainMatch(FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(port)))
                .addFilters(f).build();
    }

    static Listener http80() {
        return Listener.newBuilder().setName("0.0.0.0_80").setAddress(addr("0.0.0.0", 80)).setBindToPort(BoolValue.of(false))
                .addFilterChains(FilterChain.newBuilder().addFilters(hcm("80"))).build();
    }

    static Listener virtualOutbound() {
        return Listener.newBuilder().setName("virtualOutbound").setAddress(addr("0.0.0.0", 15001))
                .addFilterChains(chain(15001, tcp("BlackHoleCluster")))
                .addFilterChains(FilterChain.newBuilder().addFilters(tcp(PASSTHROUGH))).build();
    }

    static RouteConfiguration route80(UnaryOperator<RouteAction.Builder> action) {
        return RouteConfiguration.newBuilder().setName("80").addVirtualHosts(VirtualHost.newBuilder().setName("a:80").addDomains("a")
                .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                        .setRoute(action.apply(RouteAction.newBuilder().setCluster(A))))).build();
    }

    static List<Cluster> clusters() {
        Duration s = Duration.newBuilder().setSeconds(1).build();
        return List.of(Cluster.newBuilder().setName(A).setType(Cluster.DiscoveryType.EDS).setConnectTimeout(s).build(),
                Cluster.newBuilder().setName(PASSTHROUGH).setType(Cluster.DiscoveryType.ORIGINAL_DST).setConnectTimeout(s).build(),
                Cluster.newBuilder().setName("BlackHoleCluster").setType(Cluster.DiscoveryType.STATIC).setConnectTimeout(s).build());
    }

    static ProxyConfig good() {
        return new ProxyConfig(List.of(http80(), virtualOutbound()), List.of(route80(a -> a)), clusters(),
                List.of(ClusterLoadAssignment.newBuilder().setClusterName(A).build()));
    }

    static ProxyConfig withListeners(Listener... ls) {
        return new ProxyConfig(List.of(ls), good().routes(), good().clusters(), good().endpoints());
    }

    static ProxyConfig withRoutes(RouteConfiguration... rs) {
        return new ProxyConfig(good().listeners(), List.of(rs), good().clusters(), good().endpoints());
    }

    static List<String> violations(ProxyConfig c) {
        return XdsConsistency.check(c).violations().stream().map(Violation::toString).toList();
    }

    static List<String> dangling(ProxyConfig c) {
        return XdsConsistency.check(c).dangling().stream().map(XdsConsistency.Dangling::toString).toList();
    }

    @Test
    void consistentConfigHasNone() {
        assertEquals(List.of(), violations(good()));
        assertEquals(List.of(), dangling(good()));
        assertEquals(List.of(), EnvoyConfigCheck.check(good()).all());
    }

    @Test
    void duplicateBoundAddress() {
        Listener copy = virtualOutbound().toBuilder().setName("other").build();
        assertEquals(List.of("listeners[other].address: address TCP 0.0.0.0:15001 already bound by listener virtualOutbound"),
                violations(withListeners(http80(), virtualOutbound(), copy)));
        // not bound: outbound listeners share the virtual listener's port through use_original_dst
        Listener unbound = copy.toBuilder().setBindToPort(BoolValue.of(false)).build();
        assertEquals(List.of(), violations(withListeners(http80(), virtualOutbound(), unbound)));
    }

    @Test
    void duplicateListenerName() {
        assertEquals(List.of("listeners[0.0.0.0_80]: duplicate name"), violations(withListeners(http80(), virtualOutbound(), http80())));
    }

    @Test
    void listenerWithoutAddress() {
        assertEquals(List.of("listeners[0.0.0.0_80].address: a listener needs an address (or api_listener)"),
                violations(withListeners(http80().toBuilder().clearAddress().build(), virtualOutbound())));
    }

    @Test
    void duplicateFilterChainMatch() {
        Listener dup = virtualOutbound().toBuilder().addFilterChains(chain(15001, tcp(PASSTHROUGH))).build();
        assertEquals(List.of("listeners[virtualOutbound].filter_chains[2].filter_chain_match: same matching rules as filter_chains[0]"),
                violations(withListeners(http80(), dup)));
    }

    @Test
    void overlappingFilterChainMatch() {
        FilterChainMatch ab = FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(443)).addServerNames("a").addServerNames("b").build();
        FilterChainMatch b = FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(443)).addServerNames("b").build();
        FilterChainMatch c = FilterChainMatch.newBuilder().setDestinationPort(UInt32Value.of(443)).addServerNames("c").build();
        Listener l = virtualOutbound().toBuilder()
                .addFilterChains(FilterChain.newBuilder().setFilterChainMatch(ab).addFilters(tcp(PASSTHROUGH)))
                .addFilterChains(FilterChain.newBuilder().setFilterChainMatch(c).addFilters(tcp(PASSTHROUGH)))
                .addFilterChains(FilterChain.newBuilder().setFilterChainMatch(b).addFilters(tcp(PASSTHROUGH))).build();
        assertEquals(List.of("listeners[virtualOutbound].filter_chains[4].filter_chain_match: overlapping matching rules with filter_chains[2]"),
                violations(withListeners(http80(), l)));
    }

    @Test
    void missingRouteConfiguration() {
        Listener l = http80().toBuilder().setFilterChains(0, FilterChain.newBuilder().addFilters(hcm("81"))).build();
        assertEquals(List.of("listeners[0.0.0.0_80].filter_chains[0].filters[0].typed_config(HttpConnectionManager)"
                + ".rds.route_config_name: no route configuration 81"), violations(withListeners(l, virtualOutbound())));
    }

    @Test
    void missingClusterFromARouteDangles() {
        ProxyConfig c = withRoutes(route80(a -> a.setCluster("outbound|80||nowhere.example")));
        assertEquals(List.of(), violations(c));
        assertEquals(List.of("routes[80].virtual_hosts[0].routes[0].route.cluster: no cluster outbound|80||nowhere.example"), dangling(c));
        assertEquals(List.of(), EnvoyConfigCheck.check(c).unexpected(Set.of("outbound|80||nowhere.example")));
        assertEquals(1, EnvoyConfigCheck.check(c).unexpected(Set.of()).size());

        ProxyConfig weighted = withRoutes(route80(a -> a.setWeightedClusters(WeightedCluster.newBuilder()
                .addClusters(WeightedCluster.ClusterWeight.newBuilder().setName(A).setWeight(UInt32Value.of(90)))
                .addClusters(WeightedCluster.ClusterWeight.newBuilder().setName("gone").setWeight(UInt32Value.of(10))))));
        assertEquals(List.of("routes[80].virtual_hosts[0].routes[0].route.weighted_clusters.clusters[1].name: no cluster gone"),
                dangling(weighted));
    }

    @Test
    void missingClusterIsAViolationWhenRoutesValidateClusters() {
        RouteConfiguration rc = route80(a -> a.setCluster("gone")).toBuilder().setValidateClusters(BoolValue.of(true)).build();
        assertEquals(List.of("routes[80].virtual_hosts[0].routes[0].route.cluster: no cluster gone (validate_clusters)"),
                violations(withRoutes(rc)));
    }

    @Test
    void missingClusterFromTcpProxy() {
        Listener l = virtualOutbound().toBuilder().setFilterChains(1, FilterChain.newBuilder().addFilters(tcp("gone"))).build();
        assertEquals(List.of("listeners[virtualOutbound].filter_chains[1].filters[0].typed_config(TcpProxy).cluster: no cluster gone"),
                violations(withListeners(http80(), l)));
    }

    @Test
    void weightsMustAddUp() {
        ProxyConfig c = withRoutes(route80(a -> a.setWeightedClusters(WeightedCluster.newBuilder()
                .addClusters(WeightedCluster.ClusterWeight.newBuilder().setName(A).setWeight(UInt32Value.of(0))))));
        assertEquals(List.of("routes[80].virtual_hosts[0].routes[0].route.weighted_clusters: sum of weights must be greater than 0"),
                violations(c));
    }

    @Test
    void duplicateDomains() {
        RouteConfiguration rc = route80(a -> a);
        rc = rc.toBuilder().addVirtualHosts(rc.getVirtualHosts(0).toBuilder().setName("b:80").setDomains(0, "A")).build();
        assertEquals(List.of("routes[80].virtual_hosts[1].domains: domain A also in virtual_hosts[0]"
                + " (Envoy: only unique values for domains are permitted)"), violations(withRoutes(rc)));
    }

    @Test
    void edsClustersNeedAssignmentsWhenEndpointsAreGiven() {
        ProxyConfig none = new ProxyConfig(good().listeners(), good().routes(), good().clusters(), List.of());
        assertEquals(List.of("clusters[" + A + "]: EDS cluster without an assignment for " + A), violations(none));
        assertEquals(List.of(), violations(ProxyConfig.of(good().listeners(), good().routes(), good().clusters())));
    }

    @Test
    void duplicateClusterNames() {
        List<Cluster> cs = new ArrayList<>(clusters());
        cs.add(clusters().get(1));
        assertEquals(List.of("clusters[PassthroughCluster]: duplicate name"),
                violations(new ProxyConfig(good().listeners(), good().routes(), cs, good().endpoints())));
    }

    @Test
    void facadeReportsBothKinds() {
        List<Cluster> cs = new ArrayList<>(clusters());
        cs.set(2, cs.get(2).toBuilder().setConnectTimeout(Duration.getDefaultInstance()).build());
        EnvoyConfigCheck.Report r = EnvoyConfigCheck.check(new ProxyConfig(good().listeners(), good().routes(), cs, good().endpoints()));
        assertEquals(List.of("clusters[BlackHoleCluster].connect_timeout: duration.gt 0s (got 0s)"), r.all());
    }
}
