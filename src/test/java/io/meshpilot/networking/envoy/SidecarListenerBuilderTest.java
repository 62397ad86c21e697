package io.meshpilot.networking.envoy;

import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.networking.MeshFixture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.registry.aggregate.AggregateRegistry;
import io.meshpilot.registry.memory.MemoryRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sidecar LDS and its extra clusters from a PushContext built by the real validating store
 * and ServiceEntry registry: the proxy 10.0.0.1 is the endpoint of web.shop (HTTP 80 ->
 * 8080, TCP 9000, unnamed-protocol 7000) and sees db.other (Mongo 3306 with a VIP, HTTP 80)
 * and a VIP-less DNS entry on TCP 5432.
 */
class SidecarListenerBuilderTest {
    static final String WEB = "web.shop.svc.cluster.local";

    MeshFixture fixture;
    final Proxy proxy = new Proxy("sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
            List.of("10.0.0.1"), "web-1.shop", "shop.svc.cluster.local", "shop", Map.of("app", "web"), "Kubernetes",
            "1.24.0", "", "", "", Locality.NONE);

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.applyResource("/meshes/shop.yaml");
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    void apply(String yaml) throws Exception {
        fixture.apply(yaml);
    }

    PushContext push(MeshConfig mesh) {
        return fixture.push(mesh);
    }

    PushContext push() {
        return push(new MeshConfigLoader().defaults());
    }

    List<Listener> listeners(PushContext push) {
        return SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
    }

    static Listener named(List<Listener> ls, String name) {
        return ls.stream().filter(l -> l.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no listener " + name + " in " + ls.stream().map(Listener::getName).toList()));
    }

    static TcpProxy tcp(Filter f) throws InvalidProtocolBufferException {
        assertEquals(EnvoyFilters.TCP_PROXY, f.getName());
        return f.getTypedConfig().unpack(TcpProxy.class);
    }

    static HttpConnectionManager hcm(Filter f) throws InvalidProtocolBufferException {
        assertEquals(EnvoyFilters.HTTP_CONNECTION_MANAGER, f.getName());
        return f.getTypedConfig().unpack(HttpConnectionManager.class);
    }

    static List<FilterChain> chainsForPort(Listener l, int port) {
        return l.getFilterChainsList().stream()
                .filter(c -> c.getFilterChainMatch().getDestinationPort().getValue() == port).toList();
    }

    /**
     * istiod: a headless Kubernetes Service's TCP port gets a listener per endpoint IP (not
     * the proxy's own), tcp_proxy to its original-destination cluster; its HTTP port the shared
     * wildcard HTTP listener.
     */
    @Test
    void headlessKubernetesServiceGetsAListenerPerEndpoint() throws Exception {
        var kube = new MemoryRegistry("Kubernetes", "Kubernetes", fixture.updates);
        String host = "db.shop.svc.cluster.local";
        kube.addService(new Service(host, "shop", List.of(
                new Port("tcp-db", 5433, Protocol.TCP),
                new Port("http-admin", 8081, Protocol.HTTP)),
                Service.UNSPECIFIED_IP, Map.of(), "", Resolution.PASSTHROUGH,
                false, Set.of(), Map.of(), "Kubernetes", "Kubernetes", Instant.EPOCH, null));
        List<IstioEndpoint> eps = new ArrayList<>();
        for (String ip : List.of("10.0.9.2", "10.0.9.1", "10.0.0.1")) {
            for (String port : List.of("tcp-db", "http-admin")) {
                eps.add(new IstioEndpoint(ip, port.equals("tcp-db") ? 5433 : 8081, port, Map.of(),
                        "", "", Locality.NONE, "istio", 0, IstioEndpoint.HealthStatus.HEALTHY, "",
                        "shop"));
            }
        }
        kube.setEndpoints(host, eps);
        var aggregate = new AggregateRegistry();
        aggregate.addRegistry(fixture.registry);
        aggregate.addRegistry(kube);
        PushContext push = PushContext.build(aggregate, fixture.store, fixture.updates.index,
                new MeshConfigLoader().defaults(), "cluster.local", 1);
        List<Listener> ls = listeners(push);
        List<String> names = ls.stream().map(Listener::getName).toList();
        assertTrue(names.containsAll(List.of("10.0.9.1_5433", "10.0.9.2_5433", "0.0.0.0_8081")), names.toString());
        assertFalse(names.contains("10.0.0.1_5433"), "not to the proxy's own IP: " + names);
        assertFalse(names.contains("0.0.0.0_5433"), names.toString());
        Listener one = named(ls, "10.0.9.1_5433");
        assertEquals("10.0.9.1", one.getAddress().getSocketAddress().getAddress());
        assertEquals("outbound|5433||" + host, tcp(one.getFilterChains(0).getFilters(0)).getCluster());
        Cluster c = ClusterBuilder.build("outbound|5433||" + host, push, push.scope(proxy)).orElseThrow();
        assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, c.getType());
    }

    @Test
    void outboundListenersPerServicePort() throws Exception {
        List<Listener> ls = listeners(push());
        assertEquals(List.of("0.0.0.0_5432", "0.0.0.0_7000", "0.0.0.0_80", "240.0.0.1_9000", "240.0.0.2_3306",
                "virtualOutbound", "virtualInbound"), ls.stream().map(Listener::getName).toList());

        Listener http = named(ls, "0.0.0.0_80"); // shared by web and db
        assertEquals("0.0.0.0", http.getAddress().getSocketAddress().getAddress());
        assertEquals(80, http.getAddress().getSocketAddress().getPortValue());
        assertFalse(http.getBindToPort().getValue());
        assertEquals(1, http.getFilterChainsCount());
        HttpConnectionManager h = hcm(http.getFilterChains(0).getFilters(0));
        assertEquals("80", h.getRds().getRouteConfigName());
        assertTrue(h.getRds().getConfigSource().hasAds());
        assertEquals("outbound_0.0.0.0_80", h.getStatPrefix());
        assertEquals(EnvoyFilters.ROUTER, h.getHttpFilters(h.getHttpFiltersCount() - 1).getName());

        Listener mongo = named(ls, "240.0.0.2_3306");
        assertEquals("240.0.0.2", mongo.getAddress().getSocketAddress().getAddress());
        TcpProxy t = tcp(mongo.getFilterChains(0).getFilters(0));
        assertEquals("outbound|3306||db.other.svc.cluster.local", t.getCluster());
        assertEquals("outbound|3306||db.other.svc.cluster.local", t.getStatPrefix());
        assertEquals("outbound|9000||" + WEB, tcp(named(ls, "240.0.0.1_9000").getFilterChains(0).getFilters(0)).getCluster());
        // no VIP: the wildcard address
        assertEquals("outbound|5432||pg.example.com", tcp(named(ls, "0.0.0.0_5432").getFilterChains(0).getFilters(0)).getCluster());
    }

    @Test
    void tcpAndTlsPortsFollowTheirVirtualServiceRoutes() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: api, namespace: other}
                spec:
                  hosts: [api.other.svc.cluster.local]
                  addresses: [240.0.0.3]
                  location: MESH_INTERNAL
                  ports: [{number: 443, name: tls, protocol: TLS}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.1.3}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: db, namespace: other}
                spec:
                  hosts: [db.other.svc.cluster.local]
                  tcp:
                  - match: [{port: 3306, sourceLabels: {app: other}}]
                    route: [{destination: {host: pg.example.com, port: {number: 5432}}}]
                  - match: [{port: 3306}]
                    route:
                    - {destination: {host: db.other.svc.cluster.local, subset: v2}, weight: 25}
                    - {destination: {host: db.other.svc.cluster.local, subset: v1}, weight: 75}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: api, namespace: other}
                spec:
                  hosts: [api.other.svc.cluster.local]
                  tls:
                  - match: [{sniHosts: [api.other.svc.cluster.local], port: 443}]
                    route: [{destination: {host: api.other.svc.cluster.local, subset: v2}}]
                """);
        List<Listener> ls = listeners(push());
        Listener db = named(ls, "240.0.0.2_3306");
        assertEquals(1, db.getFilterChainsCount());
        TcpProxy weighted = tcp(db.getFilterChains(0).getFilters(0));
        assertEquals("db.other", weighted.getStatPrefix(), "weighted TCP routes count under the VirtualService");
        assertEquals(List.of("outbound|3306|v2|db.other.svc.cluster.local", "outbound|3306|v1|db.other.svc.cluster.local"),
                weighted.getWeightedClusters().getClustersList().stream().map(c -> c.getName()).toList());

        Listener api = named(ls, "240.0.0.3_443");
        assertEquals(EnvoyFilters.TLS_INSPECTOR, api.getListenerFilters(0).getName());
        assertEquals(List.of("api.other.svc.cluster.local"),
                api.getFilterChains(0).getFilterChainMatch().getServerNamesList());
        assertEquals("outbound|443|v2|api.other.svc.cluster.local", tcp(api.getFilterChains(0).getFilters(0)).getCluster());
        assertEquals("outbound|443||api.other.svc.cluster.local", tcp(api.getFilterChains(1).getFilters(0)).getCluster(),
                "other SNI names reach the service itself");
    }

    @Test
    void tlsServicesWithoutAVipAreToldApartBySni() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: external, namespace: other}
                spec:
                  hosts: [api.example.com, www.example.org]
                  location: MESH_EXTERNAL
                  ports: [{number: 443, name: https, protocol: HTTPS}]
                  resolution: DNS
                """);
        Listener l = named(listeners(push()), "0.0.0.0_443");
        assertEquals(EnvoyFilters.TLS_INSPECTOR, l.getListenerFilters(0).getName());
        assertEquals(List.of(List.of("api.example.com"), List.of("www.example.org"), List.of()),
                l.getFilterChainsList().stream().map(c -> c.getFilterChainMatch().getServerNamesList()).toList());
        assertEquals("outbound|443||www.example.org", tcp(l.getFilterChains(1).getFilters(0)).getCluster());
        assertEquals("PassthroughCluster", tcp(l.getFilterChains(2).getFilters(0)).getCluster(),
                "other TLS on the port is not sent to either service");
    }

    @Test
    void sidecarIngressListenersReplaceTheServicePortsAndGoToTheirDefaultEndpoint() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: web, namespace: shop}
                spec:
                  workloadSelector: {labels: {app: web}}
                  ingress:
                  - port: {number: 8080, protocol: HTTP, name: http}
                    defaultEndpoint: 127.0.0.1:18080
                  - port: {number: 9443, protocol: TCP, name: tcp-admin}
                    defaultEndpoint: 0.0.0.0:9444
                  - port: {number: 7070, protocol: GRPC, name: grpc}
                    defaultEndpoint: unix:///var/run/app.sock
                  egress: [{hosts: ["./*"]}]
                """);
        PushContext push = push();
        Listener inbound = named(listeners(push), "virtualInbound");
        Set<Integer> ports = new TreeSet<>();
        inbound.getFilterChainsList().forEach(c -> ports.add(c.getFilterChainMatch().getDestinationPort().getValue()));
        assertEquals(Set.of(0, 15006, 7070, 8080, 9443), ports, "the ingress ports, not the service's 80/9000/7000");

        var clusters = SidecarClusterBuilder.inboundClusters(proxy, push);
        assertEquals(List.of("inbound|7070||", "inbound|8080||", "inbound|9443||"),
                clusters.stream().map(c -> c.getName()).toList());
        var pipe = clusters.get(0).getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress();
        assertEquals("/var/run/app.sock", pipe.getPipe().getPath());
        var loopback = clusters.get(1).getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress();
        assertEquals("127.0.0.1", loopback.getSocketAddress().getAddress());
        assertEquals(18080, loopback.getSocketAddress().getPortValue());
        assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, clusters.get(2).getType());
        assertEquals(9444, clusters.get(2).getOriginalDstLbConfig().getUpstreamPortOverride().getValue(),
                "0.0.0.0:<port>: the original destination address on that port");
    }

    /**
     * istiod's buildInboundClusterForPortOrUDS: the Sidecar's connection pool replaces the
     * inbound cluster's (SidecarScope.InboundConnectionPoolForPort: the ingress listener's for
     * its port, else inboundConnectionPool), so the receiver has the capacity its clients get.
     */
    @Test
    void sidecarConnectionPoolsSetTheInboundClustersCircuitBreakers() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: web, namespace: shop}
                spec:
                  workloadSelector: {labels: {app: web}}
                  inboundConnectionPool: {tcp: {maxConnections: 10, connectTimeout: 3s}}
                  ingress:
                  - port: {number: 8080, protocol: HTTP, name: http}
                    defaultEndpoint: 127.0.0.1:18080
                    connectionPool: {http: {http1MaxPendingRequests: 5, idleTimeout: 30s}}
                  - port: {number: 9443, protocol: TCP, name: tcp-admin}
                    defaultEndpoint: 0.0.0.0:9444
                  egress: [{hosts: ["./*"]}]
                """);
        Map<String, String> limits = new TreeMap<>();
        for (Cluster c : SidecarClusterBuilder.inboundClusters(proxy, push())) {
            var t = c.getCircuitBreakers().getThresholds(0);
            limits.put(c.getName(), "connections " + Integer.toUnsignedLong(t.getMaxConnections().getValue())
                    + " pending " + Integer.toUnsignedLong(t.getMaxPendingRequests().getValue())
                    + " connect " + c.getConnectTimeout().getSeconds() + "s");
        }
        assertEquals(Map.of("inbound|8080||", "connections 4294967295 pending 5 connect 10s",
                "inbound|9443||", "connections 10 pending 4294967295 connect 3s"), limits,
                "the port's own pool replaces inboundConnectionPool as a whole");
    }

    @Test
    void unknownProtocolPortIsSniffed() throws Exception {
        Listener l = named(listeners(push()), "0.0.0.0_7000");
        assertEquals(List.of(EnvoyFilters.TLS_INSPECTOR, EnvoyFilters.HTTP_INSPECTOR),
                l.getListenerFiltersList().stream().map(ListenerFilter::getName).toList());
        FilterChain httpOnVip = l.getFilterChains(0);
        assertEquals("240.0.0.1", httpOnVip.getFilterChainMatch().getPrefixRanges(0).getAddressPrefix());
        assertEquals(List.of("http/1.1", "h2c"), httpOnVip.getFilterChainMatch().getApplicationProtocolsList());
        assertEquals("7000", hcm(httpOnVip.getFilters(0)).getRds().getRouteConfigName());
        assertEquals("outbound|7000||" + WEB, tcp(l.getFilterChains(1).getFilters(0)).getCluster());
        FilterChain last = l.getFilterChains(l.getFilterChainsCount() - 1);
        assertEquals(EnvoyFilters.PASSTHROUGH_CLUSTER, tcp(last.getFilters(0)).getCluster());
    }

    @Test
    void virtualOutboundFollowsOutboundTrafficPolicy() throws Exception {
        Listener allow = named(listeners(push()), "virtualOutbound");
        assertEquals(15001, allow.getAddress().getSocketAddress().getPortValue());
        assertEquals("0.0.0.0", allow.getAddress().getSocketAddress().getAddress());
        assertTrue(allow.getUseOriginalDst().getValue());
        FilterChain blackhole = allow.getFilterChains(0);
        assertEquals("virtualOutbound-blackhole", blackhole.getName());
        assertEquals(15001, blackhole.getFilterChainMatch().getDestinationPort().getValue());
        assertEquals(EnvoyFilters.BLACKHOLE_CLUSTER, tcp(blackhole.getFilters(0)).getCluster());
        FilterChain catchAll = allow.getFilterChains(1);
        assertEquals("virtualOutbound-catchall-tcp", catchAll.getName());
        assertEquals("PassthroughCluster", tcp(catchAll.getFilters(0)).getCluster());
        assertEquals("PassthroughCluster", tcp(catchAll.getFilters(0)).getStatPrefix());

        MeshConfig registryOnly = new MeshConfigLoader().defaults().toBuilder().setOutboundTrafficPolicy(
                MeshConfig.OutboundTrafficPolicy.newBuilder().setMode(MeshConfig.OutboundTrafficPolicy.Mode.REGISTRY_ONLY))
                .build();
        Listener deny = named(listeners(push(registryOnly)), "virtualOutbound");
        assertEquals("BlackHoleCluster", tcp(deny.getFilterChains(1).getFilters(0)).getCluster());
        // unknown-protocol listeners fall back the same way
        Listener sniff = named(listeners(push(registryOnly)), "0.0.0.0_7000");
        assertEquals("BlackHoleCluster", tcp(sniff.getFilterChains(sniff.getFilterChainsCount() - 1).getFilters(0)).getCluster());
    }

    @Test
    void sidecarOutboundTrafficPolicyOverridesTheMesh() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: default, namespace: shop}
                spec:
                  outboundTrafficPolicy: {mode: REGISTRY_ONLY}
                """);
        Listener l = named(listeners(push()), "virtualOutbound");
        assertEquals("BlackHoleCluster", tcp(l.getFilterChains(1).getFilters(0)).getCluster());
    }

    @Test
    void virtualInboundPermissiveByDefault() throws Exception {
        Listener l = named(listeners(push()), "virtualInbound");
        assertEquals(15006, l.getAddress().getSocketAddress().getPortValue());
        assertEquals("0.0.0.0", l.getAddress().getSocketAddress().getAddress());
        assertEquals(List.of(EnvoyFilters.ORIGINAL_DST, EnvoyFilters.TLS_INSPECTOR, EnvoyFilters.HTTP_INSPECTOR),
                l.getListenerFiltersList().stream().map(ListenerFilter::getName).toList());
        FilterChain blackhole = chainsForPort(l, 15006).get(0);
        assertEquals("virtualInbound-blackhole", blackhole.getName());
        assertEquals("BlackHoleCluster", tcp(blackhole.getFilters(0)).getCluster());

        List<FilterChain> http = chainsForPort(l, 8080); // the target port, not the service port 80
        assertEquals(List.of("tls", "raw_buffer"), http.stream().map(c -> c.getFilterChainMatch().getTransportProtocol()).toList());
        assertTrue(http.get(0).getFilterChainMatch().getApplicationProtocolsList().contains("istio"));
        assertTrue(http.get(0).hasTransportSocket());
        assertFalse(http.get(1).hasTransportSocket());
        for (FilterChain c : http) {
            assertEquals("0.0.0.0_8080", c.getName());
            HttpConnectionManager h = hcm(c.getFilters(0));
            assertEquals("inbound_0.0.0.0_8080;", h.getStatPrefix());
            assertEquals("inbound|8080||", h.getRouteConfig().getVirtualHosts(0).getRoutes(0).getRoute().getCluster());
        }
        DownstreamTlsContext tls = http.get(0).getTransportSocket().getTypedConfig().unpack(DownstreamTlsContext.class);
        assertTrue(tls.getRequireClientCertificate().getValue());
        var common = tls.getCommonTlsContext();
        assertEquals("default", common.getTlsCertificateSdsSecretConfigs(0).getName());
        assertEquals("sds-grpc", common.getTlsCertificateSdsSecretConfigs(0).getSdsConfig().getApiConfigSource()
                .getGrpcServices(0).getEnvoyGrpc().getClusterName());
        assertEquals("ROOTCA", common.getCombinedValidationContext().getValidationContextSdsSecretConfig().getName());
        assertEquals(List.of("h2", "http/1.1"), common.getAlpnProtocolsList());

        List<FilterChain> tcp = chainsForPort(l, 9000); // mTLS, plaintext, plain TLS
        assertEquals(List.of("tls", "raw_buffer", "tls"), tcp.stream().map(c -> c.getFilterChainMatch().getTransportProtocol()).toList());
        assertEquals("inbound|9000||", tcp(tcp.get(1).getFilters(0)).getCluster());
        assertEquals(List.of("istio-peer-exchange", "h2", "http/1.1"), tcp.get(0).getTransportSocket().getTypedConfig()
                .unpack(DownstreamTlsContext.class).getCommonTlsContext().getAlpnProtocolsList());
        // passthrough chains for undeclared ports go to InboundPassthroughCluster
        List<FilterChain> any = chainsForPort(l, 0);
        assertEquals(5, any.size());
        assertTrue(any.stream().anyMatch(c -> c.getName().equals("virtualInbound-catchall-http")));
    }

    static Set<String> transports(Listener l, int port) {
        Set<String> out = new TreeSet<>();
        chainsForPort(l, port).forEach(c -> out.add(c.getFilterChainMatch().getTransportProtocol()
                + (c.hasTransportSocket() ? "+mtls" : "")));
        return out;
    }

    @Test
    void strictMeshWide() throws Exception {
        apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: istio-system}
                spec: {mtls: {mode: STRICT}}
                """);
        Listener l = named(listeners(push()), "virtualInbound");
        assertEquals(Set.of("tls+mtls"), transports(l, 8080));
        assertEquals(Set.of("tls+mtls"), transports(l, 9000));
        assertEquals(Set.of("tls+mtls"), transports(l, 0));
    }

    @Test
    void disableNamespaceWide() throws Exception {
        apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: istio-system}
                spec: {mtls: {mode: STRICT}}
                ---
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: shop}
                spec: {mtls: {mode: DISABLE}}
                """);
        Listener l = named(listeners(push()), "virtualInbound");
        assertEquals(Set.of("raw_buffer"), transports(l, 8080));
        assertEquals(Set.of("raw_buffer"), transports(l, 9000));
        assertEquals(Set.of("raw_buffer"), transports(l, 0));
        // nothing matches on TLS: no TLS inspector
        assertFalse(l.getListenerFiltersList().stream().anyMatch(f -> f.getName().equals(EnvoyFilters.TLS_INSPECTOR)));
    }

    @Test
    void portLevelOverride() throws Exception {
        apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: web, namespace: shop}
                spec:
                  selector: {matchLabels: {app: web}}
                  mtls: {mode: STRICT}
                  portLevelMtls: {9000: {mode: DISABLE}, 8080: {mode: PERMISSIVE}, 9999: {mode: DISABLE}}
                """);
        Listener l = named(listeners(push()), "virtualInbound");
        assertEquals(Set.of("tls+mtls", "raw_buffer"), transports(l, 8080));
        assertEquals(Set.of("raw_buffer"), transports(l, 9000));
        assertEquals(Set.of("tls+mtls"), transports(l, 0));
        // an undeclared port with a port-level mode gets its own passthrough chains
        assertEquals(Set.of("raw_buffer"), transports(l, 9999));
        assertEquals(EnvoyFilters.INBOUND_PASSTHROUGH_CLUSTER, tcp(chainsForPort(l, 9999).stream()
                .filter(c -> c.getName().equals("virtualInbound")).findFirst().orElseThrow().getFilters(0)).getCluster());
        // a selector that does not match the workload changes nothing
        apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: other, namespace: shop}
                spec:
                  selector: {matchLabels: {app: other}}
                  mtls: {mode: DISABLE}
                """);
        assertEquals(Set.of("tls+mtls"), transports(named(listeners(push()), "virtualInbound"), 0));
    }

    @Test
    void extraClusters() {
        PushContext push = push();
        List<Cluster> cs = SidecarListenerBuilder.extraClusters(proxy, push, push.scope(proxy));
        assertEquals(List.of("BlackHoleCluster", "PassthroughCluster", "InboundPassthroughCluster", "inbound|7000||",
                "inbound|8080||", "inbound|9000||"), cs.stream().map(Cluster::getName).toList());
        Cluster blackhole = cs.get(0);
        assertEquals(Cluster.DiscoveryType.STATIC, blackhole.getType());
        assertFalse(blackhole.hasLoadAssignment());
        Cluster passthrough = cs.get(1);
        assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, passthrough.getType());
        assertEquals(Cluster.LbPolicy.CLUSTER_PROVIDED, passthrough.getLbPolicy());
        assertEquals(10, passthrough.getConnectTimeout().getSeconds());
        assertEquals("127.0.0.6", cs.get(2).getUpstreamBindConfig().getSourceAddress().getAddress());
        Cluster inbound = cs.get(4);
        assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, inbound.getType());
        assertEquals("127.0.0.6", inbound.getUpstreamBindConfig().getSourceAddress().getAddress());

        MeshConfig localhost = new MeshConfigLoader().defaults().toBuilder().setInboundTrafficPolicy(
                MeshConfig.InboundTrafficPolicy.newBuilder().setMode(MeshConfig.InboundTrafficPolicy.Mode.LOCALHOST)).build();
        PushContext push2 = push(localhost);
        Cluster local = SidecarListenerBuilder.extraClusters(proxy, push2, push2.scope(proxy)).stream()
                .filter(c -> c.getName().equals("inbound|8080||")).findFirst().orElseThrow();
        assertEquals(Cluster.DiscoveryType.STATIC, local.getType());
        var addr = local.getLoadAssignment().getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress();
        assertEquals("127.0.0.1", addr.getAddress());
        assertEquals(8080, addr.getPortValue());
    }

    /** Every cluster a listener names, from tcp_proxy filters and inline routes. */
    static Set<String> referencedClusters(List<Listener> ls) throws InvalidProtocolBufferException {
        Set<String> out = new TreeSet<>();
        for (Listener l : ls) {
            for (FilterChain c : l.getFilterChainsList()) {
                for (Filter f : c.getFiltersList()) {
                    if (f.getName().equals(EnvoyFilters.TCP_PROXY)) {
                        out.add(tcp(f).getCluster());
                    } else {
                        HttpConnectionManager h = hcm(f);
                        for (var vh : h.getRouteConfig().getVirtualHostsList()) {
                            vh.getRoutesList().forEach(r -> out.add(r.getRoute().getCluster()));
                        }
                    }
                }
            }
        }
        return out;
    }

    @Test
    void everyReferencedClusterExists() throws Exception {
        apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: web, namespace: shop}
                spec:
                  selector: {matchLabels: {app: web}}
                  portLevelMtls: {9999: {mode: STRICT}}
                """);
        PushContext push = push();
        ProxyScope scope = push.scope(proxy);
        List<Listener> ls = SidecarListenerBuilder.listeners(proxy, push, scope);
        Set<String> extra = new HashSet<>();
        SidecarListenerBuilder.extraClusters(proxy, push, scope).forEach(c -> extra.add(c.getName()));
        Set<String> referenced = referencedClusters(ls);
        assertTrue(referenced.size() >= 8, referenced.toString());
        for (String name : referenced) {
            assertTrue(extra.contains(name) || ClusterBuilder.build(name, push, scope).isPresent(),
                    "listener references unknown cluster " + name);
        }
    }

    @Test
    void addressesAndFilterChainMatchesAreUnique() {
        apply_quiet();
        PushContext push = push();
        List<Listener> ls = listeners(push);
        Set<String> addresses = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (Listener l : ls) {
            var a = l.getAddress().getSocketAddress();
            assertTrue(addresses.add(a.getAddress() + ":" + a.getPortValue()), "duplicate address " + a);
            assertTrue(names.add(l.getName()), "duplicate name " + l.getName());
            Set<Object> matches = new HashSet<>();
            for (FilterChain c : l.getFilterChainsList()) {
                assertTrue(matches.add(c.getFilterChainMatch()), l.getName() + ": duplicate match " + c.getFilterChainMatch());
                assertNotNull(c.getFiltersList());
                assertFalse(c.getFiltersList().isEmpty(), l.getName() + ": chain without filters");
            }
        }
    }

    /** A second service on the same VIP-less TCP port and one on the HTTP port 80 without a VIP. */
    void apply_quiet() {
        try {
            apply("""
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: pg2, namespace: other}
                    spec:
                      hosts: [pg2.example.com]
                      location: MESH_EXTERNAL
                      ports: [{number: 5432, name: tcp-pg, protocol: TCP}, {number: 80, name: tcp-x, protocol: TCP},
                              {number: 15001, name: http-capture, protocol: HTTP}]
                      resolution: DNS
                    """);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        List<Listener> ls = listeners(push());
        List<String> names = new ArrayList<>(ls.stream().map(Listener::getName).toList());
        assertEquals(1, names.stream().filter(n -> n.equals("0.0.0.0_5432")).count());
    }

    /** istiod's ConvertAddressToCidr: a CIDR VIP keeps its length; what is not an IP gets no chain. */
    @Test
    void vipCidrRangesAreReadLikeIstiod() {
        assertEquals("10.0.0.0", SidecarOutboundListenerBuilder.cidrOf("10.0.0.0/16").getAddressPrefix());
        assertEquals(16, SidecarOutboundListenerBuilder.cidrOf("10.0.0.0/16").getPrefixLen().getValue());
        assertEquals(32, SidecarOutboundListenerBuilder.cidrOf("10.0.0.1").getPrefixLen().getValue());
        assertEquals(128, SidecarOutboundListenerBuilder.cidrOf("2001:db8::1").getPrefixLen().getValue());
        assertEquals(128, SidecarOutboundListenerBuilder.cidrOf("::ffff:10.0.0.1").getPrefixLen().getValue());
        assertEquals(null, SidecarOutboundListenerBuilder.cidrOf("010.0.0.1"));
        assertEquals(null, SidecarOutboundListenerBuilder.cidrOf("10.0.0.0/+8"));
    }
}
