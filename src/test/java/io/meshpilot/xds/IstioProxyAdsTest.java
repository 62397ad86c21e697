package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.api.envoy.extensions.stats.MetricConfig;
import io.meshpilot.api.envoy.extensions.stats.PluginConfig;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through real ADS on the embedded bookinfo with a mesh-wide Telemetry that keeps prometheus but
 * drops REQUEST_COUNT and adds a tag to REQUEST_DURATION: an istio-proxy sidecar and gateway (the
 * node istio-agent sends, with PROXY_CONFIG) get Istio's stats and metadata-exchange filters in
 * LDS (the gateway's ISTIO_MUTUAL TCP server with the network exchange first) and the upstream
 * exchange on their outbound clusters; a plain Envoy sidecar of the same
 * workload gets none of them (it would NACK them). Every response prints with the registry
 * /debug/config_dump uses, so each new typed config is known there.
 */
class IstioProxyAdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String PRODUCTPAGE = "sidecar~10.0.0.7~productpage-v1-abc.default~default.svc.cluster.local";
    static final Map<String, String> PRODUCTPAGE_META = Map.of("NAMESPACE", "default",
            "LABELS", "{\"app\":\"productpage\",\"version\":\"v1\"}");
    static final String PROXY_CONFIG = "{\"discoveryAddress\":\"istiod.istio-system.svc:15012\"}";

    @TempDir
    static Path dir;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        Files.writeString(dir.resolve("config/telemetry.yaml"), """
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: mesh-default, namespace: istio-system}
                spec:
                  metrics:
                  - providers: [{name: prometheus}]
                    overrides:
                    - match: {metric: REQUEST_COUNT}
                      disabled: true
                    - match: {metric: REQUEST_DURATION}
                      tagOverrides: {request_host: {value: "request.host"}}
                ---
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: bookinfo-gateway, namespace: default}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - {port: {number: 8080, name: http, protocol: HTTP}, hosts: ["*"]}
                  - {port: {number: 9443, name: tls-mesh, protocol: TLS}, hosts: ["*"], tls: {mode: ISTIO_MUTUAL}}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: bookinfo, namespace: default}
                spec:
                  hosts: ["*"]
                  gateways: [bookinfo-gateway]
                  http:
                  - match: [{uri: {exact: /productpage}}]
                    route: [{destination: {host: productpage, port: {number: 9080}}}]
                  tcp:
                  - match: [{port: 9443}]
                    route: [{destination: {host: details, port: {number: 9080}}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: cross-network, namespace: istio-system}
                spec:
                  selector: {istio: eastwestgateway}
                  servers:
                  - {port: {number: 15443, name: tls, protocol: TLS}, hosts: ["*.local"], tls: {mode: AUTO_PASSTHROUGH}}
                """);
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static Map<String, String> agent(Map<String, String> metadata) {
        Map<String, String> m = new HashMap<>(metadata);
        m.put("PROXY_CONFIG", PROXY_CONFIG);
        return Map.copyOf(m);
    }

    static List<String> httpFilters(Listener l) throws Exception {
        return hcm(l).getHttpFiltersList().stream().map(HttpFilter::getName).toList();
    }

    static HttpConnectionManager hcm(Listener l) throws Exception {
        return l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
    }

    static PluginConfig stats(Listener l) throws Exception {
        for (HttpFilter f : hcm(l).getHttpFiltersList()) {
            if (f.getName().equals("istio.stats")) {
                return f.getTypedConfig().unpack(PluginConfig.class);
            }
        }
        throw new AssertionError("no istio.stats in " + l.getName());
    }

    static Listener named(List<Listener> all, String name) {
        return all.stream().filter(l -> l.getName().equals(name)).findFirst().orElseThrow(() -> new AssertionError(
                "no " + name + " in " + all.stream().map(Listener::getName).toList()));
    }

    static final PluginConfig CLIENT_SIDE = PluginConfig.newBuilder()
            .addMetrics(MetricConfig.newBuilder().setName("requests_total").setDrop(true))
            .addMetrics(MetricConfig.newBuilder().setName("request_duration_milliseconds")
                    .putDimensions("request_host", "request.host"))
            .build();

    @Test
    void anIstioProxySidecarGetsStatsAndMetadataExchange() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"), PRODUCTPAGE, agent(PRODUCTPAGE_META))) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = c.await(TypeUrls.CLUSTER, WAIT);
            for (Cluster cl : EnvoySidecarXdsTest.unpack(cds, Cluster.class)) {
                boolean outbound = cl.getName().startsWith("outbound|") || cl.getName().equals("PassthroughCluster");
                assertEquals(outbound ? List.of("istio.metadata_exchange") : List.of(),
                        cl.getFiltersList().stream().map(f -> f.getName()).toList(), cl.getName());
            }
            c.ack(cds, List.of());
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            List<Listener> listeners = EnvoySidecarXdsTest.unpack(lds, Listener.class);
            Listener reviews = named(listeners, "0.0.0.0_9080");
            assertEquals(List.of("istio.metadata_exchange", "envoy.filters.http.grpc_stats", "istio.alpn",
                    "envoy.filters.http.fault", "envoy.filters.http.cors", "istio.stats", "envoy.filters.http.router"),
                    httpFilters(reviews));
            assertEquals(CLIENT_SIDE, stats(reviews), "REQUEST_COUNT dropped, REQUEST_DURATION tagged");
            c.ack(lds, List.of());
            assertNull(c.error());
        }
    }

    @Test
    void anIstioProxyGatewayGetsTheGatewayClassConfig() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"),
                "router~10.0.0.9~istio-ingressgateway-1.istio-system~istio-system.svc.cluster.local",
                agent(Map.of("NAMESPACE", "istio-system", "LABELS", "{\"istio\":\"ingressgateway\"}")))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            List<Listener> listeners = EnvoySidecarXdsTest.unpack(lds, Listener.class);
            Listener gateway = named(listeners, "0.0.0.0_8080");
            List<String> filters = httpFilters(gateway);
            assertEquals("istio.metadata_exchange", filters.get(0), filters.toString());
            assertEquals(filters.indexOf("envoy.filters.http.grpc_stats") + 1, filters.indexOf("istio.alpn"),
                    "gateways offer Istio's ALPN upstream too: " + filters);
            assertEquals(CLIENT_SIDE.toBuilder().setDisableHostHeaderFallback(true).build(), stats(gateway),
                    "gateways read the client side and do not fall back to the host header");
            assertEquals(List.of("istio.metadata_exchange", "istio.stats", "envoy.filters.network.tcp_proxy"),
                    named(listeners, "0.0.0.0_9443").getFilterChains(0).getFiltersList().stream()
                            .map(f -> f.getName()).toList(), "an ISTIO_MUTUAL TCP server exchanges metadata first");
            c.ack(lds, List.of());
            c.subscribe(TypeUrls.CLUSTER, List.of());
            for (Cluster cl : EnvoySidecarXdsTest.unpack(c.await(TypeUrls.CLUSTER, WAIT), Cluster.class)) {
                assertEquals(cl.getName().startsWith("outbound|"), cl.getFiltersCount() == 1, cl.getName());
            }
        }
    }

    /**
     * Review s3 finding 8: istiod builds an AUTO_PASSTHROUGH gateway's SNI-DNAT clusters through
     * applyDestinationRule, which gives istio-proxy the upstream metadata exchange on them too.
     */
    @Test
    void anIstioProxyEastWestGatewaysSniDnatClustersExchangeMetadata() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"),
                "router~10.0.0.10~istio-eastwestgateway-1.istio-system~istio-system.svc.cluster.local",
                agent(Map.of("NAMESPACE", "istio-system", "LABELS", "{\"istio\":\"eastwestgateway\"}")))) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            List<Cluster> clusters = EnvoySidecarXdsTest.unpack(c.await(TypeUrls.CLUSTER, WAIT), Cluster.class);
            List<Cluster> sniDnat = clusters.stream().filter(cl -> cl.getName().startsWith("outbound_.")).toList();
            assertTrue(sniDnat.size() > 0, "AUTO_PASSTHROUGH gives SNI-DNAT clusters: "
                    + clusters.stream().map(Cluster::getName).toList());
            for (Cluster cl : clusters) {
                boolean outbound = cl.getName().startsWith("outbound|") || cl.getName().startsWith("outbound_.");
                assertEquals(outbound ? List.of("istio.metadata_exchange") : List.of(),
                        cl.getFiltersList().stream().map(f -> f.getName()).toList(), cl.getName());
            }
        }
    }

    /** The istio-proxy sidecar connects first, so shared listeners and clusters are cached for it: plain Envoy must not get them. */
    @Test
    void plainEnvoyOfTheSameWorkloadGetsNoneOfThem() throws Exception {
        try (AdsClient istio = new AdsClient(server.ports().get("grpc"), PRODUCTPAGE, agent(PRODUCTPAGE_META))) {
            istio.subscribe(TypeUrls.CLUSTER, List.of());
            assertTrue(istio.await(TypeUrls.CLUSTER, WAIT).toString().contains("istio.metadata_exchange"));
            istio.subscribe(TypeUrls.LISTENER, List.of());
            assertTrue(istio.await(TypeUrls.LISTENER, WAIT).toString().contains("istio.stats"));
        }
        try (AdsClient c = new AdsClient(server.ports().get("grpc"), PRODUCTPAGE, PRODUCTPAGE_META)) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = c.await(TypeUrls.CLUSTER, WAIT);
            assertTrue(EnvoySidecarXdsTest.unpack(cds, Cluster.class).stream().allMatch(cl -> cl.getFiltersCount() == 0));
            c.ack(cds, List.of());
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            String all = lds.toString();
            assertTrue(!all.contains("istio.stats") && !all.contains("istio.metadata_exchange")
                    && !all.contains("grpc_stats"), "plain Envoy: none of Istio's filters");
            c.ack(lds, List.of());
            assertNull(c.error());
        }
    }
}
