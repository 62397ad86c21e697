package io.meshpilot.networking.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What the real builders generate today for the productpage sidecar of the embedded bookinfo
 * (etc/config/bookinfo: ServiceEntries, WorkloadEntries, VirtualServices with subsets and an
 * 80/20 split), assembled as the xDS generators assemble it, passes every check.
 */
class BookinfoSidecarCheckTest {
    static final Proxy PRODUCTPAGE = new Proxy("sidecar~127.0.0.1~productpage-v1.default~default.svc.cluster.local",
            Proxy.Type.SIDECAR, List.of("127.0.0.1"), "productpage-v1.default", "default.svc.cluster.local", "default",
            Map.of("app", "productpage", "version", "v1"), "Kubernetes", "1.24.0", "", "bookinfo-productpage", "", Locality.NONE);

    /** LDS, the RDS names LDS asks for, wildcard CDS and EDS for every EDS cluster: one sidecar's whole config. */
    static ProxyConfig sidecarConfig(Proxy proxy, PushContext push) throws Exception {
        ProxyScope scope = push.scope(proxy);
        List<Listener> listeners = SidecarListenerBuilder.listeners(proxy, push, scope);
        Set<String> routeNames = new TreeSet<>();
        for (Listener l : listeners) {
            List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
            if (l.hasDefaultFilterChain()) {
                chains.add(l.getDefaultFilterChain());
            }
            for (FilterChain c : chains) {
                for (var f : c.getFiltersList()) {
                    Any cfg = f.getTypedConfig();
                    if (cfg.is(HttpConnectionManager.class) && cfg.unpack(HttpConnectionManager.class).hasRds()) {
                        routeNames.add(cfg.unpack(HttpConnectionManager.class).getRds().getRouteConfigName());
                    }
                }
            }
        }
        List<RouteConfiguration> routes = new ArrayList<>();
        for (String n : routeNames) {
            SidecarRouteBuilder.build(n, push, scope, proxy.labels()).ifPresent(routes::add);
        }
        List<Cluster> clusters = new ArrayList<>(ClusterBuilder.all(push, scope));
        clusters.addAll(SidecarClusterBuilder.meshClusters(push.mesh()));
        clusters.addAll(SidecarClusterBuilder.inboundClusters(proxy, push));
        List<ClusterLoadAssignment> endpoints = new ArrayList<>();
        for (Cluster c : clusters) {
            if (c.getType() == Cluster.DiscoveryType.EDS) {
                String service = c.getEdsClusterConfig().getServiceName().isEmpty() ? c.getName()
                        : c.getEdsClusterConfig().getServiceName();
                EndpointBuilder.build(service, push, scope).ifPresent(endpoints::add);
            }
        }
        return new ProxyConfig(listeners, routes, clusters, endpoints);
    }

    static String bookinfo() throws Exception {
        Path dir = Path.of(System.getProperty("meshpilot.home", ".")).resolve("etc/config/bookinfo");
        StringBuilder yaml = new StringBuilder();
        for (String f : List.of("services.yaml", "workloads.yaml", "traffic.yaml")) {
            yaml.append(Files.readString(dir.resolve(f))).append("\n---\n");
        }
        return yaml.toString();
    }

    @Test
    void productpageSidecarPassesEveryCheck() throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(bookinfo());
            ProxyConfig config = sidecarConfig(PRODUCTPAGE, mesh.push());
            // the fixture must be the real thing, else "no violations" proves nothing
            assertTrue(config.listeners().stream().anyMatch(l -> l.getName().equals("0.0.0.0_9080")),
                    config.listeners().stream().map(Listener::getName).toList().toString());
            assertTrue(config.routes().stream().anyMatch(r -> r.getName().equals("9080")));
            assertTrue(config.clusters().stream().anyMatch(c -> c.getName().equals("outbound|9080|v2|reviews.default.svc.cluster.local")));
            assertTrue(!config.endpoints().isEmpty());

            EnvoyConfigCheck.Report report = EnvoyConfigCheck.check(config);
            assertEquals(List.of(), report.all());
            assertEquals(Set.of(), report.coverage().unresolvedTypes(), "typed configs EnvoyTypes.REGISTRY does not know");
            // the walk reached into the typed configs and the routes, not only the top-level fields
            assertTrue(report.coverage().evaluated().getOrDefault("oneof.required", 0L) > 10, report.coverage().toString());
            assertTrue(report.coverage().evaluated().containsKey("string.well_known_regex"), report.coverage().toString());

            // and the same config with a hole in it fails: the check is wired to these resources
            ProxyConfig withoutRoutes = new ProxyConfig(config.listeners(), List.of(), config.clusters(), config.endpoints());
            assertTrue(EnvoyConfigCheck.check(withoutRoutes).all().stream().anyMatch(v -> v.endsWith("no route configuration 9080")));
        }
    }

    /**
     * The shapes bookinfo lacks (SidecarListenerBuilderTest's mesh): TCP and Mongo ports with
     * VIPs, a sniffed unnamed port with HTTP and TCP chains side by side, a VIP-less DNS entry.
     */
    @Test
    void tcpAndSniffedListenersPassEveryCheck() throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.applyResource("/meshes/shop.yaml");
            Proxy web = new Proxy("sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
                    List.of("10.0.0.1"), "web-1.shop", "shop.svc.cluster.local", "shop", Map.of("app", "web"), "Kubernetes",
                    "1.24.0", "", "", "", Locality.NONE);
            ProxyConfig config = sidecarConfig(web, mesh.push());
            assertTrue(config.listeners().stream().anyMatch(l -> l.getName().equals("0.0.0.0_7000")));
            assertEquals(List.of(), EnvoyConfigCheck.check(config).all());
        }
    }
}
