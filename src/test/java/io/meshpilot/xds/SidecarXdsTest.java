package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedMesh;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The sidecar translation benchmark's build, once, on 100 generated services: the numbers of
 * listeners, routes, clusters and assignments follow from the generated mesh, and the cached
 * path gives each further proxy the same config as the builders, so the benchmark cannot
 * silently measure something smaller.
 */
class SidecarXdsTest {
    static final int N = 100;

    @Test
    void fullSidecarConfigMatchesTheGeneratedMesh() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(N); SidecarXds xds = new SidecarXds()) {
            PushContext push = mesh.push();
            Proxy first = GeneratedMesh.sidecar(0, 1);
            Proxy second = GeneratedMesh.sidecar(0, 2);
            SidecarXds.Subscriptions subs = SidecarXds.subscriptions(first, push);

            int outbound = IntStream.range(0, N).map(i -> GeneratedMesh.ports(i) * (GeneratedMesh.hasRules(i) ? 3 : 1)).sum();
            long tcp = IntStream.range(0, N).filter(GeneratedMesh::hasTcpPort).count();
            long grpc = IntStream.range(0, N).filter(GeneratedMesh::hasGrpcPort).count();
            assertEquals(Set.of("8080", "9090"), subs.routes());
            assertEquals(outbound, subs.edsClusters().size(), "every outbound cluster is EDS (STATIC resolution)");

            SidecarXds.Config config = SidecarXds.uncached(first, push, subs);
            // BlackHole, Passthrough, InboundPassthrough and inbound|8080|| of service 0's workload
            assertEquals(outbound + 3 + 1, config.cds().getResourcesCount());
            assertEquals(outbound, config.eds().getResourcesCount());
            // 0.0.0.0_8080, 0.0.0.0_9090, one per TCP service VIP, virtualOutbound, virtualInbound
            assertEquals(2 + tcp + 2, config.lds().getResourcesCount());
            assertEquals(2, config.rds().getResourcesCount());
            for (var any : config.rds().getResourcesList()) {
                RouteConfiguration rc = any.unpack(RouteConfiguration.class);
                long hosts = rc.getVirtualHostsList().stream().filter(v -> v.getName().startsWith("svc-")).count();
                assertEquals(rc.getName().equals("8080") ? N : grpc, hosts, rc.getName());
            }

            SidecarXds.Config warm = xds.cached(first, push, SidecarXds.subscriptions(first, push));
            SidecarXds.Config next = xds.cached(second, push, SidecarXds.subscriptions(second, push));
            assertSame(warm.cds(), next.cds(), "the second proxy of the scope gets the shared CDS response");
            assertSame(warm.eds(), next.eds(), "and the shared EDS response");
            assertSame(warm.rds().getResources(0), next.rds().getResources(0), "and the scope's cached routes");
            assertSame(warm.lds().getResources(0), next.lds().getResources(0), "and its cached outbound listeners");
            assertNotSame(warm.lds().getResources(warm.lds().getResourcesCount() - 1),
                    next.lds().getResources(next.lds().getResourcesCount() - 1), "virtualInbound is the proxy's own");
            SidecarXds.Config direct = SidecarXds.uncached(second, push, SidecarXds.subscriptions(second, push));
            for (int t = 0; t < 4; t++) {
                assertEquals(direct.responses().get(t).getResourcesList(), next.responses().get(t).getResourcesList(),
                        next.responses().get(t).getTypeUrl());
            }
            assertEquals(direct.bytes(), next.bytes(), "responses differ only in their nonces, of equal length");
            assertTrue(config.bytes() > 100_000, "100 services: " + config.bytes() + " bytes");
        }
    }

    @Test
    void routesAreSharedPerScopeUnlessAVirtualServiceMatchesSourceLabels() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10); SidecarXds xds = new SidecarXds()) {
            Proxy v1 = GeneratedMesh.sidecar(0, 1);
            Proxy v2 = GeneratedMesh.sidecar(0, 2);
            PushContext push = mesh.push();
            assertFalse(push.routesDependOnProxyLabels());
            var names = SubscribedNames.of(Set.of("8080"));
            assertSame(xds.generators().forType(TypeUrls.ROUTE, v1).generate(v1, push, names, false).get(0),
                    xds.generators().forType(TypeUrls.ROUTE, v1).generate(v2, push, names, false).get(0));

            mesh.fixture().apply("""
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: canary, namespace: %s}
                    spec:
                      hosts: [%s]
                      http:
                      - match: [{sourceLabels: {version: v2}}]
                        route: [{destination: {host: %s, subset: v2}}]
                      - route: [{destination: {host: %s}}]
                    """.formatted(GeneratedMesh.namespace(3), GeneratedMesh.hostname(3), GeneratedMesh.hostname(3),
                    GeneratedMesh.hostname(3)));
            PushContext next = PushContext.build(mesh.fixture().registry, mesh.fixture().store,
                    mesh.fixture().updates.index, new MeshConfigLoader().defaults(), "cluster.local",
                    push.version() + 1);
            assertTrue(next.routesDependOnProxyLabels());
            var r1 = xds.generators().forType(TypeUrls.ROUTE, v1).generate(v1, next, names, false).get(0).unpack(RouteConfiguration.class);
            var r2 = xds.generators().forType(TypeUrls.ROUTE, v1).generate(v2, next, names, false).get(0).unpack(RouteConfiguration.class);
            String host = GeneratedMesh.hostname(3) + ":8080";
            String to1 = r1.getVirtualHostsList().stream().filter(v -> v.getName().equals(host)).findFirst()
                    .orElseThrow().getRoutes(0).getRoute().getCluster();
            String to2 = r2.getVirtualHostsList().stream().filter(v -> v.getName().equals(host)).findFirst()
                    .orElseThrow().getRoutes(0).getRoute().getCluster();
            assertEquals("outbound|8080||" + GeneratedMesh.hostname(3), to1, "v1 does not match the source labels");
            assertEquals("outbound|8080|v2|" + GeneratedMesh.hostname(3), to2, "v2 does: its own cached routes");
        }
    }
}
