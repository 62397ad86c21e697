package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Namespace visibility as istiod computes it: ServiceEntry, DestinationRule and
 * VirtualService {@code exportTo}, the DestinationRule a namespace sees (its own before the
 * service's), and a namespace-wide Sidecar's egress hosts.
 */
class VisibilityTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;

    @BeforeAll
    static void start() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("visibility.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: private, namespace: team-a}
                spec:
                  hosts: [private.team-a.svc.cluster.local]
                  exportTo: ["."]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.1.1}]
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: public, namespace: team-a}
                spec:
                  hosts: [public.team-a.svc.cluster.local]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.1.2, labels: {version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: for-b, namespace: team-a}
                spec:
                  hosts: [for-b.team-a.svc.cluster.local]
                  exportTo: [team-b]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.1.3}]
                ---
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: c, namespace: team-c}
                spec:
                  hosts: [c.team-c.svc.cluster.local]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.3.1}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: public, namespace: team-a}
                spec:
                  host: public.team-a.svc.cluster.local
                  subsets: [{name: v1, labels: {version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: public-seen-from-b, namespace: team-b}
                spec:
                  host: public.team-a.svc.cluster.local
                  exportTo: ["."]
                  subsets: [{name: b1, labels: {version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: public-private-route, namespace: team-a}
                spec:
                  hosts: [public.team-a.svc.cluster.local]
                  exportTo: ["."]
                  http: [{route: [{destination: {host: public.team-a.svc.cluster.local, subset: v1}}]}]
                ---
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: default, namespace: team-c}
                spec:
                  egress: [{hosts: ["./*"]}]
                """);
        server = TestServers.start(dir);
        grpc = server.ports().get("grpc");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** The outbound clusters a sidecar of {@code namespace} gets (its BlackHole/Passthrough clusters aside). */
    static Set<String> clustersOf(String namespace) throws Exception {
        try (AdsClient c = new AdsClient(grpc, "sidecar~10.0.0.1~p." + namespace + "~" + namespace + ".svc.cluster.local",
                Map.of("NAMESPACE", namespace))) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse r = c.await(TypeUrls.CLUSTER, WAIT);
            Set<String> names = new TreeSet<>();
            for (var a : r.getResourcesList()) {
                String name = a.unpack(Cluster.class).getName();
                if (name.startsWith("outbound|")) {
                    names.add(name);
                }
            }
            return names;
        }
    }

    @Test
    void exportToAndTheDestinationRuleEachNamespaceSees() throws Exception {
        assertEquals(Set.of("outbound|80||private.team-a.svc.cluster.local", "outbound|80||public.team-a.svc.cluster.local",
                "outbound|80|v1|public.team-a.svc.cluster.local", "outbound|80||c.team-c.svc.cluster.local"),
                clustersOf("team-a"), "team-a: its private service, not the one exported to team-b only");
        assertEquals(Set.of("outbound|80||public.team-a.svc.cluster.local", "outbound|80|b1|public.team-a.svc.cluster.local",
                "outbound|80||for-b.team-a.svc.cluster.local", "outbound|80||c.team-c.svc.cluster.local"),
                clustersOf("team-b"), "team-b: its own DestinationRule for public wins over team-a's");
    }

    @Test
    void aNamespaceSidecarLimitsEgress() throws Exception {
        assertEquals(Set.of("outbound|80||c.team-c.svc.cluster.local"), clustersOf("team-c"));
    }

    @Test
    void aVirtualServiceExportedToItsNamespaceRoutesOnlyThere() throws Exception {
        String name = "public.team-a.svc.cluster.local:80";
        for (String ns : List.of("team-a", "team-b")) {
            try (AdsClient c = new AdsClient(grpc, "sidecar~10.0.0.2~g." + ns + "~" + ns + ".svc.cluster.local",
                    Map.of("NAMESPACE", ns, "GENERATOR", "grpc"))) {
                c.subscribe(TypeUrls.ROUTE, List.of(name));
                RouteConfiguration rc = c.await(TypeUrls.ROUTE, WAIT).getResources(0).unpack(RouteConfiguration.class);
                List<String> clusters = rc.getVirtualHosts(0).getRoutesList().stream()
                        .map(r -> r.getRoute().getCluster()).toList();
                assertEquals(ns.equals("team-a")
                        ? List.of("outbound|80|v1|public.team-a.svc.cluster.local", "outbound|80||public.team-a.svc.cluster.local")
                        : List.of("outbound|80||public.team-a.svc.cluster.local"), clusters, ns);
            }
        }
    }
}
