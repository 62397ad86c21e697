package io.meshpilot.networking.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.Duration;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.v3.Percent;
import io.envoyproxy.pgv.validate.Validate;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Hand-built resources against Envoy's PGV rules: each bad one is a good one with one thing
 * broken, so each expected violation is the only one and each test fails if the check misses it.
 */
class ProtoConstraintsTest {
    static final Duration SECOND = Duration.newBuilder().setSeconds(1).build();
    static final ConfigSource ADS = ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance()).build();

    static Cluster cluster() {
        return Cluster.newBuilder().setName("outbound|80||a.default.svc.cluster.local")
                .setType(Cluster.DiscoveryType.EDS).setConnectTimeout(SECOND).build();
    }

    static HttpConnectionManager hcm() {
        return HttpConnectionManager.newBuilder().setStatPrefix("outbound_0.0.0.0_80")
                .setRds(Rds.newBuilder().setRouteConfigName("80").setConfigSource(ADS))
                .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
                        .setTypedConfig(Any.pack(Router.getDefaultInstance())))
                .build();
    }

    static Listener listener(HttpConnectionManager h) {
        return Listener.newBuilder().setName("0.0.0.0_80")
                .setAddress(Address.newBuilder().setSocketAddress(SocketAddress.newBuilder().setAddress("0.0.0.0").setPortValue(80)))
                .addFilterChains(FilterChain.newBuilder().addFilters(Filter.newBuilder()
                        .setName("envoy.filters.network.http_connection_manager").setTypedConfig(Any.pack(h))))
                .build();
    }

    static RouteConfiguration routes(UnaryOperator<Route.Builder> edit) {
        Route.Builder r = Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                .setRoute(RouteAction.newBuilder().setCluster("outbound|80||a.default.svc.cluster.local"));
        return RouteConfiguration.newBuilder().setName("80").addVirtualHosts(VirtualHost.newBuilder()
                .setName("a:80").addDomains("a").addRoutes(edit.apply(r))).build();
    }

    static void assertViolations(MessageOrBuilder m, String... expected) {
        assertEquals(List.of(expected), ProtoConstraints.violations("r", m).stream().map(Violation::toString).toList());
    }

    static final String HCM = "r.filter_chains[0].filters[0].typed_config(HttpConnectionManager)";
    static final String ROUTE = "r.virtual_hosts[0].routes[0]";

    @Test
    void goodResourcesHaveNone() {
        assertViolations(cluster());
        assertViolations(listener(hcm()));
        assertViolations(routes(r -> r));
    }

    @Test
    void emptyClusterName() {
        assertViolations(cluster().toBuilder().setName("").build(), "r.name: string.min_len 1 (got \"\")");
    }

    @Test
    void connectTimeoutMustBePositive() {
        assertViolations(cluster().toBuilder().setConnectTimeout(Duration.newBuilder().setSeconds(-1)).build(),
                "r.connect_timeout: duration.gt 0s (got -1s)");
        assertViolations(cluster().toBuilder().setConnectTimeout(Duration.getDefaultInstance()).build(),
                "r.connect_timeout: duration.gt 0s (got 0s)");
    }

    @Test
    void enumOutOfRange() {
        assertViolations(cluster().toBuilder().setTypeValue(999).build(), "r.type: enum.defined_only DiscoveryType (got 999)");
        assertViolations(cluster().toBuilder().setLbPolicyValue(999).build(), "r.lb_policy: enum.defined_only LbPolicy (got 999)");
    }

    @Test
    void addressMustSayWhere() {
        Listener noAddress = listener(hcm()).toBuilder().setAddress(Address.getDefaultInstance()).build();
        assertViolations(noAddress, "r.address.address: oneof.required");
        Listener badPort = listener(hcm()).toBuilder().setAddress(Address.newBuilder().setSocketAddress(
                SocketAddress.newBuilder().setAddress("0.0.0.0").setPortValue(70000))).build();
        assertViolations(badPort, "r.address.socket_address.port_value: uint32.lte 65535 (got 70000)");
        Listener noIp = listener(hcm()).toBuilder().setAddress(Address.newBuilder().setSocketAddress(
                SocketAddress.newBuilder().setPortValue(80))).build();
        assertViolations(noIp, "r.address.socket_address.address: string.min_len 1 (got \"\")");
    }

    @Test
    void typedConfigsAreOpenedAndChecked() {
        assertViolations(listener(hcm().toBuilder().setStatPrefix("").build()), HCM + ".stat_prefix: string.min_len 1 (got \"\")");
        assertViolations(listener(hcm().toBuilder().clearRds().build()), HCM + ".route_specifier: oneof.required");
        assertViolations(listener(hcm().toBuilder().setRds(Rds.newBuilder().setRouteConfigName("80")).build()),
                HCM + ".rds.config_source: message.required");
        assertViolations(listener(hcm().toBuilder().setCodecTypeValue(42).build()),
                HCM + ".codec_type: enum.defined_only CodecType (got 42)");
    }

    @Test
    void wrappersCarryScalarRules() {
        assertViolations(listener(hcm().toBuilder().setMaxRequestHeadersKb(UInt32Value.of(0)).build()),
                HCM + ".max_request_headers_kb: uint32.gt 0 (got 0)");
        assertViolations(listener(hcm().toBuilder().setMaxRequestHeadersKb(UInt32Value.of(9000)).build()),
                HCM + ".max_request_headers_kb: uint32.lte 8192 (got 9000)");
        assertViolations(listener(hcm().toBuilder().setMaxRequestHeadersKb(UInt32Value.of(96)).build()));
    }

    @Test
    void durationGteWithNanos() {
        assertViolations(listener(hcm().toBuilder().setRequestHeadersTimeout(Duration.newBuilder().setNanos(-1)).build()),
                HCM + ".request_headers_timeout: duration.gte 0s (got -0.000000001s)");
    }

    @Test
    void routeActionNeedsACluster() {
        assertViolations(routes(r -> r.setRoute(RouteAction.getDefaultInstance())), ROUTE + ".route.cluster_specifier: oneof.required");
        assertViolations(routes(r -> r.setRoute(RouteAction.newBuilder().setCluster(""))), ROUTE + ".route.cluster: string.min_len 1 (got \"\")");
        assertViolations(routes(r -> r.clearAction()), ROUTE + ".action: oneof.required");
        assertViolations(routes(r -> r.clearMatch()), ROUTE + ".match: message.required");
    }

    @Test
    void weightedClustersNeedClusters() {
        assertViolations(routes(r -> r.setRoute(RouteAction.newBuilder().setWeightedClusters(WeightedCluster.getDefaultInstance()))),
                ROUTE + ".route.weighted_clusters.clusters: repeated.min_items 1 (got 0)");
        assertViolations(routes(r -> r.setRoute(RouteAction.newBuilder().setWeightedClusters(WeightedCluster.newBuilder()
                .addClusters(WeightedCluster.ClusterWeight.newBuilder().setName("a").setWeight(UInt32Value.of(100)))))));
    }

    @Test
    void repeatedItemsAndHeaderNames() {
        RouteConfiguration noDomains = routes(r -> r).toBuilder()
                .setVirtualHosts(0, routes(r -> r).getVirtualHosts(0).toBuilder().clearDomains()).build();
        assertViolations(noDomains, "r.virtual_hosts[0].domains: repeated.min_items 1 (got 0)");
        RouteConfiguration crlf = routes(r -> r).toBuilder()
                .setVirtualHosts(0, routes(r -> r).getVirtualHosts(0).toBuilder().addDomains("b\r\n")).build();
        assertViolations(crlf, "r.virtual_hosts[0].domains[1]: string.well_known_regex HTTP_HEADER_VALUE (loose) (got \"b\r\n\")");
        assertViolations(routes(r -> r.setMatch(r.getMatch().toBuilder().addHeaders(HeaderMatcher.newBuilder().setName("x\n")
                        .setExactMatch("y")))),
                ROUTE + ".match.headers[0].name: string.well_known_regex HTTP_HEADER_NAME (loose) (got \"x\n\")");
    }

    @Test
    void mapValuesAreChecked() {
        Cluster c = cluster().toBuilder().putTypedExtensionProtocolOptions("envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                Any.pack(HttpProtocolOptions.getDefaultInstance())).build();
        assertViolations(c, "r.typed_extension_protocol_options[envoy.extensions.upstreams.http.v3.HttpProtocolOptions]"
                + "(HttpProtocolOptions).upstream_protocol_options: oneof.required");
    }

    @Test
    void doubleBoundsInsideMessages() {
        Cluster c = cluster().toBuilder().setCommonLbConfig(Cluster.CommonLbConfig.newBuilder()
                .setHealthyPanicThreshold(Percent.newBuilder().setValue(150))).build();
        assertViolations(c, "r.common_lb_config.healthy_panic_threshold.value: double.lte 100 (got 150)");
    }

    @Test
    void unknownAnyTypesAreCountedNotGuessed() {
        Listener l = listener(hcm()).toBuilder().setFilterChains(0, FilterChain.newBuilder().addFilters(Filter.newBuilder()
                .setName("x").setTypedConfig(Any.newBuilder().setTypeUrl("type.googleapis.com/acme.Nope")))).build();
        ProtoConstraints.Result r = new ProtoConstraints().check("r", l).result();
        assertEquals(List.of(), r.violations());
        assertEquals(Set.of("type.googleapis.com/acme.Nope"), r.coverage().unresolvedTypes());

        Listener garbage = listener(hcm()).toBuilder().setFilterChains(0, FilterChain.newBuilder().addFilters(Filter.newBuilder()
                .setName("x").setTypedConfig(Any.newBuilder().setTypeUrl(Any.pack(hcm()).getTypeUrl())
                        .setValue(ByteString.copyFrom(new byte[] {(byte) 0xff}))))).build();
        assertEquals(1, ProtoConstraints.violations("r", garbage).size());
    }

    @Test
    void coverageCountsRules() {
        ProtoConstraints.Result r = new ProtoConstraints().check("a", listener(hcm())).check("b", cluster()).result();
        assertTrue(r.coverage().evaluated().get("string.min_len") >= 3, r.coverage().toString());
        assertTrue(r.coverage().evaluated().containsKey("oneof.required"), r.coverage().toString());
        assertTrue(r.coverage().evaluated().containsKey("duration.gt"), r.coverage().toString());
        assertTrue(r.coverage().evaluated().containsKey("enum.defined_only"), r.coverage().toString());
    }

    @Test
    void rulesStillInUnknownFieldsAreRead() throws Exception {
        var name = Cluster.getDescriptor().findFieldByName("name");
        FieldOptions untyped = FieldOptions.parseFrom(name.getOptions().toByteString()); // no extension registry
        assertTrue(untyped.getUnknownFields().hasField(Validate.RULES_FIELD_NUMBER));
        assertEquals(1, PgvOptions.rules(untyped).getString().getMinLen());
        assertNotEquals(Validate.FieldRules.getDefaultInstance(), PgvOptions.rules(untyped));
    }
    /** PGV's Go "ip" rule is net.ParseIP: netip's forms without a zone, and never a name lookup. */
    @Test
    void ipRuleReadsAddressesLikeGoNetParseIp() {
        for (String ok : List.of("10.0.0.1", "::1", "::ffff:10.0.0.1", "2001:db8::1")) {
            assertTrue(ValueRules.ip(ok), ok);
        }
        for (String bad : List.of("010.0.0.1", "fe80::1%eth0", "localhost", "10.0.0.0/8", "[::1]", "")) {
            assertFalse(ValueRules.ip(bad), bad);
        }
    }
}
