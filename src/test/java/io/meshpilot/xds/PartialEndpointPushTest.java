package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.StreamObserver;
import io.meshpilot.model.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * istiod's partial EDS push on a state-of-the-world stream (Connection#sendChangedEndpoints):
 * only changed clusters are sent, and a partial response that replaces an unsent one for a
 * slow reader still carries the clusters the replaced one would have delivered; a full
 * response waiting to be written is never replaced by a partial one.
 */
class PartialEndpointPushTest {
    static final Set<String> SUBSCRIBED = Set.of("a", "b", "c", "d");

    /** A stream whose writes wait for a permit each, recording the clusters of every response written. */
    static final class GatedStream implements StreamObserver<DiscoveryResponse> {
        final Semaphore permits = new Semaphore(0);
        final AtomicInteger started = new AtomicInteger();
        final List<Set<String>> written = new CopyOnWriteArrayList<>();

        @Override
        public void onNext(DiscoveryResponse r) {
            started.incrementAndGet();
            permits.acquireUninterruptibly();
            Set<String> clusters = new TreeSet<>();
            for (Any a : r.getResourcesList()) {
                clusters.add(ResourceNames.of(a));
            }
            written.add(clusters);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onCompleted() {
        }

        /** Waits until the writer has started its {@code n}th write (and waits there for a permit). */
        void awaitStarted(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (started.get() < n && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(n, started.get(), "writes started");
        }

        void awaitWritten(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (written.size() < n && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(n, written.size(), "responses written: " + written);
        }
    }

    static DiscoveryResponse response(Set<String> clusters) {
        var b = DiscoveryResponse.newBuilder().setTypeUrl(TypeUrls.ENDPOINT).setVersionInfo("1").setNonce("n");
        new TreeSet<>(clusters).forEach(c -> b.addResources(Any.pack(ClusterLoadAssignment.newBuilder().setClusterName(c)
                .build())));
        return b.build();
    }

    static Connection connection(GatedStream stream) {
        Proxy proxy = Proxy.fromNode(Node.newBuilder().setId("sidecar~10.0.0.1~p.default~default.svc.cluster.local").build());
        return new Connection("p", proxy, "", stream, OutboxTest.outbox(stream, "p"));
    }

    static Connection.Watch eds(Connection con) {
        Connection.Watch w = con.watch(TypeUrls.ENDPOINT);
        w.restart(new SubscribedNames.Pool().of(SUBSCRIBED), false);
        return w;
    }

    /** Every partial build is recorded, so a test sees what a response was built for. */
    static final List<Set<String>> BUILT = new CopyOnWriteArrayList<>();

    static void changed(Connection con, Connection.Watch w, String... clusters) {
        con.sendChangedEndpoints(w, Set.of(clusters), names -> {
            BUILT.add(names);
            return response(names);
        }, () -> response(SUBSCRIBED));
    }

    @Test
    void onlyTheChangedClustersAreSent() throws Exception {
        GatedStream stream = new GatedStream();
        Connection con = connection(stream);
        Connection.Watch w = eds(con);
        stream.permits.release(10);
        con.sendEndpoints(w, () -> response(SUBSCRIBED));
        stream.awaitWritten(1);
        changed(con, w, "b");
        stream.awaitWritten(2);
        assertEquals(List.of(SUBSCRIBED, Set.of("b")), stream.written);
    }

    @Test
    void aReplacedPartialResponsesClustersGoWithTheOneThatReplacesIt() throws Exception {
        GatedStream stream = new GatedStream();
        Connection con = connection(stream);
        Connection.Watch w = eds(con);
        stream.permits.release(1);
        con.sendEndpoints(w, () -> response(SUBSCRIBED));
        stream.awaitWritten(1);

        changed(con, w, "a"); // taken by the writer, which now waits for the reader
        stream.awaitStarted(2);
        changed(con, w, "b"); // queued behind it
        changed(con, w, "c"); // replaces the queued one: must still carry b
        stream.permits.release(10);
        stream.awaitWritten(3);
        Set<String> delivered = new TreeSet<>();
        stream.written.subList(1, 3).forEach(delivered::addAll);
        assertEquals(Set.of("a", "b", "c"), delivered, "written: " + stream.written);
        assertTrue(stream.written.get(2).containsAll(Set.of("b", "c")), "written: " + stream.written);

        // a later change sends only its own cluster again: what was written is no longer owed
        changed(con, w, "d");
        stream.awaitWritten(4);
        assertEquals(Set.of("d"), stream.written.get(3));
    }

    @Test
    void aFullResponseWaitingToBeWrittenIsNotReplacedByAPartialOne() throws Exception {
        GatedStream stream = new GatedStream();
        Connection con = connection(stream);
        Connection.Watch w = eds(con);
        con.sendEndpoints(w, () -> response(Set.of("a"))); // the writer takes it and waits
        stream.awaitStarted(1);
        con.sendEndpoints(w, () -> response(SUBSCRIBED)); // e.g. the proxy subscribed to more: queued
        List<Set<String>> builtBefore = new ArrayList<>(BUILT);
        changed(con, w, "c");
        stream.permits.release(10);
        stream.awaitWritten(2);
        assertEquals(SUBSCRIBED, stream.written.get(1), "the full response, not a partial one: " + stream.written);
        assertEquals(builtBefore, BUILT, "no partial response was built while a full one was unsent");
    }

    /** A mesh-wide endpoint change is the full response, shared by every proxy of the subscription, not a partial one. */
    @Test
    void whenEveryClusterChangedTheFullResponseIsSent() throws Exception {
        GatedStream stream = new GatedStream();
        Connection con = connection(stream);
        Connection.Watch w = eds(con);
        stream.permits.release(10);
        con.sendEndpoints(w, () -> response(Set.of("a")));
        stream.awaitWritten(1);
        List<Set<String>> builtBefore = new ArrayList<>(BUILT);
        changed(con, w, "a", "b", "c", "d");
        stream.awaitWritten(2);
        assertEquals(SUBSCRIBED, stream.written.get(1));
        assertEquals(builtBefore, BUILT, "no partial response was built");
    }
}
