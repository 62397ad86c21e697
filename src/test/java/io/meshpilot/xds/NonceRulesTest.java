package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.Status;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's nonce and ACK rules (pkg/xds ShouldRespond, pilot/pkg/xds shouldRespondDelta) as
 * clients meet them: a type the stream has no state for is answered whatever nonce it
 * carries (a client reconnecting to another replica, istioctl's adsc), the debug types are
 * answered before any nonce check, and ACKs, NACKs and expired nonces of a known type are
 * treated as istiod treats them. Two servers with the same config stand for two replicas.
 */
class NonceRulesTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String REVIEWS = "outbound|9080||reviews.default.svc.cluster.local";
    static final String RATINGS = "outbound|9080||ratings.default.svc.cluster.local";
    /** A nonce this server never sent: the last one another replica sent the client. */
    static final String OTHER_REPLICAS_NONCE = "8f0e6a52-nonce-of-another-replica";

    @TempDir
    static Path dir;
    static MeshPilotServer first;
    static MeshPilotServer second;

    @BeforeAll
    static void start() throws Exception {
        // syncz over plaintext ADS: debug authorization off (DebugXdsAuthorizationTest covers it on)
        Map<String, String> env = Map.of("ENABLE_DEBUG_ENDPOINT_AUTH", "false");
        first = TestServers.start(withBookinfo(dir.resolve("first")), env);
        // one Helidon host per JVM: the second replica serves gRPC only, which is all its clients use
        second = MeshPilotServer.startGrpcOnly(TestServers.args(TestServers.flags(withBookinfo(dir.resolve("second"))),
                env));
    }

    private static Path withBookinfo(Path home) throws IOException {
        Files.createDirectories(home);
        TestServers.copyBookinfo(home);
        return home;
    }

    @AfterAll
    static void stop() {
        for (MeshPilotServer s : new MeshPilotServer[] {first, second}) {
            if (s != null) {
                s.close();
            }
        }
    }

    static AdsClient sidecar(MeshPilotServer server, String name) {
        return new AdsClient(server.ports().get("grpc"), nodeId(name), Map.of("NAMESPACE", "default", "ISTIO_VERSION", "1.28.0"));
    }

    /**
     * Asserts that the requests sent so far got no answer: a syncz request goes after them, and
     * the stream takes requests in order, so an answer they got would come before syncz's.
     */
    static void assertNotAnswered(AdsClient c, String why) throws InterruptedException {
        c.subscribe(TypeUrls.DEBUG_SYNCZ, List.of());
        DiscoveryResponse next = c.next(WAIT);
        assertNotNull(next, "no syncz answer");
        assertEquals(TypeUrls.DEBUG_SYNCZ, next.getTypeUrl(), why + ": answered " + next.getTypeUrl());
    }

    static String nodeId(String name) {
        return "sidecar~10.0.0.1~" + name + ".default~default.svc.cluster.local";
    }

    static Connection connection(MeshPilotServer server, String name) {
        return server.server().components().discovery().debugConnection(name + ".default").orElseThrow();
    }

    static List<String> names(List<Any> resources) {
        return resources.stream().map(ResourceNames::of).toList();
    }

    /** A request as a client sends it after a response: with that response's version and nonce. */
    static DiscoveryRequest replay(String type, String version, String nonce, List<String> names) {
        return DiscoveryRequest.newBuilder().setTypeUrl(type).setVersionInfo(version).setResponseNonce(nonce)
                .addAllResourceNames(names).build();
    }

    @Test
    void aFirstRequestWithAStaleNonceIsAnsweredAsAReconnect() throws Exception {
        try (AdsClient c = sidecar(first, "stale-first")) {
            c.send(replay(TypeUrls.CLUSTER, "17", OTHER_REPLICAS_NONCE, List.of()), false);
            DiscoveryResponse cds = c.await(TypeUrls.CLUSTER, WAIT);
            assertTrue(names(cds.getResourcesList()).contains(REVIEWS), names(cds.getResourcesList()).toString());
            c.send(replay(TypeUrls.ENDPOINT, "17", OTHER_REPLICAS_NONCE + "-eds", List.of(REVIEWS)), false);
            DiscoveryResponse eds = c.await(TypeUrls.ENDPOINT, WAIT);
            assertEquals(REVIEWS, eds.getResources(0).unpack(ClusterLoadAssignment.class).getClusterName());
            c.ack(cds, List.of());
            c.ack(eds, List.of(REVIEWS));
            assertNotAnswered(c, "the ACKs of the answers are not answered");
            assertTrue(connection(first, "stale-first").watches().values().stream().allMatch(Connection.Watch::synced));
        }
    }

    @Test
    void theSynczDebugTypeIsAnsweredWhateverItsNonceAndStartsNoWatch() throws Exception {
        try (AdsClient c = sidecar(first, "syncz-asker")) {
            c.send(replay(TypeUrls.DEBUG_SYNCZ, "", OTHER_REPLICAS_NONCE, List.of()), false);
            DiscoveryResponse syncz = c.await(TypeUrls.DEBUG_SYNCZ, WAIT);
            List<String> nodes = syncz.getResourcesList().stream().map(a -> unpack(a).getNode().getId()).toList();
            assertTrue(nodes.contains(nodeId("syncz-asker")), nodes.toString());
            // istiod answers every debug request, the ACK of an answer too: it keeps no state for them
            c.ack(syncz, List.of());
            assertNotNull(c.await(TypeUrls.DEBUG_SYNCZ, WAIT));
            assertFalse(connection(first, "syncz-asker").watches().containsKey(TypeUrls.DEBUG_SYNCZ),
                    "a debug request starts no watch: " + connection(first, "syncz-asker").watches().keySet());
        }
    }

    private static ClientConfig unpack(Any a) {
        try {
            return a.unpack(ClientConfig.class);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aNackIsRecordedWhateverItsNonce() throws Exception {
        try (AdsClient c = sidecar(first, "late-nack")) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.await(TypeUrls.CLUSTER, WAIT);
            // the NACK of a response sent before the last one (istiod records every NACK)
            c.send(DiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.CLUSTER).setResponseNonce("an-earlier-nonce")
                    .setErrorDetail(Status.newBuilder().setCode(3).setMessage("cluster x: late rejection")).build(), false);
            assertNotAnswered(c, "a NACK is not answered");
            String syncz = Http.get(first.ports().get("http"), "/debug/syncz").body();
            assertTrue(syncz.contains("\"lastError\":\"cluster x: late rejection\""), syncz);
        }
    }

    @Test
    void aRequestWithoutNamesForANamedTypeUnsubscribesWithoutAnAnswer() throws Exception {
        try (AdsClient c = sidecar(first, "unsubscriber")) {
            c.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS));
            DiscoveryResponse eds = c.await(TypeUrls.ENDPOINT, WAIT);
            c.ack(eds, List.of(REVIEWS));
            c.ack(eds, List.of());
            assertNotAnswered(c, "an unsubscription is not answered");
            assertFalse(connection(first, "unsubscriber").watches().containsKey(TypeUrls.ENDPOINT));
        }
    }

    @Test
    void namesLeavingANamedSubscriptionAreNotAnsweredNamesJoiningItAre() throws Exception {
        try (AdsClient c = sidecar(first, "narrower")) {
            c.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS, RATINGS));
            DiscoveryResponse eds = c.await(TypeUrls.ENDPOINT, WAIT);
            c.ack(eds, List.of(REVIEWS, RATINGS));
            c.ack(eds, List.of(REVIEWS));
            assertNotAnswered(c, "Envoy needs nothing for a cluster it dropped");
            assertEquals(Set.of(REVIEWS), connection(first, "narrower").watches().get(TypeUrls.ENDPOINT).names());
            c.ack(eds, List.of(REVIEWS, RATINGS));
            DiscoveryResponse again = c.await(TypeUrls.ENDPOINT, WAIT);
            assertEquals(2, again.getResourcesCount());
        }
    }

    /** istiod's AlwaysRespond: after CDS starts again, the next EDS ACK is answered so that Envoy can warm its clusters. */
    @Test
    void theEdsAckAfterCdsStartsAgainIsAnsweredForWarming() throws Exception {
        try (AdsClient c = sidecar(first, "warmer")) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.ack(c.await(TypeUrls.CLUSTER, WAIT), List.of());
            c.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS));
            DiscoveryResponse eds = c.await(TypeUrls.ENDPOINT, WAIT);
            c.ack(eds, List.of(REVIEWS));
            assertNotAnswered(c, "the EDS ACK");
            c.subscribe(TypeUrls.CLUSTER, List.of()); // no nonce: CDS starts again
            c.ack(c.await(TypeUrls.CLUSTER, WAIT), List.of());
            c.ack(eds, List.of(REVIEWS));
            assertNotNull(c.await(TypeUrls.ENDPOINT, WAIT), "EDS answered once more for warming");
        }
    }

    @Test
    void deltaAnswersAFirstRequestWithAStaleNonceAndIgnoresRequestsThatChangeNothing() throws Exception {
        try (DeltaAdsClient d = new DeltaAdsClient(first.ports().get("grpc"), nodeId("delta-stale"))) {
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.CLUSTER).setResponseNonce(OTHER_REPLICAS_NONCE));
            DeltaDiscoveryResponse cds = d.next(WAIT);
            assertNotNull(cds, "a reconnect's CDS is answered");
            assertTrue(cds.getResourcesList().stream().map(Resource::getName).toList().contains(REVIEWS));
            d.ack(cds);
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT).addResourceNamesSubscribe(REVIEWS)
                    .setResponseNonce(OTHER_REPLICAS_NONCE + "-eds"));
            DeltaDiscoveryResponse eds = d.next(WAIT);
            assertNotNull(eds, "a reconnect's EDS is answered");
            assertEquals(List.of(REVIEWS), eds.getResourcesList().stream().map(Resource::getName).toList());
            d.ack(eds);
            // a spontaneous request that subscribes to what is already subscribed changes nothing
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ENDPOINT).addResourceNamesSubscribe(REVIEWS));
            // and the debug type, answered whatever its nonce, is the next answer: nothing came before it
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.DEBUG_SYNCZ).setResponseNonce("any"));
            DeltaDiscoveryResponse syncz = d.next(WAIT);
            assertNotNull(syncz, "the debug type is answered whatever its nonce");
            assertEquals(TypeUrls.DEBUG_SYNCZ, syncz.getTypeUrl(), "nothing changed: no answer");
            assertFalse(connection(first, "delta-stale").watches().containsKey(TypeUrls.DEBUG_SYNCZ));
        }
    }

    /**
     * Acceptance: a client that reconnects to another replica repeating the version, nonce and
     * names it last had from the first (as Envoy and istioctl's adsc do) gets its whole
     * config from the second, and its ACKs there are ACKs.
     */
    @Test
    void aClientMovingToASecondServerWithItsLastNoncesGetsFullConfig() throws Exception {
        Map<String, DiscoveryResponse> fromFirst = new LinkedHashMap<>();
        Map<String, List<String>> subscribed = new LinkedHashMap<>();
        subscribed.put(TypeUrls.CLUSTER, List.of());
        subscribed.put(TypeUrls.LISTENER, List.of());
        subscribed.put(TypeUrls.ENDPOINT, List.of(REVIEWS, RATINGS));
        subscribed.put(TypeUrls.ROUTE, List.of("9080"));
        try (AdsClient c = sidecar(first, "mover")) {
            for (var s : subscribed.entrySet()) {
                c.subscribe(s.getKey(), s.getValue());
                DiscoveryResponse r = c.await(s.getKey(), WAIT);
                c.ack(r, s.getValue());
                fromFirst.put(s.getKey(), r);
            }
        }
        try (AdsClient c = sidecar(second, "mover")) {
            for (var s : subscribed.entrySet()) {
                DiscoveryResponse last = fromFirst.get(s.getKey());
                c.send(replay(s.getKey(), last.getVersionInfo(), last.getNonce(), s.getValue()), false);
                DiscoveryResponse r = c.await(s.getKey(), WAIT);
                assertEquals(names(last.getResourcesList()), names(r.getResourcesList()),
                        TypeUrls.shortName(s.getKey()) + ": the same config from the second server");
                assertTrue(r.getResourcesCount() > 0, TypeUrls.shortName(s.getKey()));
                c.ack(r, s.getValue());
            }
            assertNotAnswered(c, "the ACKs are not answered");
            Connection con = connection(second, "mover");
            assertEquals(subscribed.keySet(), con.watches().keySet());
            assertTrue(con.watches().values().stream().allMatch(Connection.Watch::synced), "every type ACKed");
        }
    }
}
