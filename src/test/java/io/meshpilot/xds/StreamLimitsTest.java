package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one unauthenticated stream on the plaintext port can make the server hold is bounded
 * ({@link StreamLimits}): past a bound the stream ends with RESOURCE_EXHAUSTED saying which,
 * and until then the stream's state, as the proxy API shows it, stays within the bounds.
 */
class StreamLimitsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    /** The flood of the report: distinct type URLs, as many requests as it sent. */
    static final int FLOOD = 100_000;
    static final StreamLimits LIMITS = StreamLimits.DEFAULT;

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;
    static int http;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        // the syncz barrier over plaintext ADS: debug authorization off (DebugXdsAuthorizationTest covers it on)
        server = TestServers.start(dir, Map.of("ENABLE_DEBUG_ENDPOINT_AUTH", "false"));
        grpc = server.ports().get("grpc");
        http = server.ports().get("http");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String nodeId(String name) {
        return "sidecar~10.0.0.1~" + name + ".default~default.svc.cluster.local";
    }

    static AdsClient sidecar(String name) {
        return new AdsClient(grpc, nodeId(name), Map.of("NAMESPACE", "default"));
    }

    /** The proxy as GET /api/v1/proxies/{id} shows it: its types and how many names each holds. */
    static JsonObject types(String name) {
        Http.Reply r = Http.get(http, "/api/v1/proxies/" + nodeId(name));
        assertEquals(200, r.status(), r.body());
        return JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("types");
    }

    /**
     * Sends up to {@link #FLOOD} requests of distinct type URLs as fast as the transport takes
     * them, until the server ends the stream; returns how it ended (null if it did not).
     */
    static Throwable flood(AdsClient c, IntFunction<String> typeUrl) throws InterruptedException {
        for (int i = 0; i < FLOOD && c.error() == null; i++) {
            c.awaitReady();
            c.subscribe(typeUrl.apply(i), List.of());
        }
        return c.awaitError(WAIT);
    }

    /** The stream ended with RESOURCE_EXHAUSTED, and its description {@code says} why. */
    static void assertExhausted(Throwable end, String says) {
        assertNotNull(end, "the stream was not ended");
        Status status = Status.fromThrowable(end);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, status.getCode(), status.toString());
        assertTrue(status.getDescription().contains(says), status.getDescription());
    }

    /** The report's flood: 2,000-character type URLs end the stream at the first. */
    @Test
    void longTypeUrlsEndTheStreamAtTheFirst() throws Exception {
        try (AdsClient c = sidecar("long-types")) {
            Throwable end = flood(c, i -> {
                String distinct = String.format("type.googleapis.com/flood.n%08d.", i);
                return distinct + "x".repeat(2000 - distinct.length());
            });
            assertExhausted(end, "type URL of 2000 characters exceeds the limit of " + LIMITS.maxTypeUrlLength());
            assertTrue(server.server().components().discovery().debugConnection("long-types.default").isEmpty(), "no state left");
        }
        String metrics = Http.get(server.ports().get("monitoring"), "/metrics").body();
        assertFalse(metrics.contains("flood"), "no metric series from a type URL");
    }

    /** Distinct short type URLs: the stream holds at most the limit of them, then it is ended. */
    @Test
    void distinctTypeUrlsAreBoundedPerStream() throws Exception {
        try (AdsClient c = sidecar("many-types")) {
            IntFunction<String> typeUrl = i -> "type.googleapis.com/flood.T" + i;
            for (int i = 0; i < LIMITS.maxTypes(); i++) {
                c.subscribe(typeUrl.apply(i), List.of());
                c.await(typeUrl.apply(i), WAIT);
            }
            assertEquals(LIMITS.maxTypes(), types("many-types").size(), "one watch per type, up to the limit");
            Throwable end = flood(c, i -> typeUrl.apply(LIMITS.maxTypes() + i));
            assertExhausted(end, "more than " + LIMITS.maxTypes() + " distinct type URLs on one stream");
            assertTrue(server.server().components().discovery().debugConnection("many-types.default").isEmpty(), "no state left");
        }
        try (AdsClient c = sidecar("after-flood")) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            assertTrue(c.await(TypeUrls.CLUSTER, WAIT).getResourcesCount() > 0, "other streams are served as before");
        }
    }

    /** A type nobody serves is answered empty, as istiod answers it, and keeps none of the names it was asked. */
    @Test
    void aTypeNobodyServesKeepsNoNames() throws Exception {
        String unknown = "type.googleapis.com/example.Unknown";
        List<String> names = IntStream.range(0, 50_000).mapToObj(i -> "name-" + i).toList();
        try (AdsClient c = sidecar("unknown-names")) {
            c.subscribe(unknown, names);
            DiscoveryResponse r = c.await(unknown, WAIT);
            assertEquals(0, r.getResourcesCount());
            assertEquals(0, types("unknown-names").getAsJsonObject(unknown).get("subscribed").getAsInt());
            c.ack(r, names);
            NonceRulesTest.assertNotAnswered(c, "its ACK is an ACK");
        }
    }

    @Test
    void tooManyOrTooLongNamesEndTheStream() throws Exception {
        try (AdsClient c = sidecar("many-names")) {
            c.subscribe(TypeUrls.ENDPOINT, IntStream.rangeClosed(0, LIMITS.maxNamesPerType()).mapToObj(i -> "c" + i).toList());
            assertExhausted(c.awaitError(WAIT),
                    (LIMITS.maxNamesPerType() + 1) + " resource names of type eds exceed the limit");
        }
        try (AdsClient c = sidecar("long-name")) {
            c.subscribe(TypeUrls.ENDPOINT, List.of("outbound|9080||" + "r".repeat(LIMITS.maxNameLength())));
            assertExhausted(c.awaitError(WAIT), "exceeds the limit of " + LIMITS.maxNameLength());
        }
        try (AdsClient c = sidecar("long-version")) {
            c.send(DiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.CLUSTER).setResponseNonce("n")
                    .setVersionInfo("v".repeat(LIMITS.maxNameLength() + 1)).build(), false);
            assertExhausted(c.awaitError(WAIT), "resource name, version or nonce of");
        }
    }

    /** Delta subscriptions add up over requests: their number and their characters are bounded as one request's. */
    @Test
    void deltaSubscriptionsAreBoundedAsTheyGrow() throws Exception {
        int half = LIMITS.maxNamesPerType() / 2 + 1;
        try (DeltaAdsClient d = new DeltaAdsClient(grpc, nodeId("delta-many"))) {
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT)
                    .addAllResourceNamesSubscribe(IntStream.range(0, half).mapToObj(i -> "a" + i).toList()));
            assertNotNull(d.next(WAIT));
            assertEquals(half, types("delta-many").getAsJsonObject("eds").get("subscribed").getAsInt());
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT)
                    .addAllResourceNamesSubscribe(IntStream.range(0, half).mapToObj(i -> "b" + i).toList()));
            assertExhausted(d.awaitError(WAIT), "resource names of type eds exceed the limit");
        }
        // names of 1,000 characters: each request under gRPC's 4 MiB, together past the characters one request can carry
        int perRequest = LIMITS.maxNameCharsPerType() / 1000 / 2 + 1;
        try (DeltaAdsClient d = new DeltaAdsClient(grpc, nodeId("delta-long"))) {
            for (String prefix : List.of("a", "b")) {
                d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT).addAllResourceNamesSubscribe(
                        IntStream.range(0, perRequest).mapToObj(i -> String.format("%s%09d", prefix, i) + "n".repeat(990))
                                .toList()));
            }
            assertExhausted(d.awaitError(WAIT), "characters together exceed the limit");
        }
    }

    /** A NACK's message is kept (and logged) cut to a bounded length. */
    @Test
    void aNackMessageIsKeptBounded() throws Exception {
        try (AdsClient c = sidecar("long-nack")) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.nack(c.await(TypeUrls.CLUSTER, WAIT), List.of(), "e".repeat(1_000_000));
            Connection con = server.server().components().discovery().debugConnection("long-nack.default").orElseThrow();
            Await.until("the NACK recorded", WAIT,
                    () -> !con.watches().get(TypeUrls.CLUSTER).nackError().isEmpty());
            String kept = con.watches().get(TypeUrls.CLUSTER).nackError();
            assertTrue(kept.startsWith("e".repeat(LIMITS.maxErrorLength())), kept.substring(0, 100));
            assertTrue(kept.length() < LIMITS.maxErrorLength() + 100, "kept " + kept.length() + " characters");
            assertTrue(kept.endsWith("(" + (1_000_000 - LIMITS.maxErrorLength()) + " more characters)"),
                    kept.substring(LIMITS.maxErrorLength()));
        }
    }
}
