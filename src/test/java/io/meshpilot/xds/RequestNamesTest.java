package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnknownFieldSet;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestNamesTest {
    private static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    private static List<String> clusters(int n, String suffix) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("outbound|8080||svc-" + i + ".default.svc.cluster.local" + suffix);
        }
        return names;
    }

    private static DiscoveryRequest ack(String nonce, List<String> names) {
        return DiscoveryRequest.newBuilder().setTypeUrl(EDS).setVersionInfo("v-" + nonce).setResponseNonce(nonce)
                .addAllResourceNames(names).build();
    }

    @Test
    void anAckRepeatingTheNamesGetsTheFirstRequestsStringsAndEveryOtherField() {
        RequestNames reader = new RequestNames();
        DiscoveryRequest first = DiscoveryRequest.newBuilder(ack("", clusters(1000, "")))
                .setNode(Node.newBuilder().setId("sidecar~10.0.0.1~a.default~default.svc.cluster.local")).build();
        DiscoveryRequest a = reader.parse(first.toByteArray());
        assertEquals(first, a);

        DiscoveryRequest second = ack("7", clusters(1000, "")); // new Strings, same bytes
        DiscoveryRequest b = reader.parse(second.toByteArray());
        assertEquals(second, b, "every field as the usual parser reads it");
        assertEquals(1, reader.reused());
        for (int i = 0; i < 1000; i++) {
            assertSame(a.getResourceNames(i), b.getResourceNames(i), "name " + i + " is the first request's String");
        }
    }

    @Test
    void differentNamesOfTheSameLengthAreDecoded() {
        RequestNames reader = new RequestNames();
        reader.parse(ack("1", clusters(1000, "-a")).toByteArray());
        DiscoveryRequest other = ack("2", clusters(1000, "-b"));
        assertEquals(other, reader.parse(other.toByteArray()));
        assertEquals(0, reader.reused());
    }

    @Test
    void fieldsOnBothSidesOfTheNamesAndUnknownFieldsAreKept() {
        RequestNames reader = new RequestNames();
        DiscoveryRequest r = DiscoveryRequest.newBuilder(ack("3", clusters(100, "")))
                .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(3).setMessage("bad cluster"))
                .setUnknownFields(UnknownFieldSet.newBuilder().addField(99,
                        UnknownFieldSet.Field.newBuilder().addVarint(5).build()).build())
                .build();
        reader.parse(r.toByteArray());
        DiscoveryRequest again = reader.parse(r.toByteArray());
        assertEquals(r, again);
        assertEquals(1, reader.reused());
    }

    /** Bytes as a hand-written encoder might lay them out; each case must read as one parse reads it. */
    @Test
    void aRequestReadAroundItsNamesIsTheRequestOneParseReads() throws Exception {
        List<String> names = clusters(100, "");
        Node a = Node.newBuilder().setId("sidecar~10.0.0.1~a.default~default.svc.cluster.local").build();
        Node b = Node.newBuilder().setCluster("east").build();
        List<byte[]> cases = new ArrayList<>();
        // type_url on both sides (the last wins), node on both sides (they merge), the same unknown
        // field on both sides (both kept, in order), a varint with field number 3 (an unknown field)
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CodedOutputStream c = CodedOutputStream.newInstance(out);
        c.writeString(4, "first-type");
        c.writeMessage(2, a);
        c.writeUInt64(99, 1);
        c.writeUInt64(3, 7);
        for (String n : names) {
            c.writeString(3, n);
        }
        c.writeString(4, EDS);
        c.writeMessage(2, b);
        c.writeUInt64(99, 2);
        c.writeString(5, "nonce-1");
        c.flush();
        cases.add(out.toByteArray());
        // the names first, or last
        cases.add(DiscoveryRequest.newBuilder().addAllResourceNames(names).build().toByteString()
                .concat(DiscoveryRequest.newBuilder().setTypeUrl(EDS).setVersionInfo("v1").build().toByteString())
                .toByteArray());
        cases.add(DiscoveryRequest.newBuilder().setTypeUrl(EDS).setVersionInfo("v1").build().toByteString()
                .concat(DiscoveryRequest.newBuilder().addAllResourceNames(names).build().toByteString())
                .toByteArray());
        for (byte[] bytes : cases) {
            RequestNames reader = new RequestNames();
            DiscoveryRequest once = DiscoveryRequest.parseFrom(bytes);
            assertEquals(once, reader.parse(bytes), "decoded");
            assertEquals(once, reader.parse(bytes), "names reused");
            assertEquals(1, reader.reused());
            assertEquals(once.getUnknownFields(), reader.parse(bytes).getUnknownFields());
        }
    }

    @Test
    void aListThatWouldTakeTooMuchHeapIsNotKept() {
        RequestNames reader = new RequestNames();
        // short names: few bytes each, but a String each once decoded
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            many.add(Integer.toString(i, 36));
        }
        DiscoveryRequest r = ack("8", many);
        DiscoveryRequest first = reader.parse(r.toByteArray());
        DiscoveryRequest second = reader.parse(r.toByteArray());
        assertEquals(r, second);
        assertNotSame(first.getResourceNames(0), second.getResourceNames(0));
        assertEquals(0, reader.reused());
    }

    @Test
    void namesInterruptedByAnotherFieldOrShortListsGoToTheUsualParser() throws Exception {
        RequestNames reader = new RequestNames();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CodedOutputStream c = CodedOutputStream.newInstance(out);
        List<String> names = clusters(100, "");
        for (int i = 0; i < 50; i++) {
            c.writeString(3, names.get(i));
        }
        c.writeString(4, EDS); // valid protobuf, but not one run of names
        for (int i = 50; i < 100; i++) {
            c.writeString(3, names.get(i));
        }
        c.flush();
        assertNull(reader.parse(out.toByteArray()));
        assertNull(reader.parse(ack("4", List.of("outbound|80||a.default.svc.cluster.local")).toByteArray()),
                "short list");
        assertNull(reader.parse(new byte[] {(byte) 0x1a, 0x7f, 'x'}), "truncated");

        // through the marshaller, the usual parser then reads (or rejects) them
        MethodDescriptor.Marshaller<DiscoveryRequest> m = reader.marshaller(
                AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller());
        DiscoveryRequest parsed = m.parse(new ByteArrayInputStream(out.toByteArray()));
        assertEquals(names, parsed.getResourceNamesList());
        assertEquals(EDS, parsed.getTypeUrl());
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> m.parse(new ByteArrayInputStream(new byte[] {(byte) 0x1a, 0x7f, 'x'})));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
    }

    @Test
    void invalidUtf8InALongListIsRejectedAsTheUsualParserRejectsIt() throws Exception {
        RequestNames reader = new RequestNames();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CodedOutputStream c = CodedOutputStream.newInstance(out);
        for (String n : clusters(100, "")) {
            c.writeString(3, n);
        }
        c.writeByteArray(3, new byte[] {(byte) 0xff, (byte) 0xfe}); // a name that is not UTF-8
        c.flush();
        assertNull(reader.parse(out.toByteArray()));
        MethodDescriptor.Marshaller<DiscoveryRequest> m = reader.marshaller(
                AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller());
        assertThrows(StatusRuntimeException.class, () -> m.parse(new ByteArrayInputStream(out.toByteArray())));
    }

    /**
     * As Helidon 4.4's request stream: an InputStream over its message that knows its length
     * and answers 0 instead of -1 at the end (InputStream.readAllBytes never returns on it).
     */
    private static final class ZeroAtEnd extends InputStream implements KnownLength {
        private final byte[] bytes;
        private int at;

        ZeroAtEnd(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int read() {
            return at < bytes.length ? bytes[at++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = Math.min(len, bytes.length - at);
            System.arraycopy(bytes, at, b, off, n);
            at += n;
            return n;
        }

        @Override
        public int available() {
            return bytes.length - at;
        }
    }

    @Test
    void aStreamThatAnswersZeroAtItsEndIsReadToItsLength() {
        RequestNames reader = new RequestNames();
        MethodDescriptor.Marshaller<DiscoveryRequest> m = reader.marshaller(
                AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller());
        DiscoveryRequest r = ack("5", clusters(100, ""));
        assertEquals(r, assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> m.parse(new ZeroAtEnd(r.toByteArray()))));
        DiscoveryRequest small = ack("6", List.of("a"));
        assertEquals(small, assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> m.parse(new ZeroAtEnd(small.toByteArray()))));
    }

    @Test
    void onlyTheMostRecentListsAreKept() {
        RequestNames reader = new RequestNames();
        DiscoveryRequest oldest = ack("0", clusters(100, "-0"));
        DiscoveryRequest firstParse = reader.parse(oldest.toByteArray());
        for (int i = 1; i <= RequestNames.MAX_LISTS; i++) {
            reader.parse(ack("x", clusters(100, "-" + i)).toByteArray());
        }
        DiscoveryRequest again = reader.parse(oldest.toByteArray());
        assertNotNull(again);
        assertNotSame(firstParse.getResourceNames(0), again.getResourceNames(0), "the oldest list was let go");
        assertEquals(0, reader.reused());
        // the newest ones are still there
        reader.parse(ack("y", clusters(100, "-" + RequestNames.MAX_LISTS)).toByteArray());
        assertEquals(1, reader.reused());
    }
}
