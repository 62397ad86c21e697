package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PILOT_MAX_REQUESTS_PER_SECOND: a burst of new streams beyond the rate is refused cleanly,
 * and refusing streams does not end the ones admitted on the same connection.
 */
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

    /**
     * 2,000 streams on one HTTP/2 connection at the default admission rate: most are refused
     * with RESOURCE_EXHAUSTED; the admitted ones stay open (no GOAWAY ends the connection under
     * them) and a later config change still reaches every one. On Helidon's HTTP/2 server the
     * refusals trip its rapid-reset guard, whose GOAWAY ends the admitted streams too.
     */
    @Test
    void refusalsLeaveTheAdmittedStreamsOfTheirConnectionServed(@TempDir Path dir) throws Exception {
        TestServers.copyBookinfo(dir);
        int streams = 2_000;
        try (MeshPilotServer server = TestServers.start(dir)) {
            ManagedChannel channel = NettyChannelBuilder
                    .forAddress("127.0.0.1", server.ports().get("grpc")).usePlaintext().build();
            List<AdsClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < streams; i++) {
                    AdsClient c = new AdsClient(channel, "sidecar~10.4." + i / 250 + "." + i % 250 + "~burst-" + i
                            + ".default~default.svc.cluster.local", Map.of());
                    c.subscribe(TypeUrls.CLUSTER, List.of());
                    clients.add(c);
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                while (clients.stream().anyMatch(c -> c.received().isEmpty() && c.error() == null)
                        && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                List<AdsClient> admitted = clients.stream().filter(c -> !c.received().isEmpty()).toList();
                List<Throwable> refusals = clients.stream().filter(c -> c.received().isEmpty())
                        .map(AdsClient::error).toList();
                assertEquals(streams, admitted.size() + refusals.size(), "every stream answered or refused");
                assertTrue(!admitted.isEmpty() && !refusals.isEmpty(), admitted.size() + " admitted");
                for (Throwable t : refusals) {
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED, Status.fromThrowable(t).getCode(), String.valueOf(t));
                }
                assertEquals(List.of(), admitted.stream().map(AdsClient::error).filter(e -> e != null).toList(),
                        "admitted streams ended by the refusals of others");

                // each stream's own count so far: the change must reach every one past it
                Map<AdsClient, Integer> before = new IdentityHashMap<>();
                admitted.forEach(c -> before.put(c, c.received().size()));
                Http.Reply put = Http.send(server.ports().get("http"),
                        "/api/v1/configs/networking.istio.io/v1/serviceentries/default/after-the-burst", "PUT", """
                                apiVersion: networking.istio.io/v1
                                kind: ServiceEntry
                                metadata: {name: after-the-burst, namespace: default}
                                spec:
                                  hosts: [after-the-burst.example.com]
                                  ports: [{number: 80, name: http, protocol: HTTP}]
                                  resolution: DNS
                                """, null);
                assertTrue(put.status() / 100 == 2, put.status() + " " + put.body());
                deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (admitted.stream().anyMatch(c -> !gotTheChange(c, before.get(c)) && c.error() == null)
                        && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                long reached = admitted.stream().filter(c -> gotTheChange(c, before.get(c))).count();
                assertEquals(admitted.size(), reached, "admitted streams that got the change");
                assertEquals(List.of(), admitted.stream().map(AdsClient::error).filter(e -> e != null).toList());
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /** Whether a response after the first {@code baseline} ones carries the ServiceEntry's cluster. */
    private static boolean gotTheChange(AdsClient c, int baseline) {
        return c.received().stream().skip(baseline).anyMatch(r -> r.getResourcesList().stream()
                .anyMatch(a -> ResourceNames.of(a).contains("after-the-burst.example.com")));
    }
}
