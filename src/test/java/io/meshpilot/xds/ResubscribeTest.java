package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.StreamObserver;
import io.meshpilot.model.Proxy;
import io.meshpilot.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A type unsubscribed and subscribed again while a push for the old subscription is still
 * under way: the late push must neither replace the new subscription's first answer nor be
 * recorded anywhere, or the proxy's ACK of that answer counts as expired and the type stalls.
 */
class ResubscribeTest {
    /** A stream whose first write blocks until released (a push in flight), recording every response. */
    static final class HeldStream implements StreamObserver<DiscoveryResponse> {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch writing = new CountDownLatch(1);
        final List<String> written = new CopyOnWriteArrayList<>();

        @Override
        public void onNext(DiscoveryResponse r) {
            writing.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            written.add(r.getNonce());
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }
    }

    private static DiscoveryResponse cds(String nonce) {
        return DiscoveryResponse.newBuilder().setTypeUrl(TypeUrls.CLUSTER).setNonce(nonce).setVersionInfo("1").build();
    }

    @Test
    void aLatePushForAnUnsubscribedWatchIsDropped() throws Exception {
        HeldStream stream = new HeldStream();
        Proxy proxy = Proxy.fromNode(Node.newBuilder().setId("sidecar~10.0.0.1~a.default~default.svc.cluster.local")
                .build());
        Connection con = new Connection("a.default-1", proxy, "", stream,
                OutboxTest.outbox(stream, "resubscribe"));
        Connection.Watch old = con.watch(TypeUrls.CLUSTER);
        con.send(old, cds("first"));
        assertTrue(stream.writing.await(10, TimeUnit.SECONDS), "the first answer is being written");

        con.unwatch(TypeUrls.CLUSTER);
        Connection.Watch renewed = con.watch(TypeUrls.CLUSTER);
        con.send(renewed, cds("answer-to-resubscription"));
        con.send(old, cds("late-push-for-the-old-watch"));
        stream.release.countDown();

        Await.until("the answer to the resubscription", Duration.ofSeconds(10),
                () -> stream.written.contains("answer-to-resubscription"));
        assertEquals("answer-to-resubscription", renewed.nonceSent(), "the ACK of the answer is looked for here");
        assertEquals(List.of("first", "answer-to-resubscription"), stream.written);
        assertEquals(0, con.unsent());
    }
}
