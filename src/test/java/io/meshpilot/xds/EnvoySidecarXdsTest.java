package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Envoy sidecar over ADS on the embedded bookinfo: wildcard LDS, the RDS names its
 * listeners ask for, wildcard CDS; every route name a listener references is served, every
 * cluster a listener or route references is in CDS, and the reviews VirtualService shows in
 * the route for port 9080.
 */
class EnvoySidecarXdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        Files.writeString(dir.resolve("config/gateway.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: bookinfo-gateway, namespace: default}
                spec:
                  selector: {istio: ingressgateway}
                  servers: [{port: {number: 8080, name: http, protocol: HTTP}, hosts: ["*"]}]
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
                """);
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aSidecarGetsListenersRoutesAndEveryClusterTheyReference() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.7~productpage-v1-abc.default~default.svc.cluster.local",
                Map.of("NAMESPACE", "default", "LABELS", "{\"app\":\"productpage\",\"version\":\"v1\"}"))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            List<Listener> listeners = unpack(lds, Listener.class);
            Set<String> names = new TreeSet<>();
            listeners.forEach(l -> names.add(l.getName()));
            assertTrue(names.containsAll(List.of("virtualOutbound", "virtualInbound", "0.0.0.0_9080")), names.toString());

            Set<String> routeNames = new TreeSet<>();
            Set<String> referenced = new TreeSet<>();
            for (Listener l : listeners) {
                for (var chain : allChains(l)) {
                    for (var f : chain.getFiltersList()) {
                        Any cfg = f.getTypedConfig();
                        if (cfg.is(HttpConnectionManager.class)) {
                            HttpConnectionManager hcm = cfg.unpack(HttpConnectionManager.class);
                            if (hcm.hasRds()) {
                                routeNames.add(hcm.getRds().getRouteConfigName());
                            } else {
                                clustersOf(hcm.getRouteConfig(), referenced);
                            }
                        } else if (cfg.is(TcpProxy.class)) {
                            referenced.add(cfg.unpack(TcpProxy.class).getCluster());
                        }
                    }
                }
            }
            assertTrue(routeNames.contains("9080"), routeNames.toString());
            c.ack(lds, List.of());

            c.subscribe(TypeUrls.ROUTE, List.copyOf(routeNames));
            DiscoveryResponse rds = c.await(TypeUrls.ROUTE, WAIT);
            List<RouteConfiguration> routes = unpack(rds, RouteConfiguration.class);
            Set<String> served = new TreeSet<>();
            routes.forEach(r -> served.add(r.getName()));
            assertEquals(routeNames, served, "every route a listener names is served");
            RouteConfiguration port9080 = routes.stream().filter(r -> r.getName().equals("9080")).findFirst().orElseThrow();
            VirtualHost reviews = port9080.getVirtualHostsList().stream()
                    .filter(v -> v.getName().equals("reviews.default.svc.cluster.local:9080")).findFirst().orElseThrow();
            assertTrue(reviews.getDomainsList().contains("reviews"), reviews.getDomainsList().toString());
            Set<String> reviewsClusters = new TreeSet<>();
            reviews.getRoutesList().forEach(r -> clustersOf(r, reviewsClusters));
            assertTrue(reviewsClusters.stream().allMatch(n -> n.startsWith("outbound|9080|v"))
                    && !reviewsClusters.isEmpty(), "the VirtualService's subsets: " + reviewsClusters);
            routes.forEach(r -> clustersOf(r, referenced));
            c.ack(rds, List.copyOf(routeNames));

            c.subscribe(TypeUrls.CLUSTER, List.of());
            Set<String> clusters = new TreeSet<>();
            unpack(c.await(TypeUrls.CLUSTER, WAIT), Cluster.class).forEach(cl -> clusters.add(cl.getName()));
            Set<String> missing = new TreeSet<>(referenced);
            missing.removeAll(clusters);
            assertEquals(Set.of(), missing, "clusters referenced by listeners and routes but not in CDS");
        }
    }

    @Test
    void anIngressGatewayGetsItsListenerRoutesAndTheClustersTheyName() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"),
                "router~10.0.0.9~istio-ingressgateway-1.istio-system~istio-system.svc.cluster.local",
                Map.of("NAMESPACE", "istio-system", "LABELS", "{\"istio\":\"ingressgateway\"}"))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            List<Listener> listeners = unpack(lds, Listener.class);
            assertEquals(List.of("0.0.0.0_8080"), listeners.stream().map(Listener::getName).toList());
            HttpConnectionManager hcm = listeners.get(0).getFilterChains(0).getFilters(0).getTypedConfig()
                    .unpack(HttpConnectionManager.class);
            assertEquals("http.8080", hcm.getRds().getRouteConfigName());
            c.ack(lds, List.of());

            c.subscribe(TypeUrls.ROUTE, List.of("http.8080"));
            DiscoveryResponse rds = c.await(TypeUrls.ROUTE, WAIT);
            RouteConfiguration rc = unpack(rds, RouteConfiguration.class).get(0);
            Set<String> referenced = new TreeSet<>();
            clustersOf(rc, referenced);
            assertEquals(Set.of("outbound|9080||productpage.default.svc.cluster.local"), referenced);
            c.ack(rds, List.of("http.8080"));

            c.subscribe(TypeUrls.CLUSTER, List.of());
            Set<String> clusters = new TreeSet<>();
            unpack(c.await(TypeUrls.CLUSTER, WAIT), Cluster.class).forEach(cl -> clusters.add(cl.getName()));
            assertTrue(clusters.containsAll(referenced), clusters.toString());
            assertTrue(clusters.contains("BlackHoleCluster") && !clusters.contains("PassthroughCluster")
                    && clusters.stream().noneMatch(n -> n.startsWith("inbound|")), "istiod's gateway CDS: " + clusters);
        }
    }

    static List<FilterChain> allChains(Listener l) {
        List<FilterChain> out = new ArrayList<>(l.getFilterChainsList());
        if (l.hasDefaultFilterChain()) {
            out.add(l.getDefaultFilterChain());
        }
        return out;
    }

    static void clustersOf(RouteConfiguration rc, Set<String> out) {
        rc.getVirtualHostsList().forEach(v -> v.getRoutesList().forEach(r -> clustersOf(r, out)));
    }

    static void clustersOf(Route r, Set<String> out) {
        if (!r.hasRoute()) {
            return;
        }
        if (!r.getRoute().getCluster().isEmpty()) {
            out.add(r.getRoute().getCluster());
        }
        for (WeightedCluster.ClusterWeight w : r.getRoute().getWeightedClusters().getClustersList()) {
            out.add(w.getName());
        }
        r.getRoute().getRequestMirrorPoliciesList().forEach(m -> out.add(m.getCluster()));
    }

    /** The resources, each also printed as JSON with the registry /debug/config_dump uses (every typed config known). */
    static <T extends Message> List<T> unpack(DiscoveryResponse r, Class<T> type) throws Exception {
        var printer = JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY);
        List<T> out = new ArrayList<>();
        for (Any a : r.getResourcesList()) {
            printer.print(a); // throws for a typed config the registry does not know
            out.add(a.unpack(type));
        }
        return out;
    }
}
