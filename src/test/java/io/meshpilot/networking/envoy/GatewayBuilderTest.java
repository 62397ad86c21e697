package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.Pipe;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Gateway LDS, RDS and CDS from Istio YAML through the real store (istiod's gateway
 * translation): which Gateways select the proxy, listeners per port, HTTP and HTTPS route
 * configurations, TLS modes, SNI passthrough, TCP routes, AUTO_PASSTHROUGH and merging.
 */
class GatewayBuilderTest {
    static final String PRODUCTPAGE = "productpage.default.svc.cluster.local";
    MeshFixture fixture;
    final Proxy ingress = new Proxy("router~10.0.0.50~ingress-1.istio-system~istio-system.svc.cluster.local",
            Proxy.Type.ROUTER, List.of("10.0.0.50"), "ingress-1.istio-system", "istio-system.svc.cluster.local",
            "istio-system", Map.of("istio", "ingressgateway"), "Kubernetes", "1.24.0", "", "", "", Locality.NONE);

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: productpage, namespace: default}
                spec:
                  hosts: [productpage.default.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 9080, name: http, protocol: HTTP}]
                  endpoints: [{address: 10.1.0.1, labels: {app: productpage, version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: db, namespace: data}
                spec:
                  hosts: [db.data.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 5432, name: tcp, protocol: TCP}]
                  endpoints: [{address: 10.1.0.2, labels: {app: db, version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: productpage, namespace: default}
                spec:
                  host: productpage
                  subsets: [{name: v1, labels: {version: v1}}]
                """);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    List<Listener> listeners() {
        PushContext push = fixture.push();
        return GatewayListenerBuilder.listeners(ingress, push, MergedGateway.of(ingress, push));
    }

    RouteConfiguration route(String name) {
        PushContext push = fixture.push();
        return GatewayRouteBuilder.build(name, ingress, push, MergedGateway.of(ingress, push)).orElseThrow();
    }

    static HttpConnectionManager hcm(FilterChain chain) throws Exception {
        return chain.getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
    }

    @Test
    void bookinfoGatewayGetsAnHttpListenerAndARouteConfigurationForItsPort() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: bookinfo-gateway, namespace: default}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 8080, name: http, protocol: HTTP}
                    hosts: ["*"]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: bookinfo, namespace: default}
                spec:
                  hosts: ["*"]
                  gateways: [bookinfo-gateway]
                  http:
                  - match: [{uri: {exact: /productpage}}, {uri: {prefix: /static}}]
                    route: [{destination: {host: productpage, port: {number: 9080}}}]
                """);
        List<Listener> ls = listeners();
        assertEquals(1, ls.size());
        Listener l = ls.get(0);
        assertEquals("0.0.0.0_8080", l.getName());
        assertEquals(8080, l.getAddress().getSocketAddress().getPortValue());
        assertFalse(l.hasBindToPort(), "a gateway binds its ports");
        HttpConnectionManager hcm = hcm(l.getFilterChains(0));
        assertEquals("http.8080", hcm.getRds().getRouteConfigName());
        assertEquals("outbound_0.0.0.0_8080", hcm.getStatPrefix());
        assertTrue(hcm.getUseRemoteAddress().getValue(), "the client address is the peer's at the edge");
        assertEquals(HttpConnectionManager.ForwardClientCertDetails.SANITIZE_SET, hcm.getForwardClientCertDetails());
        assertEquals(List.of("envoy.filters.http.fault", "envoy.filters.http.cors", "envoy.filters.http.router"),
                hcm.getHttpFiltersList().stream().map(f -> f.getName()).toList());

        RouteConfiguration rc = route("http.8080");
        assertFalse(rc.getValidateClusters().getValue());
        assertEquals(1, rc.getVirtualHostsCount());
        VirtualHost vh = rc.getVirtualHosts(0);
        assertEquals("*:8080", vh.getName());
        assertEquals(List.of("*"), vh.getDomainsList());
        assertEquals(2, vh.getRoutesCount());
        assertEquals("/productpage", vh.getRoutes(0).getMatch().getPath());
        assertEquals("/static", vh.getRoutes(1).getMatch().getPrefix());
        assertEquals("outbound|9080||" + PRODUCTPAGE, vh.getRoutes(0).getRoute().getCluster());
    }

    @Test
    void gatewaysOnlyApplyToProxiesTheirSelectorPicks() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: egress, namespace: istio-system}
                spec:
                  selector: {istio: egressgateway}
                  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]
                """);
        assertEquals(List.of(), listeners());
        assertTrue(GatewayRouteBuilder.build("http.80", ingress, fixture.push(),
                MergedGateway.of(ingress, fixture.push())).isEmpty(), "no server names that route");
    }

    @Test
    void aPortWithoutVirtualServicesAnswers404AndHttpsRedirectRequiresTls() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 80, name: http, protocol: HTTP}
                    hosts: ["*"]
                  - port: {number: 81, name: http-redirect, protocol: HTTP}
                    hosts: [shop.example.com]
                    tls: {httpsRedirect: true}
                """);
        VirtualHost blackhole = route("http.80").getVirtualHosts(0);
        assertEquals("blackhole:80", blackhole.getName());
        assertEquals(List.of("*"), blackhole.getDomainsList());
        assertEquals(0, blackhole.getRoutesCount(), "no routes: Envoy answers 404");

        VirtualHost redirect = route("http.81").getVirtualHosts(0);
        assertEquals("shop.example.com:81", redirect.getName());
        assertEquals(List.of("shop.example.com"), redirect.getDomainsList());
        assertEquals(VirtualHost.TlsRequirementType.ALL, redirect.getRequireTls());
    }

    @Test
    void httpsServersTerminateTlsWithTheirCredentialAndOwnRoutes() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: secure, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: https-shop, protocol: HTTPS}
                    name: shop-server
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, credentialName: shop-cert}
                  - port: {number: 443, name: https-admin, protocol: HTTPS}
                    hosts: [admin.example.com]
                    tls: {mode: MUTUAL, credentialName: admin-cert, subjectAltNames: [ops.example.com]}
                  - port: {number: 443, name: https-mesh, protocol: HTTPS}
                    hosts: [mesh.example.com]
                    tls: {mode: ISTIO_MUTUAL}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: shop, namespace: default}
                spec:
                  hosts: [shop.example.com]
                  gateways: [istio-system/secure]
                  http: [{route: [{destination: {host: productpage}}]}]
                """);
        Listener l = listeners().get(0);
        assertEquals("0.0.0.0_443", l.getName());
        assertEquals(3, l.getFilterChainsCount());
        assertEquals("envoy.filters.listener.tls_inspector", l.getListenerFilters(0).getName());

        FilterChain shop = l.getFilterChains(0);
        assertEquals(List.of("shop.example.com"), shop.getFilterChainMatch().getServerNamesList());
        DownstreamTlsContext simple = shop.getTransportSocket().getTypedConfig().unpack(DownstreamTlsContext.class);
        var sds = simple.getCommonTlsContext().getTlsCertificateSdsSecretConfigs(0);
        assertEquals("kubernetes://shop-cert", sds.getName());
        assertTrue(sds.getSdsConfig().hasAds(), "credentials come from istiod over ADS");
        assertFalse(simple.getRequireClientCertificate().getValue());
        assertEquals(List.of("h2", "http/1.1"), simple.getCommonTlsContext().getAlpnProtocolsList());
        assertEquals("https.443.https-shop.secure.istio-system", hcm(shop).getRds().getRouteConfigName());
        assertEquals("shop-server", hcm(shop).getStatPrefix(), "a named server's stats carry its name");
        assertEquals("outbound_0.0.0.0_443", hcm(l.getFilterChains(1)).getStatPrefix());

        DownstreamTlsContext mutual = l.getFilterChains(1).getTransportSocket().getTypedConfig()
                .unpack(DownstreamTlsContext.class);
        assertTrue(mutual.getRequireClientCertificate().getValue());
        var cv = mutual.getCommonTlsContext().getCombinedValidationContext();
        assertEquals("kubernetes://admin-cert-cacert", cv.getValidationContextSdsSecretConfig().getName());
        assertEquals("ops.example.com", cv.getDefaultValidationContext().getMatchSubjectAltNames(0).getExact());

        DownstreamTlsContext istio = l.getFilterChains(2).getTransportSocket().getTypedConfig()
                .unpack(DownstreamTlsContext.class);
        assertEquals("default", istio.getCommonTlsContext().getTlsCertificateSdsSecretConfigs(0).getName());
        assertEquals("ROOTCA", istio.getCommonTlsContext().getCombinedValidationContext()
                .getValidationContextSdsSecretConfig().getName());
        assertTrue(istio.getRequireClientCertificate().getValue());

        var shopRoutes = route("https.443.https-shop.secure.istio-system");
        assertTrue(shopRoutes.getIgnorePortInHostMatching(), "the port in Host is ignored, as from istiod");
        VirtualHost vh = shopRoutes.getVirtualHosts(0);
        assertEquals(List.of("shop.example.com"), vh.getDomainsList());
        assertEquals("outbound|9080||" + PRODUCTPAGE, vh.getRoutes(0).getRoute().getCluster(),
                "a destination without a port goes to its service's only port");
        assertEquals("blackhole:443", route("https.443.https-admin.secure.istio-system").getVirtualHosts(0).getName());
    }

    @Test
    void tlsPassthroughRoutesBySniAndTcpServersByTheirTcpRoute() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: edge, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: tls, protocol: TLS}
                    hosts: ["*.example.com"]
                    tls: {mode: PASSTHROUGH}
                  - port: {number: 5432, name: tcp, protocol: TCP}
                    hosts: ["*"]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: passthrough, namespace: default}
                spec:
                  hosts: [shop.example.com]
                  gateways: [istio-system/edge]
                  tls:
                  - match: [{sniHosts: [shop.example.com], port: 443}]
                    route: [{destination: {host: productpage, port: {number: 9080}}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: db, namespace: data}
                spec:
                  hosts: ["*"]
                  gateways: [istio-system/edge]
                  tcp:
                  - match: [{port: 5432}]
                    route:
                    - {destination: {host: db, subset: v1}, weight: 90}
                    - {destination: {host: db}, weight: 10}
                """);
        List<Listener> ls = listeners();
        Listener tls = ls.stream().filter(l -> l.getName().equals("0.0.0.0_443")).findFirst().orElseThrow();
        assertEquals(List.of("shop.example.com"), tls.getFilterChains(0).getFilterChainMatch().getServerNamesList());
        assertFalse(tls.getFilterChains(0).hasTransportSocket(), "passthrough: TLS is not terminated");
        TcpProxy p = tls.getFilterChains(0).getFilters(0).getTypedConfig().unpack(TcpProxy.class);
        assertEquals("outbound|9080||" + PRODUCTPAGE, p.getCluster());

        Listener tcp = ls.stream().filter(l -> l.getName().equals("0.0.0.0_5432")).findFirst().orElseThrow();
        TcpProxy weighted = tcp.getFilterChains(0).getFilters(0).getTypedConfig().unpack(TcpProxy.class);
        assertEquals("db.data", weighted.getStatPrefix());
        assertEquals(List.of("outbound|5432|v1|db.data.svc.cluster.local", "outbound|5432||db.data.svc.cluster.local"),
                weighted.getWeightedClusters().getClustersList().stream().map(c -> c.getName()).toList());
        assertEquals(90, weighted.getWeightedClusters().getClusters(0).getWeight());
    }

    @Test
    void autoPassthroughForwardsIstioMtlsBySniToSniDnatClusters() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: cross-network, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 15443, name: tls, protocol: TLS}
                    hosts: ["*.local"]
                    tls: {mode: AUTO_PASSTHROUGH}
                """);
        PushContext push = fixture.push();
        MergedGateway merged = MergedGateway.of(ingress, push);
        Listener l = GatewayListenerBuilder.listeners(ingress, push, merged).get(0);
        String dnat = "outbound_.9080_._." + PRODUCTPAGE;
        FilterChain chain = l.getFilterChainsList().stream()
                .filter(c -> c.getFilterChainMatch().getServerNamesList().equals(List.of(dnat))).findFirst().orElseThrow();
        assertTrue(chain.getFilterChainMatch().getApplicationProtocolsList().contains("istio-peer-exchange"));
        assertEquals(dnat, chain.getFilters(0).getTypedConfig().unpack(TcpProxy.class).getCluster());
        assertTrue(l.getFilterChainsList().stream().anyMatch(c -> c.getFilterChainMatch().getServerNames(0)
                .equals("outbound_.9080_.v1_." + PRODUCTPAGE)), "subsets get their own SNI");

        List<Cluster> clusters = GatewayClusterBuilder.gatewayClusters(push, push.scope(ingress), merged);
        assertEquals("BlackHoleCluster", clusters.get(0).getName());
        Cluster c = clusters.stream().filter(x -> x.getName().equals(dnat)).findFirst().orElseThrow();
        assertFalse(c.hasTransportSocket() || c.getTransportSocketMatchesCount() > 0,
                "the client's mTLS passes through: no upstream TLS");
        var cla = EndpointBuilder.build(dnat, push, push.scope(ingress)).orElseThrow();
        assertEquals(dnat, cla.getClusterName());
        assertEquals("10.1.0.1", cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress()
                .getAddress());
    }

    @Test
    void virtualServicesForOneHostMergeOnAGatewayWithCatchAllsLast() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["default/*"]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: a-catchall, namespace: default}
                spec:
                  hosts: [shop.example.com]
                  gateways: [istio-system/gw]
                  http: [{route: [{destination: {host: productpage}}]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: b-api, namespace: default}
                spec:
                  hosts: [shop.example.com]
                  gateways: [istio-system/gw, mesh]
                  http:
                  - match: [{uri: {prefix: /api}, gateways: [istio-system/gw]}]
                    route: [{destination: {host: productpage, subset: v1}}]
                  - match: [{uri: {prefix: /mesh-only}, gateways: [mesh]}]
                    route: [{destination: {host: productpage}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: other-namespace, namespace: data}
                spec:
                  hosts: [db.example.com]
                  gateways: [istio-system/gw]
                  http: [{route: [{destination: {host: db.data.svc.cluster.local}}]}]
                """);
        RouteConfiguration rc = route("http.80");
        assertEquals(1, rc.getVirtualHostsCount(), "the server admits VirtualServices of namespace default only");
        List<Route> routes = rc.getVirtualHosts(0).getRoutesList();
        assertEquals(2, routes.size(), "the mesh-only match is not on the gateway: " + routes);
        assertEquals("/api", routes.get(0).getMatch().getPrefix());
        assertEquals("outbound|9080|v1|" + PRODUCTPAGE, routes.get(0).getRoute().getCluster());
        assertEquals("/", routes.get(1).getMatch().getPrefix(), "the older VirtualService's catch-all goes last");
    }

    @Test
    void aServerThatDoesNotFitItsPortIsLeftOutAndNamed() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 8443, name: http, protocol: HTTP}
                    hosts: ["*"]
                  - port: {number: 8443, name: https, protocol: HTTPS}
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, credentialName: shop-cert}
                """);
        MergedGateway merged = MergedGateway.of(ingress, fixture.push());
        assertEquals(1, merged.ports().size());
        assertTrue(merged.ports().get(0).http());
        assertEquals(1, merged.rejected().size());
        assertTrue(merged.rejected().get(0).contains("istio-system/gw") && merged.rejected().get(0).contains("8443"),
                merged.rejected().toString());
    }

    /** The ingress gateway's own Service with {@code port} (a ServiceEntry port) and Gateway {@code gw} with {@code server}. */
    void gatewayBehindMappedPort(String port, String server) throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: istio-ingressgateway, namespace: istio-system}
                spec:
                  hosts: [istio-ingressgateway.istio-system.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [%s]
                  endpoints: [{address: 10.0.0.50}]
                ---
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers: [%s]
                """.formatted(port, server));
    }

    @Test
    void aServerPortTheGatewaysServiceMapsListensOnTheTargetPort() throws Exception {
        gatewayBehindMappedPort("{number: 80, name: http2, protocol: HTTP, targetPort: 8080}",
                "{port: {number: 80, name: http, protocol: HTTP}, hosts: [\"*\"]}");
        Listener l = listeners().get(0);
        assertEquals("0.0.0.0_8080", l.getName(), "istiod's resolvePorts: the stock gateway Service maps 80 to 8080");
        assertEquals(8080, l.getAddress().getSocketAddress().getPortValue());
        assertEquals("http.8080", hcm(l.getFilterChains(0)).getRds().getRouteConfigName());
        assertEquals("blackhole:80", route("http.8080").getVirtualHosts(0).getName(), "virtual hosts keep the server port");
    }

    /** istiod's gatewayRDSRouteName: an HTTPS server's route is named by the server port, not the target port. */
    @Test
    void anHttpsServerOnAMappedPortNamesItsRouteByTheServerPort() throws Exception {
        gatewayBehindMappedPort("{number: 443, name: https, protocol: HTTPS, targetPort: 8443}",
                "{port: {number: 443, name: https, protocol: HTTPS}, hosts: [\"*\"],"
                        + " tls: {mode: SIMPLE, credentialName: cert}}");
        Listener l = listeners().get(0);
        assertEquals("0.0.0.0_8443", l.getName(), "the listener is on the target port");
        assertEquals("https.443.https.gw.istio-system", hcm(l.getFilterChains(0)).getRds().getRouteConfigName());
    }

    @Test
    void sidecarResourcesDoNotNarrowWhatAGatewaySees() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: default, namespace: istio-system}
                spec:
                  egress: [{hosts: ["./*"]}]
                """);
        PushContext push = fixture.push();
        assertEquals(null, push.scope(ingress).sidecar(), "istiod gives gateways the default scope");
        assertTrue(push.services(push.scope(ingress)).stream().anyMatch(x -> x.hostname().equals(PRODUCTPAGE)));
    }

    @Test
    void aSecondTlsServerForAHostOnThePortIsLeftOut() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: a, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: https, protocol: HTTPS}
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, credentialName: a-cert}
                ---
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: b, namespace: default}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: https-b, protocol: HTTPS}
                    hosts: [shop.example.com, other.example.com]
                    tls: {mode: SIMPLE, credentialName: b-cert}
                """);
        MergedGateway merged = MergedGateway.of(ingress, fixture.push());
        assertEquals(1, merged.ports().get(0).servers().size());
        assertTrue(merged.rejected().get(0).contains("shop.example.com"), merged.rejected().toString());
        Listener l = listeners().get(0);
        assertEquals(1, l.getFilterChainsCount(), "one chain per SNI match: Envoy refuses duplicates");
    }

    @Test
    void aMutualServerWhoseCredentialHasNoCaIsReported() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: m, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: https, protocol: HTTPS}
                    hosts: [admin.example.com]
                    tls: {mode: MUTUAL, credentialName: admin-cert}
                """);
        var out = PushDiagnostics.builder();
        GatewayCredentialCheck.run(fixture.push(), List.of(ingress), (ns, n) -> n.equals("admin-cert"),
                (ns, n) -> false, out);
        var entries = out.build().entries(GatewayCredentialCheck.MISSING_CREDENTIAL);
        assertEquals(List.of("istio-system/m|443|istio-system/admin-cert-cacert"), List.copyOf(entries.keySet()));
        assertEquals(ingress.id(), entries.values().iterator().next().proxy());

        var none = PushDiagnostics.builder();
        GatewayCredentialCheck.run(fixture.push(), List.of(ingress), (ns, n) -> true, (ns, n) -> true, none);
        assertTrue(none.build().isEmpty(), "certificate and CA there: nothing to report");
    }

    @Test
    void aDelegatesGatewayMatchesAreComparedWithTheRootsResolvedInTheirOwnNamespaces() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: root, namespace: istio-system}
                spec:
                  hosts: ["*"]
                  gateways: [gw]
                  http:
                  - match: [{uri: {prefix: /shop}, gateways: [gw]}]
                    delegate: {name: shop, namespace: default}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: shop, namespace: default}
                spec:
                  http:
                  - match: [{uri: {prefix: /shop/cart}, gateways: [istio-system/gw]}]
                    route: [{destination: {host: productpage}}]
                """);
        List<Route> routes = route("http.80").getVirtualHosts(0).getRoutesList();
        assertEquals(1, routes.size(), "gw in istio-system is istio-system/gw: the leaf fits inside the root");
        assertEquals("/shop/cart", routes.get(0).getMatch().getPrefix());
        assertEquals("outbound|9080||" + PRODUCTPAGE, routes.get(0).getRoute().getCluster());
    }

    /**
     * Gateway {@code servers[].bind} as istiod's gateway builders use it: servers are merged per
     * (port, bind) (model/gateway.go ServerPort{Number, Protocol, Bind}), each bind gets its own
     * listener {@code <bind>_<port>} on that address (gateway.go buildGatewayListeners: "bind =
     * port.Bind"), and route names end in {@code .<bind>} (gatewayRDSRouteName), so the same host
     * may be served on two addresses of one port.
     */
    @Test
    void eachBindHasItsListenerAndRoutes() throws Exception {
        fixture.apply(WEB_SERVICE + """
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: shop}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - {port: {number: 8080, name: http-a, protocol: HTTP}, bind: 10.0.0.5, hosts: [shop.example.com]}
                  - {port: {number: 8080, name: http-b, protocol: HTTP}, bind: 10.0.0.6, hosts: [shop.example.com]}
                  - {port: {number: 8080, name: http, protocol: HTTP}, hosts: [other.example.com]}
                  - port: {number: 8443, name: https-a, protocol: HTTPS}
                    bind: 10.0.0.5
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [shop.example.com, other.example.com]
                  gateways: [gw]
                  http: [{route: [{destination: {host: web.shop.svc.cluster.local}}]}]
                """);
        PushContext push = fixture.push();
        MergedGateway merged = MergedGateway.of(ingress, push);
        assertEquals(List.of(), merged.rejected(), "the same host on two binds of a port is no conflict");
        List<Listener> listeners = GatewayListenerBuilder.listeners(ingress, push, merged);
        assertEquals(List.of("10.0.0.5_8080 10.0.0.5:8080", "10.0.0.6_8080 10.0.0.6:8080", "0.0.0.0_8080 0.0.0.0:8080",
                        "10.0.0.5_8443 10.0.0.5:8443"),
                listeners.stream().map(l -> l.getName() + " " + l.getAddress().getSocketAddress().getAddress() + ":"
                        + l.getAddress().getSocketAddress().getPortValue()).toList());
        assertEquals(Map.of("http.8080.10.0.0.5", List.of("shop.example.com:8080"),
                        "http.8080.10.0.0.6", List.of("shop.example.com:8080"),
                        "http.8080", List.of("other.example.com:8080"),
                        "https.8443.https-a.gw.shop.10.0.0.5", List.of("shop.example.com:8443")),
                Map.of("http.8080.10.0.0.5", virtualHosts("http.8080.10.0.0.5", push, merged),
                        "http.8080.10.0.0.6", virtualHosts("http.8080.10.0.0.6", push, merged),
                        "http.8080", virtualHosts("http.8080", push, merged),
                        "https.8443.https-a.gw.shop.10.0.0.5", virtualHosts("https.8443.https-a.gw.shop.10.0.0.5", push, merged)));
    }

    /** The service the bind tests' gateways route to. */
    static final String WEB_SERVICE = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: web, namespace: shop}
            spec:
              hosts: [web.shop.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: STATIC
              ports: [{number: 80, name: http, protocol: HTTP}]
              endpoints: [{address: 10.1.0.1}]
            ---
            """;

    /** istiod's util.BuildAddress: a bind that is no IP (validation allows unix://PATH, with port 0) is a pipe. */
    @Test
    void aUnixSocketBindListensOnAPipe() throws Exception {
        fixture.apply(WEB_SERVICE + """
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: shop}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - {port: {number: 0, name: http-uds, protocol: HTTP}, bind: "unix:///var/run/gw/http.sock", hosts: ["*"]}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: ["*"]
                  gateways: [gw]
                  http: [{route: [{destination: {host: web.shop.svc.cluster.local}}]}]
                """);
        PushContext push = fixture.push();
        MergedGateway merged = MergedGateway.of(ingress, push);
        List<Listener> listeners = GatewayListenerBuilder.listeners(ingress, push, merged);
        assertEquals(List.of("unix:///var/run/gw/http.sock_0"), listeners.stream().map(Listener::getName).toList());
        assertEquals(Address.newBuilder().setPipe(Pipe.newBuilder().setPath("/var/run/gw/http.sock")).build(),
                listeners.getFirst().getAddress());
    }

    List<String> virtualHosts(String route, PushContext push, MergedGateway merged) {
        return GatewayRouteBuilder.build(route, ingress, push, merged).orElseThrow().getVirtualHostsList().stream()
                .map(VirtualHost::getName).toList();
    }
}
