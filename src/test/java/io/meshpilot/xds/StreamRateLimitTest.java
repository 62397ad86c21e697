package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PILOT_MAX_REQUESTS_PER_SECOND: a burst of new streams beyond the rate is refused cleanly. */
class StreamRateLimitTest {
    @Test
    void aReconnectStormIsRefusedWithResourceExhausted(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_MAX_REQUESTS_PER_SECOND", "1"))) {
            List<AdsClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    AdsClient c = new AdsClient(server.ports().get("grpc"),
                            "sidecar~10.3.0." + i + "~s" + i + ".default~default.svc.cluster.local", Map.of());
                    c.subscribe(TypeUrls.CLUSTER, List.of());
                    clients.add(c);
                }
                int served = 0;
                int refused = 0;
                for (AdsClient c : clients) {
                    // each stream ends one way or the other: an answer, or a refusal
                    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                    while (c.received().isEmpty() && c.error() == null && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    if (!c.received().isEmpty()) {
                        served++;
                    } else {
                        Throwable t = c.error();
                        assertEquals(Status.Code.RESOURCE_EXHAUSTED, Status.fromThrowable(t).getCode(), String.valueOf(t));
                        refused++;
                    }
                }
                assertEquals(8, served + refused);
                assertTrue(served >= 1 && refused >= 1, "served " + served + ", refused " + refused);
            } finally {
                clients.forEach(AdsClient::close);
            }
        }
    }
}
