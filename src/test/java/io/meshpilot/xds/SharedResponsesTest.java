package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Shared responses: built once per key and version, encoded once, bounded, dropped on a newer version. */
class SharedResponsesTest {
    static SharedResponses.Key key(long version, long endpoints, String... names) {
        return new SharedResponses.Key(TypeUrls.ENDPOINT, version, endpoints, "default", false, false,
                SubscribedNames.of(List.of(names)));
    }

    @Test
    void builtOnceEncodedOnceAndDroppedOnNewerVersions() throws Exception {
        SharedResponses shared = new SharedResponses();
        AtomicInteger builds = new AtomicInteger();
        Supplier<DiscoveryResponse> build = () -> DiscoveryResponse.newBuilder()
                .setVersionInfo("v" + builds.incrementAndGet()).setNonce("n").build();
        DiscoveryResponse first = shared.get(key(1, 1, "a", "b"), build);
        assertSame(first, shared.get(key(1, 1, "b", "a"), build), "the same names in another order");
        assertEquals(1, builds.get());

        MethodDescriptor.Marshaller<DiscoveryResponse> m = shared.marshaller(
                ProtoUtils.marshaller(DiscoveryResponse.getDefaultInstance()));
        assertEquals(first, m.parse(m.stream(first)), "the shared bytes are the response's encoding");
        assertEquals(first.getSerializedSize(), m.stream(first).available());

        assertNotSame(first, shared.get(key(1, 2, "a", "b"), build), "an endpoint change builds anew");
        assertNotSame(first, shared.get(key(2, 2, "a", "b"), build), "a new push version builds anew");
        assertEquals(3, builds.get());

        for (int i = 0; i < SharedResponses.MAX_SHARED + 10; i++) {
            shared.get(key(2, 2, "n" + i), build);
        }
        int before = builds.get();
        shared.get(key(2, 2, "n" + (SharedResponses.MAX_SHARED + 5)), build);
        assertEquals(before + 1, builds.get(), "beyond the bound responses are built per proxy, not kept");
    }

    /**
     * Subscriptions come from clients: one stream after another, each asking EDS for 100,000
     * made-up names within its own bounds, would otherwise leave a large response each until the
     * next push. What is kept is bounded by its size as well as by its number.
     */
    @Test
    void keptResponsesAreBoundedByTheHeapTheyTake() {
        SharedResponses shared = new SharedResponses();
        AtomicInteger builds = new AtomicInteger();
        ByteString megabyte = ByteString.copyFrom(new byte[1024 * 1024]);
        Supplier<DiscoveryResponse> build = () -> DiscoveryResponse.newBuilder()
                .setVersionInfo("v" + builds.incrementAndGet())
                .addResources(Any.newBuilder().setTypeUrl(TypeUrls.ENDPOINT).setValue(megabyte))
                .build();
        int fit = (int) (SharedResponses.MAX_HEAP / (2 * megabyte.size()));
        DiscoveryResponse first = shared.get(key(1, 1, "first"), build);
        for (int i = 0; i < fit + 10; i++) {
            shared.get(key(1, 1, "big" + i), build);
        }
        assertSame(first, shared.get(key(1, 1, "first"), build), "kept while within the bound");
        int before = builds.get();
        shared.get(key(1, 1, "big" + (fit + 5)), build);
        assertEquals(before + 1, builds.get(), "past the heap bound responses are built per proxy, not kept");
    }
}
