package io.meshpilot.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The load tool decides "this proxy has the new EDS" from these reads; they must agree with protobuf's. */
class XdsLoadPortsTest {

    @Test
    void readsServiceAndPortsOfEveryAssignmentAsProtobufDoes() throws IOException {
        List<ClusterLoadAssignment> all = JcpServer.assignments(300, 3, 20000);
        for (ClusterLoadAssignment cla : all) {
            XdsLoad.Ports p = XdsLoad.Ports.of(cla.toByteString());
            int expectedService = Integer.parseInt(cla.getClusterName().replaceAll(".*\\|\\|svc-(\\d+)\\..*", "$1"));
            assertEquals(expectedService, p.service, cla.getClusterName());
            var ports = cla.getEndpointsList().stream().flatMap(g -> g.getLbEndpointsList().stream())
                    .mapToInt(e -> e.getEndpoint().getAddress().getSocketAddress().getPortValue()).toArray();
            assertEquals(ports.length, p.count);
            assertEquals(Arrays.stream(ports).min().orElseThrow(), p.min);
            assertEquals(Arrays.stream(ports).max().orElseThrow(), p.max);
        }
    }

    @Test
    void readsAnAssignmentInsideALargerArrayAndNothingAroundIt() throws IOException {
        // as in a received response: the assignment's bytes sit between others (which would
        // count as more endpoints, on other ports, if the bounds leaked)
        byte[] before = JcpServer.assignments(5, 2, 30000).get(2).toByteArray();
        byte[] bytes = JcpServer.assignments(5, 2, 19000).get(3).toByteArray();
        byte[] after = JcpServer.assignments(5, 2, 40000).get(4).toByteArray();
        ByteString all = ByteString.copyFrom(before).concat(ByteString.copyFrom(bytes)).concat(ByteString.copyFrom(after));
        XdsLoad.Ports p = XdsLoad.Ports.of(ByteString.copyFrom(all.toByteArray())
                .substring(before.length, before.length + bytes.length));
        assertEquals(3, p.service);
        assertEquals(2, p.count);
        assertEquals(19000, p.min);
        assertEquals(19001, p.max);
    }

    @Test
    void truncatedOrMalformedAssignmentsAreErrorsNotGuesses() {
        byte[] bytes = JcpServer.assignments(2, 2, 19000).get(0).toByteArray();
        ByteString truncated = ByteString.copyFrom(bytes, 0, bytes.length - 3);
        assertThrows(IOException.class, () -> XdsLoad.Ports.of(truncated));
        ByteString group = ByteString.copyFrom(new byte[] {0x0b}); // field 1, wire type 3 (group start)
        assertThrows(IOException.class, () -> XdsLoad.Ports.of(group));
        ByteString fieldZero = ByteString.copyFrom(new byte[] {0x00, 0x01});
        assertThrows(IOException.class, () -> XdsLoad.Ports.of(fieldZero));
        // field 2, a length of 2^31 - 1 that would wrap the position around
        ByteString huge = ByteString.copyFrom(new byte[] {0x12, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07, 0});
        assertThrows(IOException.class, () -> XdsLoad.Ports.of(huge));
    }

    @Test
    void fixedSizeFieldsAreSkipped() throws IOException {
        ClusterLoadAssignment cla = JcpServer.assignments(3, 2, 19000).get(1);
        // unknown fields 100 (fixed32) and 101 (fixed64) before the assignment's own fields
        byte[] fixed = {(byte) 0xa5, 0x06, 1, 2, 3, 4, (byte) 0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8};
        XdsLoad.Ports p = XdsLoad.Ports.of(ByteString.copyFrom(fixed).concat(cla.toByteString()));
        assertEquals(1, p.service);
        assertEquals(2, p.count);
        assertEquals(19000, p.min);
        assertThrows(IOException.class, () -> XdsLoad.Ports.of(ByteString.copyFrom(fixed, 0, 10)), "cut short");
    }

    @Test
    void serviceIndexOnlyFromIstioOutboundNamesOfTheToolsServices() {
        assertEquals(42, XdsLoad.serviceIndex("outbound|8080||svc-42.default.svc.cluster.local"));
        assertEquals(-1, XdsLoad.serviceIndex("outbound|8080||other.default.svc.cluster.local"));
        assertEquals(-1, XdsLoad.serviceIndex("outbound|8080||svc-.default"));
        assertEquals(-1, XdsLoad.serviceIndex("outbound|8080||svc-4x.default"));
        assertEquals(-1, XdsLoad.serviceIndex("outbound|8080||svc-12345678901.default"));
    }
}
