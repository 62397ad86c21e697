package io.meshpilot.monitoring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's pilot_xds{version} is labelled with what a proxy sends as ISTIO_VERSION, and the
 * plaintext xDS port authenticates nobody: the series of versions no connected proxy has any
 * more go away, so made-up versions cannot pile up series.
 */
class ClientLabelledSeriesTest {
    @TempDir
    Path dir;

    @Test
    void versionsOfProxiesThatLeftLeaveNoSeries() throws Exception {
        try (MeshPilotServer server = TestServers.start(dir)) {
            int grpc = server.ports().get("grpc");
            int monitoring = server.ports().get("monitoring");
            try (AdsClient stays = new AdsClient(grpc, "sidecar~10.0.0.1~stays.default~default.svc.cluster.local",
                    Map.of("ISTIO_VERSION", "1.28.0"))) {
                stays.subscribe(TypeUrls.CLUSTER, List.of());
                stays.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
                int before = versionSeries(monitoring);
                for (int i = 0; i < 100; i++) {
                    try (AdsClient made = new AdsClient(grpc, "sidecar~10.0.1." + i + "~m.default~default.svc.cluster.local",
                            Map.of("ISTIO_VERSION", "made-up-" + i))) {
                        made.subscribe(TypeUrls.CLUSTER, List.of());
                        made.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
                    }
                }
                Await.until("the made-up versions' streams to end", Duration.ofSeconds(30),
                        () -> Http.get(monitoring, "/metrics").body().lines()
                                .filter(l -> l.startsWith("pilot_xds{version=\"made-up-"))
                                .allMatch(l -> l.endsWith(" 0.0") || l.endsWith(" 0")));
                assertEquals(before, versionSeries(monitoring), "pilot_xds series");
                assertTrue(Http.get(monitoring, "/metrics").body().lines()
                        .anyMatch(l -> l.startsWith("pilot_xds{version=\"1.28.0\"} 1")), "the connected proxy's version");
            }
        }
    }

    private static int versionSeries(int monitoring) {
        return (int) Http.get(monitoring, "/metrics").body().lines().filter(l -> l.startsWith("pilot_xds{")).count();
    }
}
