package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One proxy stops reading (it takes its first answer and never asks its transport for more,
 * with a small HTTP/2 window) while config keeps changing. With a single push worker
 * (PILOT_PUSH_THROTTLE=1) a push that waited for the stalled stream would hold every other
 * proxy's push too (Helidon blocks a writer up to 15 s on flow control); instead the others
 * get every version at once, and the stalled stream keeps at most one unsent response per type.
 */
class SlowReaderTest {
    static final String CDS = TypeUrls.CLUSTER;
    static final int SERVICES = 300;
    static final int CHANGES = 6;

    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void stalledReaderDoesNotDelayOthers(String transport, @TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("services.yaml"), services());
        Files.writeString(config.resolve("routes.yaml"), route(0));
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_PUSH_THROTTLE", "1",
                "PILOT_DEBOUNCE_AFTER", "20ms"), "--grpcTransport", transport)) {
            int grpc = server.ports().get("grpc");
            ManagedChannel slowChannel = NettyChannelBuilder.forAddress("127.0.0.1", grpc).usePlaintext()
                    .flowControlWindow(16 * 1024).build();
            List<AdsClient> others = new ArrayList<>();
            try {
                AtomicInteger slowGot = new AtomicInteger();
                ClientCall<DiscoveryRequest, DiscoveryResponse> slow = slowChannel.newCall(
                        AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod(), CallOptions.DEFAULT);
                slow.start(new ClientCall.Listener<>() {
                    @Override
                    public void onMessage(DiscoveryResponse message) {
                        slowGot.incrementAndGet(); // and never request() another
                    }
                }, new Metadata());
                slow.request(1);
                String slowId = "sidecar~10.0.0.99~slow.test~test.svc.cluster.local";
                slow.sendMessage(DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId(slowId))
                        .setTypeUrl(CDS).build());

                for (int i = 0; i < 3; i++) {
                    AdsClient c = new AdsClient(grpc, "sidecar~10.0.0." + i + "~fast-" + i + ".test~test.svc.cluster.local",
                            Map.of());
                    c.autoAnswer("");
                    c.subscribe(CDS, List.of());
                    assertNotNull(c.await(CDS, Duration.ofSeconds(10)), "first CDS");
                    others.add(c);
                }
                waitFor(() -> slowGot.get() == 1, "the stalled proxy's first answer");
                DiscoveryServer xds = server.server().components().discovery();

                long version = maxVersion(others.get(0));
                for (int change = 1; change <= CHANGES; change++) {
                    Path tmp = config.resolve(".routes.tmp");
                    Files.writeString(tmp, route(change));
                    Files.move(tmp, config.resolve("routes.yaml"), StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                    long before = version;
                    // each change reaches every reading proxy promptly, whatever the stalled one does
                    // (10 s: less than Helidon's 15 s flow-control wait a blocked push would sit in)
                    for (AdsClient c : others) {
                        waitFor(() -> maxVersion(c) > before, transport + ": change " + " reached a reading proxy");
                    }
                    version = maxVersion(others.get(0));
                }
                assertEquals(1, slowGot.get(), "the stalled proxy read nothing more");
                Connection stalled = xds.connections().stream().filter(c -> c.proxy().id().equals(slowId))
                        .findFirst().orElse(null);
                if (stalled != null) { // Helidon drops it if its flow-control wait (15 s) times out
                    assertTrue(stalled.unsent() <= 1, transport + ": unsent " + stalled.unsent());
                    if (transport.equals("netty")) {
                        // Netty reports the stalled stream not ready: nothing more is written to it,
                        // and each newer response replaced the unsent one. (Helidon 4.4 reports every
                        // stream ready and keeps writing until the socket stops it.)
                        assertTrue(stalled.replaced() >= 1, transport + ": replaced " + stalled.replaced());
                    }
                }
                System.out.printf("%s: %d changes reached 3 reading proxies; stalled proxy: %s%n", transport, CHANGES,
                        stalled == null ? "dropped" : "unsent " + stalled.unsent() + ", replaced " + stalled.replaced());
                slow.cancel("done", null);
            } finally {
                others.forEach(AdsClient::close);
                slowChannel.shutdownNow();
            }
        }
    }

    private static long maxVersion(AdsClient c) {
        long max = -1;
        for (DiscoveryResponse r : c.received()) {
            if (r.getTypeUrl().equals(CDS)) {
                max = Math.max(max, Long.parseLong(r.getVersionInfo()));
            }
        }
        return max;
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(20);
        }
    }

    static String services() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < SERVICES; i++) {
            b.append("""
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: svc-%d, namespace: test}
                    spec:
                      hosts: [svc-%d.test.svc.cluster.local]
                      ports: [{number: 80, name: http, protocol: HTTP}, {number: 9090, name: grpc, protocol: GRPC}]
                      resolution: STATIC
                      endpoints: [{address: 10.1.%d.%d}]
                    ---
                    """.formatted(i, i, i / 250, i % 250 + 1));
        }
        return b.toString();
    }

    static String route(int timeoutSeconds) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: svc-0, namespace: test}
                spec:
                  hosts: [svc-0.test.svc.cluster.local]
                  http: [{timeout: %ds, route: [{destination: {host: svc-0.test.svc.cluster.local}}]}]
                """.formatted(timeoutSeconds + 1);
    }
}
