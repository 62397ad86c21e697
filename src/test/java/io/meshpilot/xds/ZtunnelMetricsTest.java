package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The series istiod exports for ztunnel's streams (pilot/pkg/xds/monitoring.go, delta.go
 * pushDeltaXds, pkg/model/xds.go GetMetricType), read from {@code /metrics} after a ztunnel-like
 * delta client took both of its types and NACKed one: {@code pilot_xds{version}} counts the stream,
 * {@code pilot_xds_pushes} and {@code pilot_xds_push_time} carry {@code type="wds"}/{@code "wads"},
 * {@code pilot_xds_config_size_bytes} the type URL itself (istiod labels it with {@code w.TypeUrl}),
 * {@code pilot_total_xds_rejects} {@code type="wads"}. The metrics are the process's, so each check
 * compares with a reading taken before the client connected (a series first exported by this
 * server after an earlier server in the JVM counted it shows the process's total, hence "at least").
 */
class ZtunnelMetricsTest {
    static final String VERSION = "1.30.0-metrics-test";
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void ztunnelStreamsAreCountedWithIstiodsTypeLabels() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("policies.yaml"), ZtunnelAuthorizationXdsTest.DENY_OTHER);
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_ENABLE_AMBIENT", "true"))) {
            int monitoring = server.ports().get("monitoring");
            Map<String, PrometheusTextParser.Family> before = scrape(monitoring);
            try (DeltaAdsClient ztunnel = ZtunnelAuthorizationXdsTest.ztunnel(server, Node.newBuilder()
                    .setId(ZtunnelAuthorizationXdsTest.ZTUNNEL).setMetadata(Struct.newBuilder()
                            .putFields("ISTIO_VERSION", Value.newBuilder().setStringValue(VERSION).build())))) {
                ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
                DeltaDiscoveryResponse addresses = ztunnel.next(WAIT);
                assertNotNull(addresses, "the Address subscription is answered");
                ztunnel.ack(addresses);
                ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.WORKLOAD_AUTHORIZATION));
                DeltaDiscoveryResponse policies = ztunnel.next(WAIT);
                assertNotNull(policies, "the Authorization subscription is answered");
                ztunnel.nack(policies, "unknown field in policy");

                Await.until("the NACK counted", WAIT, () -> increase(before, scrape(monitoring),
                        "pilot_total_xds_rejects", "type", "wads") >= 1);
                Map<String, PrometheusTextParser.Family> after = scrape(monitoring);
                assertEquals(1, value(after, "pilot_xds", "version", VERSION), "the connected ztunnel by its ISTIO_VERSION");
                assertTrue(increase(before, after, "pilot_xds_pushes", "type", "wds") >= 1, "Address pushes");
                assertTrue(increase(before, after, "pilot_xds_pushes", "type", "wads") >= 1, "Authorization pushes");
                assertTrue(increase(before, after, "pilot_xds_push_time_count", "type", "wds") >= 1,
                        "the Address answer's push time");
                assertTrue(increase(before, after, "pilot_xds_push_time_count", "type", "wads") >= 1,
                        "the Authorization answer's push time");
                assertTrue(increase(before, after, "pilot_xds_config_size_bytes_count", "type", TypeUrls.ADDRESS) >= 1,
                        "Address response sizes, labelled with the type URL as istiod's");
                assertTrue(increase(before, after, "pilot_xds_config_size_bytes_count", "type",
                        TypeUrls.WORKLOAD_AUTHORIZATION) >= 1, "Authorization response sizes");
            }
            Await.until("the closed stream's version series gone", WAIT,
                    () -> value(scrape(monitoring), "pilot_xds", "version", VERSION) <= 0);
        }
    }

    static Map<String, PrometheusTextParser.Family> scrape(int port) {
        return PrometheusTextParser.parse(Http.get(port, "/metrics").body());
    }

    /** The sample of that name (a histogram's {@code _count} included) with that one label value; 0 when absent. */
    static double value(Map<String, PrometheusTextParser.Family> families, String sample, String label, String labelValue) {
        return families.values().stream().flatMap(f -> f.samples().stream())
                .filter(s -> s.name().equals(sample) && labelValue.equals(s.labels().get(label)))
                .mapToDouble(PrometheusTextParser.Sample::value).sum();
    }

    static double increase(Map<String, PrometheusTextParser.Family> before, Map<String, PrometheusTextParser.Family> after,
                           String sample, String label, String labelValue) {
        return value(after, sample, label, labelValue) - value(before, sample, label, labelValue);
    }
}
