package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Delta ADS against the same server and subscriptions as state of the world. */
class DeltaAdsTest {
    static final String REVIEWS = "outbound|9080||reviews.default.svc.cluster.local";
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        grpc = server.ports().get("grpc");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static Map<String, Any> byName(List<Any> resources) {
        Map<String, Any> m = new TreeMap<>();
        resources.forEach(a -> m.put(ResourceNames.of(a), a));
        return m;
    }

    @Test
    void deltaAndStateOfTheWorldGiveTheSameResources() throws Exception {
        Map<String, Any> sotwClusters;
        Map<String, Any> sotwEndpoints;
        try (AdsClient sotw = new AdsClient(grpc, "sidecar~10.0.0.3~sotw.default~default.svc.cluster.local",
                Map.of("NAMESPACE", "default"))) {
            sotw.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = sotw.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
            sotwClusters = byName(cds.getResourcesList());
            sotw.ack(cds, List.of());
            sotw.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS));
            sotwEndpoints = byName(sotw.await(TypeUrls.ENDPOINT, Duration.ofSeconds(20)).getResourcesList());
        }
        try (DeltaAdsClient delta = new DeltaAdsClient(grpc, "sidecar~10.0.0.2~delta.default~default.svc.cluster.local")) {
            delta.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.CLUSTER));
            DeltaDiscoveryResponse cds = delta.next(Duration.ofSeconds(20));
            assertEquals(sotwClusters, byName(cds.getResourcesList().stream().map(Resource::getResource).toList()));
            assertTrue(cds.getResourcesList().stream().allMatch(r -> !r.getVersion().isEmpty()), "per-resource versions");
            delta.ack(cds);
            assertNull(delta.next(Duration.ofMillis(1000)), "an ACK is not answered");

            delta.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT)
                    .addResourceNamesSubscribe(REVIEWS).addResourceNamesSubscribe("outbound|1|x|nope.example"));
            DeltaDiscoveryResponse eds = delta.next(Duration.ofSeconds(20));
            assertEquals(sotwEndpoints, byName(eds.getResourcesList().stream().map(Resource::getResource).toList()));
            assertEquals(List.of("outbound|1|x|nope.example"), eds.getRemovedResourcesList(),
                    "a subscribed name that does not exist is reported removed");
            delta.ack(eds);

            // a change: only the changed clusters are sent
            Http.Reply r = Http.send(server.ports().get("http"),
                    "/api/v1/configs/networking.istio.io/v1/destinationrules/default/details-extra", "PUT", """
                            apiVersion: networking.istio.io/v1
                            kind: DestinationRule
                            metadata: {name: details-extra, namespace: default}
                            spec: {host: details.default.svc.cluster.local, subsets: [{name: v9, labels: {version: v9}}]}
                            """, null);
            assertEquals(201, r.status(), r.body());
            DeltaDiscoveryResponse changed = null;
            for (int i = 0; i < 10 && changed == null; i++) {
                DeltaDiscoveryResponse next = delta.next(Duration.ofSeconds(20));
                if (next != null && next.getTypeUrl().equals(TypeUrls.CLUSTER)) {
                    changed = next;
                } else if (next != null) {
                    delta.ack(next);
                }
            }
            assertTrue(changed != null, "a CDS delta after the change");
            assertTrue(changed.getResourcesCount() < sotwClusters.size(),
                    "only what changed: " + changed.getResourcesList().stream().map(Resource::getName).toList());
        }
    }
}
