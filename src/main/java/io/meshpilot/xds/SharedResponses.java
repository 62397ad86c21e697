package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * State-of-the-world CDS and EDS responses shared by every proxy that asks for the same thing:
 * the same type and names, seen from the same scope, at the same push version and endpoint
 * generation. They are built once, serialized once, and the same bytes are written to each
 * of those streams (a response's nonce is then shared too: nonces need only be unique within a
 * stream). After an endpoint change in every service, 2,000 sidecars otherwise each had the
 * same 290 KB response generated and encoded again.
 */
final class SharedResponses {
    /** What a shared response depends on. */
    record Key(String typeUrl, long pushVersion, long endpointGeneration, Object scope, boolean proxyless,
               boolean wildcard, Set<String> names) {
    }

    /**
     * At most this many distinct responses are kept per push version and endpoint generation:
     * sidecars of one scope share one; proxyless clients that each ask for their own names
     * would otherwise keep a response each until the next change.
     */
    static final int MAX_SHARED = 256;
    /**
     * And at most this much heap: a response kept takes about its encoding twice (the message
     * and its bytes) and its key's names. Subscriptions come from clients, and one stream
     * after another asking for 100,000 made-up names would otherwise each leave a response.
     */
    static final long MAX_HEAP = 64L * 1024 * 1024;

    private final Map<Key, DiscoveryResponse> byKey = new ConcurrentHashMap<>();
    private final Map<DiscoveryResponse, byte[]> bytes = Collections.synchronizedMap(new IdentityHashMap<>());
    private volatile long pushVersion = -1;
    private volatile long endpointGeneration = -1;
    private final AtomicLong heap = new AtomicLong();

    /** The response for {@code key}, built by {@code build} only once while the key's versions are current. */
    DiscoveryResponse get(Key key, Supplier<DiscoveryResponse> build) {
        if (key.pushVersion() != pushVersion || key.endpointGeneration() != endpointGeneration) {
            synchronized (this) {
                if (key.pushVersion() != pushVersion || key.endpointGeneration() != endpointGeneration) {
                    // a newer push or endpoint change: what was shared is never asked for again
                    byKey.clear();
                    bytes.clear();
                    heap.set(0);
                    pushVersion = key.pushVersion();
                    endpointGeneration = key.endpointGeneration();
                }
            }
        }
        if (byKey.size() >= MAX_SHARED && !byKey.containsKey(key)) {
            return build.get(); // many different subscriptions (proxyless clients): not worth keeping them all
        }
        DiscoveryResponse[] notKept = new DiscoveryResponse[1];
        DiscoveryResponse kept = byKey.computeIfAbsent(key, k -> {
            DiscoveryResponse r = build.get();
            long size = 2L * r.getSerializedSize() + namesHeap(k.names());
            if (heap.addAndGet(size) > MAX_HEAP) {
                heap.addAndGet(-size);
                notKept[0] = r; // built for this proxy alone, as past MAX_SHARED
                return null;
            }
            bytes.put(r, r.toByteArray());
            return r;
        });
        return kept != null ? kept : notKept[0];
    }

    private static long namesHeap(Set<String> names) {
        long chars = 0;
        for (String n : names) {
            chars += n.length();
        }
        return chars + (long) RequestNames.STRING_OVERHEAD * names.size();
    }

    /** The bytes of a shared response (encoded once when it was built), or null for any other response. */
    byte[] encoded(DiscoveryResponse response) {
        return bytes.get(response);
    }

    /** A marshaller that writes a shared response's bytes as they are, and any other response as usual. */
    MethodDescriptor.Marshaller<DiscoveryResponse> marshaller(MethodDescriptor.Marshaller<DiscoveryResponse> usual) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(DiscoveryResponse value) {
                byte[] encoded = encoded(value);
                return encoded == null ? usual.stream(value) : new Encoded(encoded);
            }

            @Override
            public DiscoveryResponse parse(InputStream stream) {
                return usual.parse(stream);
            }
        };
    }

    /**
     * Bytes gRPC can size up front (both transports then copy them once into their buffers;
     * grpc-java's protobuf parser reads them in one piece).
     */
    static final class Encoded extends ByteArrayInputStream implements KnownLength {
        Encoded(byte[] bytes) {
            super(bytes);
        }
    }
}
