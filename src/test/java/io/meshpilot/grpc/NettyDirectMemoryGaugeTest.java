package io.meshpilot.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meshpilot_grpc_netty_direct_memory_bytes} on /metrics: the direct memory grpc-java's
 * Netty holds, which the load tool adds to the heap (issue 34's "heap + direct memory" at the
 * end of a run). After a proxy got its clusters over the Netty transport, it is a gauge with a
 * value above zero: the response went through Netty's direct buffers.
 */
class NettyDirectMemoryGaugeTest {
    static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    /** The documented name (docs/METRICS.md), spelled out: a rename must change the docs too. */
    static final String GAUGE = "meshpilot_grpc_netty_direct_memory_bytes";

    @Test
    void gaugeCountsNettysDirectMemoryAfterTraffic(@TempDir Path dir) throws Exception {
        TestServers.copyBookinfo(dir);
        try (MeshPilotServer server = TestServers.start(dir, Map.of(), "--grpcTransport", "netty");
             AdsClient proxy = new AdsClient(server.ports().get("grpc"),
                     "sidecar~10.0.0.1~reviews-v1.default~default.svc.cluster.local", Map.of())) {
            proxy.autoAnswer("");
            proxy.subscribe(CDS, List.of());
            DiscoveryResponse cds = proxy.await(CDS, Duration.ofSeconds(30));
            assertNotNull(cds, "the proxy got its clusters");

            PrometheusTextParser.Family gauge = PrometheusTextParser.parse(
                    Http.get(server.ports().get("monitoring"), "/metrics").body()).get(GAUGE);
            assertNotNull(gauge, GAUGE + " is served");
            assertEquals("gauge", gauge.type());
            assertEquals(1, gauge.samples().size(), "one series, no labels: " + gauge.samples());
            assertTrue(gauge.samples().get(0).value() > 0, "direct memory held after traffic: " + gauge.samples());
        }
    }
}
