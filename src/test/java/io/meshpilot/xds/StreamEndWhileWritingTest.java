package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.security.DebugAuthorizer;
import io.meshpilot.testing.Await;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * grpc-java's StreamObserver is not thread-safe: a stream that a request ends (past the
 * stream's bounds) while the send thread is writing a response must be ended after that
 * write, never during it, and nothing may be written after the end.
 */
class StreamEndWhileWritingTest {
    /** The server's side of a stream: its first write blocks until released; it notes an end that overlaps a write. */
    static final class WatchedStream implements StreamObserver<DiscoveryResponse> {
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch writing = new CountDownLatch(1);
        final AtomicBoolean inWrite = new AtomicBoolean();
        final AtomicBoolean endedDuringWrite = new AtomicBoolean();
        final AtomicReference<Status> ended = new AtomicReference<>();
        final AtomicInteger writesAfterEnd = new AtomicInteger();

        @Override
        public void onNext(DiscoveryResponse r) {
            if (ended.get() != null) {
                writesAfterEnd.incrementAndGet();
            }
            inWrite.set(true);
            writing.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inWrite.set(false);
        }

        @Override
        public void onError(Throwable t) {
            endedDuringWrite.compareAndSet(false, inWrite.get());
            ended.set(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
        }
    }

    @Test
    void aStreamEndedMidWriteEndsAfterTheWrite() throws Exception {
        PushContext push;
        try (MeshFixture mesh = new MeshFixture()) {
            push = mesh.push();
        }
        ConnectionTable table = new ConnectionTable();
        XdsCache cache = new XdsCache(true);
        AdsProtocol protocol = new AdsProtocol(table, Generators.standalone(cache), cache, new SharedResponses(),
                () -> push, StreamLimits.DEFAULT, new DebugAuthorizer(PilotFeatures.DebugAuth.DEFAULTS),
                ControlPlane.getDefaultInstance());
        AdsService ads = new AdsService(() -> true, table, protocol, new StreamRateLimiter(1000, Duration.ofSeconds(1)),
                null, Map.of(), new SendBudget(OutboxTest.UNBOUNDED), Duration.ZERO, false);
        WatchedStream out = new WatchedStream();
        StreamObserver<DiscoveryRequest> in = ads.streamAggregatedResources(out);
        in.onNext(DiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.CLUSTER)
                .setNode(Node.newBuilder().setId("sidecar~10.0.0.1~a.default~default.svc.cluster.local")).build());
        assertTrue(out.writing.await(10, TimeUnit.SECONDS), "the CDS answer is being written");

        // a type URL past the stream's bounds ends the stream, from the request thread
        Thread requester = new Thread(() -> in.onNext(DiscoveryRequest.newBuilder()
                .setTypeUrl("type.googleapis.com/" + "x".repeat(10_000)).build()));
        requester.start();
        Await.until("the stream's end either happened or waits for the write", Duration.ofSeconds(10),
                () -> out.ended.get() != null || requester.getState() == Thread.State.BLOCKED);
        out.release.countDown();
        requester.join(10_000);

        assertFalse(out.endedDuringWrite.get(), "onError was called while onNext was running");
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, out.ended.get().getCode(), String.valueOf(out.ended.get()));
        assertEquals(0, out.writesAfterEnd.get());
    }
}
