package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.StreamObserver;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** istiod's push queue semantics: one pending push per proxy, merged; never two workers on one proxy. */
class PushQueueTest {
    static Connection connection(String name) {
        StreamObserver<DiscoveryResponse> out = new StreamObserver<>() {
            @Override
            public void onNext(DiscoveryResponse value) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
        Proxy proxy = Proxy.fromNode(Node.newBuilder().setId("sidecar~10.0.0.1~" + name + ".default~default.svc.cluster.local")
                .build());
        return new Connection(name, proxy, "", out, OutboxTest.outbox(out, name));
    }

    static PushRequest eds(String host) {
        return PushRequest.incremental(TriggerReason.ENDPOINT, new ConfigKey("ServiceEntry", "default", host));
    }

    @Test
    void mergesPendingAndHoldsWhatArrivesWhileAProxyIsBeingPushed() throws Exception {
        PushQueue queue = new PushQueue();
        Connection a = connection("a");
        Connection b = connection("b");
        queue.enqueue(a, eds("x"));
        queue.enqueue(b, eds("x"));
        queue.enqueue(a, eds("y")); // merges into a's pending push, a keeps its place
        assertEquals(2, queue.pending());

        PushQueue.Item first = queue.dequeue();
        assertEquals(a, first.connection());
        assertEquals(Set.of("x", "y"), names(first.request()));

        queue.enqueue(a, PushRequest.full(TriggerReason.CONFIG, new ConfigKey("VirtualService", "default", "v")));
        queue.enqueue(a, eds("z")); // both held: a is being pushed
        assertEquals(b, queue.dequeue().connection(), "a is not handed to a second worker");
        queue.done(b);
        queue.done(a);
        PushQueue.Item again = queue.dequeue();
        assertEquals(a, again.connection());
        assertTrue(again.request().full(), "held requests merged: full wins");
        assertEquals(Set.of("v", "z"), names(again.request()));
        queue.done(a);
        assertEquals(0, queue.pending());
        queue.close();
        assertNull(queue.dequeue(), "a closed queue releases its workers");
    }

    static Set<String> names(PushRequest r) {
        return r.configsUpdated().stream().map(ConfigKey::name).collect(Collectors.toSet());
    }
}
