package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server-wide bound on response bytes handed to the transport and not yet taken by the
 * socket (issue 34, must-hold 1). Stalled readers are real grpc-java clients that never ask for
 * a message over a 16 KiB HTTP/2 window, so the server's Netty really holds what it was given
 * for them; together they want more than the budget. The bytes in flight (read from the gauge
 * on /metrics while it happens) never pass the budget, the reading proxies are configured and
 * ACK, and each stalled stream is ended after the send timeout with DEADLINE_EXCEEDED.
 */
class BytesInFlightTest {
    static final String CDS = TypeUrls.CLUSTER;
    static final long BUDGET = 1024 * 1024;
    static final int STALLED = 8;
    static final int READING = 4;
    static final String GAUGE = "meshpilot_xds_send_bytes_in_flight";
    static final String PARKED_GAUGE = "meshpilot_xds_send_bytes_parked";

    @Test
    void stalledReadersStayUnderTheBudgetWhileOthersAreServed(@TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("services.yaml"), SlowReaderTest.services());
        try (CapturedLog timeouts = new CapturedLog(ConnectionTable.class);
             CapturedLog grpc = new CapturedLog("io.grpc");
             MeshPilotServer server = TestServers.start(dir, Map.of(
                     "MESHPILOT_XDS_BYTES_IN_FLIGHT", String.valueOf(BUDGET),
                     "PILOT_XDS_SEND_TIMEOUT", "3s",
                     "PILOT_DEBOUNCE_AFTER", "20ms"), "--grpcTransport", "netty")) {
            int port = server.ports().get("grpc");
            int monitoring = server.ports().get("monitoring");
            List<ManagedChannel> channels = new ArrayList<>();
            List<StalledReader> stalled = new ArrayList<>();
            List<AdsClient> reading = new ArrayList<>();
            AtomicLong maxInFlight = new AtomicLong(-1);
            AtomicBoolean sampling = new AtomicBoolean(true);
            CompletableFuture<Void> sampler = CompletableFuture.runAsync(() -> {
                while (sampling.get()) {
                    maxInFlight.accumulateAndGet(gauge(monitoring, GAUGE), Math::max);
                }
            });
            try {
                openStalledReaders(port, channels, stalled);
                for (int i = 0; i < READING; i++) {
                    AdsClient c = new AdsClient(port, "sidecar~10.0.0." + i + "~reading-" + i + ".test~test.svc.cluster.local",
                            Map.of());
                    c.autoAnswer("");
                    c.subscribe(CDS, List.of());
                    reading.add(c);
                }
                DiscoveryServer xds = server.server().components().discovery();
                for (AdsClient c : reading) {
                    DiscoveryResponse cds = c.await(CDS, Duration.ofSeconds(60));
                    assertNotNull(cds, "a reading proxy got its clusters");
                    assertTrue(cds.getSerializedSize() > BUDGET / 8,
                            "the response (" + cds.getSerializedSize() + " bytes) is large enough for "
                                    + STALLED + " stalled readers to want more than the budget");
                }
                Await.until("every reading proxy ACKed its clusters", Duration.ofSeconds(60), () -> xds.connections()
                        .stream().filter(c -> c.proxy().id().contains("~reading-"))
                        .filter(c -> c.watches().get(CDS) != null && c.watches().get(CDS).synced()).count() == READING);

                // each stalled stream is ended after the send timeout, one line each naming the proxy
                Await.until("the stalled streams ended after PILOT_XDS_SEND_TIMEOUT", Duration.ofSeconds(60),
                        () -> stalled.stream().allMatch(s -> timeouts.has("WARNING", "proxy=" + s.proxyId(),
                                "PILOT_XDS_SEND_TIMEOUT")));
                Await.until("no stalled proxy left connected", Duration.ofSeconds(10), () -> xds.connections().stream()
                        .noneMatch(c -> c.proxy().id().contains("~stalled-")));
                assertTrue(gauge(monitoring, "pilot_xds_write_timeout") >= STALLED, "pilot_xds_write_timeout");
                assertTrue(gauge(monitoring, "meshpilot_xds_send_budget_waits_total") > 0,
                        "writes waited for the budget: the stalled readers wanted more than it");
                Await.until("nothing in flight once the stalled streams are gone", Duration.ofSeconds(10),
                        () -> gauge(monitoring, GAUGE) == 0);
                sampling.set(false);
                sampler.get(10, TimeUnit.SECONDS);
                assertTrue(maxInFlight.get() >= 0, "the gauge was read");
                assertTrue(maxInFlight.get() <= BUDGET, "bytes in flight " + maxInFlight.get() + " within " + BUDGET);

                // grpc-java's server sends the status after the bytes the reader never took, and does not
                // reset the stream (grpc-java issue 2162): the reader gets it once it reads them
                StalledReader first = stalled.get(0);
                assertFalse(first.closed.isDone(), "the status waits behind the unread bytes");
                first.call.request(Integer.MAX_VALUE);
                Status status = first.closed.get(30, TimeUnit.SECONDS);
                assertEquals(Status.Code.DEADLINE_EXCEEDED, status.getCode(), String.valueOf(status));
                assertTrue(status.getDescription().contains("PILOT_XDS_SEND_TIMEOUT"), status.getDescription());

                for (AdsClient c : reading) {
                    assertNull(c.error(), "a reading proxy's stream is still open");
                }
                System.out.printf("budget %d bytes, response %d bytes, %d stalled readers: most in flight %d bytes%n",
                        BUDGET, reading.get(0).received().getLast().getSerializedSize(), STALLED,
                        maxInFlight.get());
                assertFalse(grpc.lines().stream().anyMatch(l -> l.contains("OutOfDirectMemoryError")), grpc.lines().toString());
            } finally {
                sampling.set(false);
                reading.forEach(AdsClient::close);
                stalled.forEach(s -> s.call.cancel("done", null));
                channels.forEach(ManagedChannel::shutdownNow);
            }
        }
    }

    /**
     * Review s3 finding 2: stalled readers whose responses fill the whole budget do not stall a
     * reading proxy until the send timeout (set so long here that waiting for it fails the
     * test), nor for ever when PILOT_XDS_SEND_TIMEOUT is 0: once a stream has stayed unwritable
     * for the park time its bytes move to the parked account, which has its own cap.
     */
    @ParameterizedTest
    @ValueSource(strings = {"10m", "0s"})
    void stalledReadersFillingTheBudgetDoNotStallAReadingProxy(String sendTimeout, @TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("services.yaml"), SlowReaderTest.services());
        try (MeshPilotServer server = TestServers.start(dir, Map.of(
                "MESHPILOT_XDS_BYTES_IN_FLIGHT", String.valueOf(BUDGET),
                "PILOT_XDS_SEND_TIMEOUT", sendTimeout,
                "PILOT_DEBOUNCE_AFTER", "20ms"), "--grpcTransport", "netty")) {
            int port = server.ports().get("grpc");
            int monitoring = server.ports().get("monitoring");
            List<ManagedChannel> channels = new ArrayList<>();
            List<StalledReader> stalled = new ArrayList<>();
            try {
                openStalledReaders(port, channels, stalled);
                Await.until("the stalled readers filled the budget: a write waits", Duration.ofSeconds(30),
                        () -> gauge(monitoring, "meshpilot_xds_send_budget_waits_total") > 0);

                try (AdsClient reading = new AdsClient(port,
                        "sidecar~10.0.0.1~reading-1.test~test.svc.cluster.local", Map.of())) {
                    reading.autoAnswer("");
                    reading.subscribe(CDS, List.of());
                    DiscoveryServer xds = server.server().components().discovery();
                    Await.until("the reading proxy got and ACKed its clusters while the stalled ones hold their bytes",
                            Duration.ofSeconds(30), () -> xds.connections().stream()
                                    .filter(c -> c.proxy().id().contains("~reading-"))
                                    .anyMatch(c -> c.watches().get(CDS) != null && c.watches().get(CDS).synced()));
                    // the budget was freed by parking the stalled streams' bytes, or by ending the
                    // longest-parked ones once the parked account was full (which of the two the
                    // reading proxy saw depends on timing)
                    long parked = gauge(monitoring, PARKED_GAUGE);
                    long ended = gauge(monitoring, "pilot_xds_write_timeout");
                    assertTrue(parked <= BUDGET, "parked bytes " + parked + " within " + BUDGET);
                    assertTrue(parked > 0 || ended > 0, "parked " + parked + " or ended " + ended);
                    assertNull(reading.error(), "the reading proxy's stream is open");
                }
            } finally {
                stalled.forEach(s -> s.call.cancel("done", null));
                channels.forEach(ManagedChannel::shutdownNow);
            }
        }
    }

    /** Opens {@link #STALLED} stalled readers, each on its own connection with a 16 KiB window. */
    static void openStalledReaders(int port, List<ManagedChannel> channels, List<StalledReader> stalled) {
        for (int i = 0; i < STALLED; i++) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                    .flowControlWindow(16 * 1024).build();
            channels.add(ch);
            stalled.add(new StalledReader(ch, "sidecar~10.0.1." + i + "~stalled-" + i + ".test~test.svc.cluster.local"));
        }
    }

    /** A proxy that opens its stream, asks for every cluster and never takes a message. */
    static final class StalledReader {
        final ClientCall<DiscoveryRequest, DiscoveryResponse> call;
        final CompletableFuture<Status> closed = new CompletableFuture<>();
        private final String nodeId;

        StalledReader(ManagedChannel channel, String nodeId) {
            this.nodeId = nodeId;
            call = channel.newCall(AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod(), CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
                @Override
                public void onClose(Status status, Metadata trailers) {
                    closed.complete(status);
                }
            }, new Metadata());
            call.sendMessage(DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId(nodeId)).setTypeUrl(CDS).build());
        }

        /** The proxy id the server logs: the node id. */
        String proxyId() {
            return nodeId;
        }
    }

    /** A series without labels from /metrics, -1 when the server does not export it. */
    static long gauge(int monitoring, String name) {
        PrometheusTextParser.Family f = PrometheusTextParser.parse(Http.get(monitoring, "/metrics").body()).get(name);
        return f == null || f.samples().isEmpty() ? -1 : (long) f.samples().get(0).value();
    }
}
