package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * --clusterAliases as istiod's initConnection applies it: a proxy reporting an alias as its
 * CLUSTER_ID is served as a proxy of the cluster the alias names; other cluster IDs stay.
 */
class ClusterAliasesTest {
    @TempDir
    Path dir;
    MeshPilotServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aProxyReportingAnAliasIsInTheClusterItNames() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, "--clusterID", "east", "--clusterAliases", "east-legacy=east,old=west");
        int grpc = server.ports().get("grpc");
        try (AdsClient aliased = new AdsClient(grpc, "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local",
                Map.of("CLUSTER_ID", "east-legacy"));
             AdsClient plain = new AdsClient(grpc, "sidecar~10.0.0.2~b.ns~ns.svc.cluster.local",
                     Map.of("CLUSTER_ID", "north"))) {
            aliased.subscribe(TypeUrls.CLUSTER, List.of());
            plain.subscribe(TypeUrls.CLUSTER, List.of());
            aliased.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
            plain.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
            Map<String, String> clusters = new TreeMap<>();
            for (JsonElement c : JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/syncz").body())
                    .getAsJsonArray()) {
                String proxy = c.getAsJsonObject().get("proxy").getAsString();
                // istiod's SyncStatus names the proxy by its name.namespace
                clusters.put(proxy, c.getAsJsonObject().get("cluster_id").getAsString());
            }
            assertEquals(Map.of("a.ns", "east", "b.ns", "north"), clusters);
        }
    }
}
