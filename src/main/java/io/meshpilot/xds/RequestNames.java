package io.meshpilot.xds;

import com.google.protobuf.CodedInputStream;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;

/**
 * Reads state-of-the-world requests whose resource names repeat a recent request's byte for
 * byte without decoding those names again. A sidecar's EDS ACK repeats its whole subscription
 * (1,000 cluster names, about 45 KB), and 2,000 sidecars ACK every push: decoding them built
 * two million Strings per fan-out. Here the names' bytes are hashed (CRC32C) and compared with
 * the recent name lists; a match gets that list's Strings, which also makes the ACK's comparison
 * with the subscription ({@link SubscribedNames#sameAs}) an identity check per name.
 *
 * <p>Only a request whose names are one run of field 3, as every protobuf encoder writes them,
 * is read this way, and only when they are at least {@link #MIN_BYTES} long; anything else, a
 * malformed request included, goes to the usual parser and gets its answer.
 */
final class RequestNames {
    /** Shorter name lists are decoded as usual: a lookup would cost about as much. */
    static final int MIN_BYTES = 1024;
    /**
     * Distinct name lists kept (sidecars of one scope share one), and the heap they may take:
     * their bytes plus {@link #STRING_OVERHEAD} per decoded name.
     */
    static final int MAX_LISTS = 64;
    static final long MAX_HEAP = 32L * 1024 * 1024;
    /** A decoded name's String and array headers and its list slot, above its characters. */
    static final int STRING_OVERHEAD = 48;
    private static final int NAMES_TAG = 3 << 3 | 2; // resource_names, length-delimited

    /** The bytes of a run of names: stored copies, and probes over a request's own array. */
    private static final class Span {
        final byte[] bytes;
        final int from;
        final int to;
        final int hash;

        Span(byte[] bytes, int from, int to, int hash) {
            this.bytes = bytes;
            this.from = from;
            this.to = to;
            this.hash = hash;
        }

        int length() {
            return to - from;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Span s && s.hash == hash && Arrays.equals(s.bytes, s.from, s.to, bytes, from, to);
        }
    }

    private final Map<Span, List<String>> recent = new LinkedHashMap<>(16, 0.75f, true); // least recently used first
    private long recentHeap;
    private final LongAdder reused = new LongAdder();

    /** Requests whose names were taken from an earlier request instead of decoded. */
    long reused() {
        return reused.sum();
    }

    /** {@code usual} (grpc-java's protobuf marshaller) with requests read as described above. */
    MethodDescriptor.Marshaller<DiscoveryRequest> marshaller(MethodDescriptor.Marshaller<DiscoveryRequest> usual) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(DiscoveryRequest value) {
                return usual.stream(value);
            }

            @Override
            public DiscoveryRequest parse(InputStream stream) {
                byte[] bytes;
                try {
                    bytes = readFully(stream);
                } catch (IOException e) {
                    throw Status.INTERNAL.withDescription("cannot read the request: " + e.getMessage()).withCause(e)
                            .asRuntimeException();
                }
                DiscoveryRequest r = RequestNames.this.parse(bytes);
                // sized, so that the usual parser reads them in one piece
                return r != null ? r : usual.parse(new SharedResponses.Encoded(bytes));
            }
        };
    }

    /**
     * A message's bytes. An uncompressed message comes in a stream that knows its length, on
     * both transports; Helidon 4.4's answers 0 instead of -1 once read to the end, so such a
     * stream is read to its length (reading to the end would never end). A decompressing
     * stream is read to its end, as grpc-java's own parser reads it.
     */
    static byte[] readFully(InputStream stream) throws IOException {
        if (!(stream instanceof KnownLength)) {
            return stream.readAllBytes();
        }
        byte[] bytes = new byte[stream.available()];
        int n = 0;
        for (int r; n < bytes.length && (r = stream.read(bytes, n, bytes.length - n)) > 0; ) {
            n += r;
        }
        if (n < bytes.length) {
            throw new EOFException("message ended after " + n + " of its " + bytes.length + " bytes");
        }
        return bytes;
    }

    /** The request in {@code bytes}, or null when the usual parser should read it. */
    DiscoveryRequest parse(byte[] bytes) {
        try {
            int first = -1;
            int end = -1;
            CodedInputStream in = CodedInputStream.newInstance(bytes);
            for (int at = 0, tag; (tag = in.readTag()) != 0; at = in.getTotalBytesRead()) {
                if (tag == NAMES_TAG) {
                    if (first >= 0 && end != at) {
                        return null; // names interrupted by another field: not one run
                    }
                    first = first < 0 ? at : first;
                    in.skipField(tag);
                    end = in.getTotalBytesRead();
                } else {
                    in.skipField(tag);
                }
            }
            if (first < 0 || end - first < MIN_BYTES) {
                return null;
            }
            CRC32C crc = new CRC32C();
            crc.update(bytes, first, end - first);
            Span probe = new Span(bytes, first, end, (int) crc.getValue());
            List<String> names = lookup(probe);
            if (names == null) {
                names = List.copyOf(DiscoveryRequest.parser().parseFrom(bytes, first, end - first)
                        .getResourceNamesList());
                remember(new Span(Arrays.copyOfRange(bytes, first, end), 0, end - first, probe.hash), names);
            } else {
                reused.increment();
            }
            // the fields around the names, then the names: parsing in parts merges as one parse does
            return DiscoveryRequest.newBuilder()
                    .mergeFrom(bytes, 0, first)
                    .mergeFrom(bytes, end, bytes.length - end)
                    .addAllResourceNames(names)
                    .build();
        } catch (IOException e) { // from an array: only InvalidProtocolBufferException
            return null; // the usual parser reports it
        }
    }

    private synchronized List<String> lookup(Span probe) {
        return recent.get(probe);
    }

    private synchronized void remember(Span span, List<String> names) {
        long heap = heap(span, names);
        if (heap > MAX_HEAP / 4 || recent.containsKey(span)) {
            return;
        }
        recent.put(span, names);
        recentHeap += heap;
        Iterator<Map.Entry<Span, List<String>>> eldest = recent.entrySet().iterator();
        while (recent.size() > MAX_LISTS || recentHeap > MAX_HEAP) {
            Map.Entry<Span, List<String>> e = eldest.next();
            recentHeap -= heap(e.getKey(), e.getValue());
            eldest.remove();
        }
    }

    /** What a kept list takes: its bytes twice (the key, and the Strings' characters) and each String's overhead. */
    private static long heap(Span span, List<String> names) {
        return 2L * span.length() + (long) STRING_OVERHEAD * names.size();
    }
}
