package io.meshpilot.testing;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.http2.Http2HuffmanDecoder;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * An HPACK (RFC 7541) header block decoder for tests that speak raw HTTP/2: every
 * representation, the static and dynamic tables, and Huffman strings (decoded with Helidon's
 * public Huffman decoder). One instance per connection: the dynamic table spans header blocks.
 */
public final class HpackDecoder {
    private static final String[][] STATIC = {
            {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
            {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
            {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
            {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
            {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""},
            {"cache-control", ""}, {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
            {"content-length", ""}, {"content-location", ""}, {"content-range", ""}, {"content-type", ""},
            {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
            {"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
            {"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""},
            {"proxy-authenticate", ""}, {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
            {"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
            {"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""},
    };

    /** Newest entry first, as HPACK indexes them. */
    private final Deque<Map.Entry<String, String>> dynamic = new ArrayDeque<>();
    private int dynamicSize;
    private int maxDynamicSize = 4096;

    /** The header fields of one complete header block, in order. */
    public List<Map.Entry<String, String>> decode(byte[] block) {
        ByteArrayInputStream in = new ByteArrayInputStream(block);
        List<Map.Entry<String, String>> fields = new ArrayList<>();
        while (in.available() > 0) {
            int first = in.read();
            if ((first & 0x80) != 0) { // indexed field
                fields.add(entry(integer(in, first, 7)));
            } else if ((first & 0x40) != 0) { // literal with incremental indexing
                Map.Entry<String, String> f = literal(in, first, 6);
                fields.add(f);
                add(f);
            } else if ((first & 0x20) != 0) { // dynamic table size update
                maxDynamicSize = integer(in, first, 5);
                evict();
            } else { // literal without indexing (0000) or never indexed (0001)
                fields.add(literal(in, first, 4));
            }
        }
        return fields;
    }

    private Map.Entry<String, String> literal(ByteArrayInputStream in, int first, int prefix) {
        int index = integer(in, first, prefix);
        String name = index == 0 ? string(in) : entry(index).getKey();
        return Map.entry(name, string(in));
    }

    private Map.Entry<String, String> entry(int index) {
        if (index >= 1 && index <= STATIC.length) {
            return Map.entry(STATIC[index - 1][0], STATIC[index - 1][1]);
        }
        int d = index - STATIC.length - 1;
        if (d < 0 || d >= dynamic.size()) {
            throw new IllegalArgumentException("HPACK index " + index + " out of range");
        }
        return dynamic.stream().skip(d).findFirst().orElseThrow();
    }

    private void add(Map.Entry<String, String> f) {
        dynamic.addFirst(f);
        dynamicSize += size(f);
        evict();
    }

    private void evict() {
        while (dynamicSize > maxDynamicSize && !dynamic.isEmpty()) {
            dynamicSize -= size(dynamic.removeLast());
        }
    }

    private static int size(Map.Entry<String, String> f) {
        return f.getKey().getBytes(StandardCharsets.UTF_8).length + f.getValue().getBytes(StandardCharsets.UTF_8).length + 32;
    }

    private static String string(ByteArrayInputStream in) {
        int first = in.read();
        int length = integer(in, first, 7);
        byte[] bytes = new byte[length];
        if (in.readNBytes(bytes, 0, length) != length) {
            throw new IllegalArgumentException("HPACK string runs past the block");
        }
        if ((first & 0x80) != 0) {
            return Http2HuffmanDecoder.create().decodeString(BufferData.create(bytes), length);
        }
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** An HPACK integer with an N-bit prefix (RFC 7541 5.1), whose first byte is already read. */
    private static int integer(ByteArrayInputStream in, int first, int prefixBits) {
        int mask = (1 << prefixBits) - 1;
        int value = first & mask;
        if (value < mask) {
            return value;
        }
        int shift = 0;
        int b;
        do {
            b = in.read();
            if (b < 0) {
                throw new IllegalArgumentException("HPACK integer runs past the block");
            }
            value += (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        return value;
    }
}
