package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.QueryParameterMatcher;
import io.envoyproxy.envoy.config.route.v3.RedirectAction;
import io.envoyproxy.envoy.config.route.v3.RetryPolicy;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.CorsPolicy;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.v3.FractionalPercent;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.networking.MeshFixture;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sidecar RDS: virtual hosts, domains, default and catch-all routes, and every VirtualService
 * HTTP-route feature at the Envoy field istiod maps it to. PushContexts come from Istio YAML
 * through the real store and ServiceEntry registry.
 */
class SidecarRouteBuilderTest {
    static final String REVIEWS = "reviews.bookinfo.svc.cluster.local";
    static final String RATINGS = "ratings.other.svc.cluster.local";
    static final ProxyScope SCOPE = ProxyScope.of("bookinfo");

    MeshFixture mesh;

    @BeforeEach
    void setUp() throws Exception {
        mesh = new MeshFixture();
        mesh.apply(entry("reviews", "bookinfo", "10.0.0.10", "http", "HTTP"));
        mesh.apply(entry("ratings", "other", "10.0.0.11", "http", "HTTP"));
        mesh.apply(entry("db", "bookinfo", "10.0.0.12", "tcp", "TCP"));
    }

    @AfterEach
    void tearDown() {
        mesh.close();
    }

    static String entry(String name, String ns, String vip, String portName, String protocol) {
        return """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: %1$s, namespace: %2$s}
                spec:
                  hosts: [%1$s.%2$s.svc.cluster.local]
                  addresses: [%3$s]
                  location: MESH_INTERNAL
                  ports: [{number: 9080, name: %4$s, protocol: %5$s}]
                  resolution: STATIC
                  endpoints: [{address: 10.1.0.1}]
                """.formatted(name, ns, vip, portName, protocol);
    }

    RouteConfiguration build() {
        return SidecarRouteBuilder.build("9080", mesh.push(), SCOPE).orElseThrow();
    }

    static VirtualHost vhost(RouteConfiguration rc, String name) {
        return rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no virtual host " + name + " in " + rc));
    }

    /** Applies a VirtualService for reviews with {@code http} and returns the reviews routes. */
    List<Route> routes(String http) throws Exception {
        return routes(http, null);
    }

    List<Route> routes(String http, Map<String, String> labels) throws Exception {
        mesh.apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews, namespace: bookinfo}
                spec:
                  hosts: [reviews]
                  http:
                """ + http.indent(2));
        RouteConfiguration rc = SidecarRouteBuilder.build("9080", mesh.push(), SCOPE, labels).orElseThrow();
        return vhost(rc, REVIEWS + ":9080").getRoutesList();
    }

    Route route(String http) throws Exception {
        List<Route> r = routes(http);
        assertEquals(1, r.size(), r.toString());
        return r.get(0);
    }

    static FractionalPercent million(int n) {
        return FractionalPercent.newBuilder().setNumerator(n).setDenominator(FractionalPercent.DenominatorType.MILLION)
                .build();
    }

    // ---- virtual hosts and domains

    @Test
    void domainsOfAServiceInTheProxysNamespace() {
        assertEquals(List.of(REVIEWS, "reviews", "reviews.bookinfo.svc", "reviews.bookinfo", "10.0.0.10"),
                vhost(build(), REVIEWS + ":9080").getDomainsList());
    }

    @Test
    void domainsOfAServiceInAnotherNamespace() {
        assertEquals(List.of(RATINGS, "ratings.other", "ratings.other.svc", "10.0.0.11"),
                vhost(build(), RATINGS + ":9080").getDomainsList());
    }

    @Test
    void oneVirtualHostPerHttpServiceThenCatchAllAndNoDuplicateDomains() throws Exception {
        // a second "reviews" in another namespace, with the same VIP: the VIP stays with the first
        mesh.apply(entry("reviews", "other", "10.0.0.10", "http", "HTTP"));
        RouteConfiguration rc = build();
        assertEquals(List.of(RATINGS + ":9080", REVIEWS + ":9080", "reviews.other.svc.cluster.local:9080", "allow_any"),
                rc.getVirtualHostsList().stream().map(VirtualHost::getName).toList()); // db is TCP: no virtual host
        Set<String> seen = new HashSet<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            for (String d : vh.getDomainsList()) {
                assertTrue(seen.add(d), "duplicate domain " + d);
            }
        }
        assertEquals(List.of("reviews.other.svc.cluster.local", "reviews.other", "reviews.other.svc"),
                vhost(rc, "reviews.other.svc.cluster.local:9080").getDomainsList());
        assertEquals("9080", rc.getName());
        assertTrue(rc.getIgnorePortInHostMatching());
        assertEquals(BoolValue.of(false), rc.getValidateClusters());
        assertEquals(1024 * 1024, rc.getMaxDirectResponseBodySizeBytes().getValue());
    }

    @Test
    void nonNumericRouteNamesAreNotSidecarRoutes() {
        assertTrue(SidecarRouteBuilder.build("reviews:9080", mesh.push(), SCOPE).isEmpty());
        assertTrue(SidecarRouteBuilder.build("http.80", mesh.push(), SCOPE).isEmpty());
    }

    @Test
    void defaultRouteWithoutVirtualService() throws Exception {
        Route r = vhost(build(), REVIEWS + ":9080").getRoutes(0);
        assertEquals("default", r.getName());
        assertEquals("/", r.getMatch().getPrefix());
        assertEquals("outbound|9080||" + REVIEWS, r.getRoute().getCluster());
        assertEquals(Duration.getDefaultInstance(), r.getRoute().getTimeout());
        assertTrue(r.getRoute().hasTimeout());
        RetryPolicy retry = r.getRoute().getRetryPolicy();
        assertEquals(2, retry.getNumRetries().getValue());
        assertEquals("connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes", retry.getRetryOn());
        assertEquals(List.of(503), retry.getRetriableStatusCodesList());
        assertEquals(5, retry.getHostSelectionRetryMaxAttempts());
        assertEquals("envoy.retry_host_predicates.previous_hosts", retry.getRetryHostPredicate(0).getName());
        assertEquals(Any.pack(PreviousHostsPredicate.getDefaultInstance()), retry.getRetryHostPredicate(0).getTypedConfig());
    }

    @Test
    void allowAnyCatchAllByDefault() {
        RouteConfiguration rc = build();
        VirtualHost last = rc.getVirtualHosts(rc.getVirtualHostsCount() - 1);
        assertEquals("allow_any", last.getName());
        assertEquals(List.of("*"), last.getDomainsList());
        assertEquals("PassthroughCluster", last.getRoutes(0).getRoute().getCluster());
        assertEquals(Duration.getDefaultInstance(), last.getRoutes(0).getRoute().getTimeout());
    }

    @Test
    void blockAllCatchAllForRegistryOnly() {
        MeshConfig registryOnly = new MeshConfigLoader().defaults().toBuilder().setOutboundTrafficPolicy(
                MeshConfig.OutboundTrafficPolicy.newBuilder().setMode(MeshConfig.OutboundTrafficPolicy.Mode.REGISTRY_ONLY))
                .build();
        RouteConfiguration rc = SidecarRouteBuilder.build("9080", mesh.push(registryOnly), SCOPE).orElseThrow();
        VirtualHost last = rc.getVirtualHosts(rc.getVirtualHostsCount() - 1);
        assertEquals("block_all", last.getName());
        assertEquals(List.of("*"), last.getDomainsList());
        assertEquals(502, last.getRoutes(0).getDirectResponse().getStatus());
    }

    // ---- VirtualService HTTP route features

    @Test
    void uriExactPrefixRegex() throws Exception {
        List<Route> r = routes("""
                - match: [{uri: {exact: /a}}, {uri: {prefix: /b}}, {uri: {regex: "/c.*"}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals("/a", r.get(0).getMatch().getPath());
        assertEquals("/b", r.get(1).getMatch().getPrefix());
        assertEquals("/c.*", r.get(2).getMatch().getSafeRegex().getRegex());
        assertEquals(BoolValue.of(true), r.get(0).getMatch().getCaseSensitive());
    }

    @Test
    void headerMatchesExactPrefixRegexPresent() throws Exception {
        Route r = route("""
                - match: [{headers: {a: {exact: x}, b: {prefix: y}, c: {regex: "z+"}, d: {}}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of(
                HeaderMatcher.newBuilder().setName("a").setStringMatch(StringMatcher.newBuilder().setExact("x")).build(),
                HeaderMatcher.newBuilder().setName("b").setStringMatch(StringMatcher.newBuilder().setPrefix("y")).build(),
                HeaderMatcher.newBuilder().setName("c").setStringMatch(StringMatcher.newBuilder()
                        .setSafeRegex(RegexMatcher.newBuilder().setRegex("z+"))).build(),
                HeaderMatcher.newBuilder().setName("d").setPresentMatch(true).build()), r.getMatch().getHeadersList());
    }

    @Test
    void queryParams() throws Exception {
        Route r = route("""
                - match: [{queryParams: {q: {exact: "1"}}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of(QueryParameterMatcher.newBuilder().setName("q")
                .setStringMatch(StringMatcher.newBuilder().setExact("1")).build()), r.getMatch().getQueryParametersList());
    }

    @Test
    void methodAndAuthorityArePseudoHeaders() throws Exception {
        Route r = route("""
                - match: [{method: {exact: GET}, authority: {prefix: rev}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of(
                HeaderMatcher.newBuilder().setName(":method").setStringMatch(StringMatcher.newBuilder().setExact("GET")).build(),
                HeaderMatcher.newBuilder().setName(":authority").setStringMatch(StringMatcher.newBuilder().setPrefix("rev"))
                        .build()), r.getMatch().getHeadersList());
    }

    @Test
    void portMatchKeepsOnlyRoutesForTheListenerPort() throws Exception {
        List<Route> r = routes("""
                - name: other-port
                  match: [{port: 9999}]
                  route: [{destination: {host: reviews, subset: x}}]
                - name: this-port
                  match: [{port: 9080}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of("this-port"), r.stream().map(Route::getName).toList());
    }

    @Test
    void sourceLabelsAgainstTheProxysLabels() throws Exception {
        String http = """
                - name: from-v2
                  match: [{sourceLabels: {version: v2}}]
                  route: [{destination: {host: reviews, subset: v2}}]
                - name: rest
                  route: [{destination: {host: reviews}}]
                """;
        assertEquals(List.of("rest"), routes(http, Map.of("version", "v1")).stream().map(Route::getName).toList());
        RouteConfiguration rc = SidecarRouteBuilder.build("9080", mesh.push(), SCOPE, Map.of("version", "v2"))
                .orElseThrow();
        // the matching route is a catch-all (prefix "/" only), so, as in istiod, nothing follows it
        assertEquals(List.of("from-v2"),
                vhost(rc, REVIEWS + ":9080").getRoutesList().stream().map(Route::getName).toList());
    }

    @Test
    void delegateVirtualServicesStandForTheirRoutesNarrowedByTheRootMatch() throws Exception {
        mesh.apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: root, namespace: bookinfo}
                spec:
                  hosts: [reviews]
                  http:
                  - match: [{uri: {prefix: /api}, headers: {team: {exact: a}}}]
                    delegate: {name: api-routes, namespace: other}
                  - route: [{destination: {host: reviews}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: api-routes, namespace: other}
                spec:
                  http:
                  - match: [{uri: {prefix: /api/v2}}, {uri: {prefix: /other}}]
                    route: [{destination: {host: ratings}}]
                  - match: [{uri: {exact: /api/health}, headers: {team: {exact: b}}}]
                    route: [{destination: {host: ratings}}]
                  - route: [{destination: {host: ratings, subset: v1}}]
                """);
        List<Route> routes = vhost(build(), REVIEWS + ":9080").getRoutesList();
        assertEquals(3, routes.size(), routes.toString());
        // /other is outside /api and team b contradicts team a: both combinations are dropped
        assertEquals("/api/v2", routes.get(0).getMatch().getPrefix());
        assertEquals("team", routes.get(0).getMatch().getHeaders(0).getName(), "the root's header condition is kept");
        assertEquals("outbound|9080||" + RATINGS, routes.get(0).getRoute().getCluster(),
                "short hosts resolve in the delegate's namespace");
        assertEquals("/api", routes.get(1).getMatch().getPrefix(), "a delegate route without match takes the root's");
        assertEquals("outbound|9080|v1|" + RATINGS, routes.get(1).getRoute().getCluster());
        assertEquals("outbound|9080||" + REVIEWS, routes.get(2).getRoute().getCluster());
    }

    @Test
    void aDelegateNotExportedToTheRootIsIgnored() throws Exception {
        mesh.apply("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: root, namespace: bookinfo}
                spec:
                  hosts: [reviews]
                  http:
                  - match: [{uri: {prefix: /api}}]
                    delegate: {name: private, namespace: other}
                  - route: [{destination: {host: reviews}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: private, namespace: other}
                spec:
                  exportTo: ["."]
                  http: [{route: [{destination: {host: ratings}}]}]
                """);
        List<Route> routes = vhost(build(), REVIEWS + ":9080").getRoutesList();
        assertEquals(1, routes.size());
        assertEquals("outbound|9080||" + REVIEWS, routes.get(0).getRoute().getCluster());
    }

    @Test
    void matchGatewaysOtherThanMeshAreLeftOut() throws Exception {
        List<Route> r = routes("""
                - name: gw
                  match: [{gateways: [bookinfo-gateway]}]
                  route: [{destination: {host: reviews, subset: x}}]
                - name: mesh
                  match: [{gateways: [mesh], uri: {prefix: /m}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of("mesh"), r.stream().map(Route::getName).toList());
    }

    @Test
    void weightedDestinationsWithSubsets() throws Exception {
        Route r = route("""
                - route:
                  - {destination: {host: reviews, subset: v1}, weight: 75}
                  - {destination: {host: ratings.other.svc.cluster.local, subset: v2, port: {number: 8080}}, weight: 25}
                """);
        var wc = r.getRoute().getWeightedClusters().getClustersList();
        assertEquals("outbound|9080|v1|" + REVIEWS, wc.get(0).getName());
        assertEquals(75, wc.get(0).getWeight().getValue());
        assertEquals("outbound|8080|v2|" + RATINGS, wc.get(1).getName());
        assertEquals(25, wc.get(1).getWeight().getValue());
    }

    @Test
    void redirect() throws Exception {
        Route r = route("""
                - redirect: {uri: /new, authority: other.example, redirectCode: 302}
                """);
        assertEquals(RedirectAction.newBuilder().setPathRedirect("/new").setHostRedirect("other.example")
                .setResponseCode(RedirectAction.RedirectResponseCode.FOUND).build(), r.getRedirect());
    }

    @Test
    void directResponse() throws Exception {
        Route r = route("""
                - directResponse: {status: 418, body: {string: teapot}}
                """);
        assertEquals(418, r.getDirectResponse().getStatus());
        assertEquals("teapot", r.getDirectResponse().getBody().getInlineString());
    }

    @Test
    void rewriteUriAndAuthority() throws Exception {
        Route r = route("""
                - rewrite: {uri: /v2, authority: reviews-v2}
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals("/v2", r.getRoute().getPrefixRewrite());
        assertEquals("reviews-v2", r.getRoute().getHostRewriteLiteral());
    }

    @Test
    void uriRegexRewrite() throws Exception {
        Route r = route("""
                - rewrite: {uriRegexRewrite: {match: "^/old/(.*)", rewrite: "/new/\\\\1"}}
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals("^/old/(.*)", r.getRoute().getRegexRewrite().getPattern().getRegex());
        assertEquals("/new/\\1", r.getRoute().getRegexRewrite().getSubstitution());
    }

    @Test
    void timeout() throws Exception {
        Route r = route("""
                - timeout: 3s
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(Duration.newBuilder().setSeconds(3).build(), r.getRoute().getTimeout());
        assertEquals(Duration.newBuilder().setSeconds(3).build(), r.getRoute().getMaxGrpcTimeout());
    }

    @Test
    void retries() throws Exception {
        Route r = route("""
                - retries: {attempts: 4, perTryTimeout: 2s, retryOn: "gateway-error,connect-failure,502"}
                  route: [{destination: {host: reviews}}]
                """);
        RetryPolicy p = r.getRoute().getRetryPolicy();
        assertEquals(4, p.getNumRetries().getValue());
        assertEquals(Duration.newBuilder().setSeconds(2).build(), p.getPerTryTimeout());
        assertEquals("gateway-error,connect-failure,retriable-status-codes", p.getRetryOn());
        assertEquals(List.of(502), p.getRetriableStatusCodesList());
    }

    @Test
    void retriesWithZeroAttemptsDisableRetrying() throws Exception {
        Route r = route("""
                - retries: {attempts: 0}
                  route: [{destination: {host: reviews}}]
                """);
        assertFalse(r.getRoute().hasRetryPolicy());
    }

    @Test
    void faultDelayAndAbort() throws Exception {
        Route r = route("""
                - fault:
                    delay: {fixedDelay: 5s, percentage: {value: 10}}
                    abort: {httpStatus: 503, percentage: {value: 0.5}}
                  route: [{destination: {host: reviews}}]
                """);
        HTTPFault f = r.getTypedPerFilterConfigOrThrow("envoy.filters.http.fault").unpack(HTTPFault.class);
        assertEquals(Duration.newBuilder().setSeconds(5).build(), f.getDelay().getFixedDelay());
        assertEquals(million(100_000), f.getDelay().getPercentage());
        assertEquals(503, f.getAbort().getHttpStatus());
        assertEquals(million(5_000), f.getAbort().getPercentage());
    }

    @Test
    void mirrorWithPercentage() throws Exception {
        Route r = route("""
                - mirror: {host: ratings.other.svc.cluster.local}
                  mirrorPercentage: {value: 20}
                  route: [{destination: {host: reviews}}]
                """);
        var m = r.getRoute().getRequestMirrorPolicies(0);
        assertEquals("outbound|9080||" + RATINGS, m.getCluster());
        assertEquals(million(200_000), m.getRuntimeFraction().getDefaultValue());
        assertEquals(BoolValue.of(false), m.getTraceSampled());
    }

    @Test
    void mirrors() throws Exception {
        Route r = route("""
                - mirrors:
                  - {destination: {host: ratings.other.svc.cluster.local, subset: v1}, percentage: {value: 50}}
                  - {destination: {host: reviews, subset: v3}}
                  route: [{destination: {host: reviews}}]
                """);
        var m = r.getRoute().getRequestMirrorPoliciesList();
        assertEquals(List.of("outbound|9080|v1|" + RATINGS, "outbound|9080|v3|" + REVIEWS),
                m.stream().map(x -> x.getCluster()).toList());
        assertEquals(million(500_000), m.get(0).getRuntimeFraction().getDefaultValue());
        assertEquals(FractionalPercent.newBuilder().setNumerator(100)
                .setDenominator(FractionalPercent.DenominatorType.HUNDRED).build(), m.get(1).getRuntimeFraction().getDefaultValue());
    }

    @Test
    void headerOperationsOnRequestAndResponse() throws Exception {
        Route r = route("""
                - headers:
                    request: {set: {x-set: a}, add: {x-add: b}, remove: [x-gone]}
                    response: {set: {x-rset: c}, add: {x-radd: d}, remove: [x-rgone]}
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of(hv("x-set", "a", false), hv("x-add", "b", true)), r.getRequestHeadersToAddList());
        assertEquals(List.of("x-gone"), r.getRequestHeadersToRemoveList());
        assertEquals(List.of(hv("x-rset", "c", false), hv("x-radd", "d", true)), r.getResponseHeadersToAddList());
        assertEquals(List.of("x-rgone"), r.getResponseHeadersToRemoveList());
    }

    static HeaderValueOption hv(String k, String v, boolean append) {
        return HeaderValueOption.newBuilder()
                .setHeader(HeaderValue.newBuilder().setKey(k).setValue(v))
                .setAppendAction(append ? HeaderValueOption.HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD
                        : HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD).build();
    }

    @Test
    void cors() throws Exception {
        Route r = route("""
                - corsPolicy:
                    allowOrigins: [{exact: "https://a.example"}]
                    allowMethods: [GET, POST]
                    allowHeaders: [x-a]
                    exposeHeaders: [x-b]
                    maxAge: 24h
                    allowCredentials: true
                  route: [{destination: {host: reviews}}]
                """);
        CorsPolicy c = r.getTypedPerFilterConfigOrThrow("envoy.filters.http.cors").unpack(CorsPolicy.class);
        assertEquals(List.of(StringMatcher.newBuilder().setExact("https://a.example").build()),
                c.getAllowOriginStringMatchList());
        assertEquals("GET,POST", c.getAllowMethods());
        assertEquals("x-a", c.getAllowHeaders());
        assertEquals("x-b", c.getExposeHeaders());
        assertEquals("86400", c.getMaxAge());
        assertEquals(BoolValue.of(true), c.getAllowCredentials());
        assertEquals(BoolValue.of(true), c.getForwardNotMatchingPreflights());
        assertEquals(100, c.getFilterEnabled().getDefaultValue().getNumerator());
    }

    @Test
    void nothingAfterACatchAllRoute() throws Exception {
        List<Route> r = routes("""
                - name: all
                  route: [{destination: {host: reviews, subset: v1}}]
                - name: never
                  match: [{uri: {prefix: /x}}]
                  route: [{destination: {host: reviews}}]
                """);
        assertEquals(List.of("all"), r.stream().map(Route::getName).toList());
        assertEquals("outbound|9080|v1|" + REVIEWS, r.get(0).getRoute().getCluster());
    }
}
