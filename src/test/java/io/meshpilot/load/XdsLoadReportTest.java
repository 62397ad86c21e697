package io.meshpilot.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the load tool reads from a server's /metrics and how it reports memory and the machine's load. */
class XdsLoadReportTest {
    static final String METRICS = """
            # HELP memory_usedHeap_bytes Displays the amount of used heap memory in bytes.
            # TYPE memory_usedHeap_bytes gauge
            memory_usedHeap_bytes{mp_scope="base"} 5.4123456E7
            # HELP meshpilot_grpc_netty_direct_memory_bytes_max Not the gauge: a longer name with its prefix.
            meshpilot_grpc_netty_direct_memory_bytes_max 1.0
            # TYPE meshpilot_grpc_netty_direct_memory_bytes gauge
            meshpilot_grpc_netty_direct_memory_bytes 2.097152E7
            """;

    @Test
    void readsASeriesWithLabelsOrWithoutAndNotALongerName() {
        assertEquals(54_123_456L, XdsLoad.sample(METRICS, "memory_usedHeap_bytes"));
        assertEquals(20_971_520L, XdsLoad.sample(METRICS, "meshpilot_grpc_netty_direct_memory_bytes"));
    }

    @Test
    void aSeriesTheServerDoesNotExportIsAnErrorNamingIt() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> XdsLoad.sample(METRICS, "meshpilot_xds_send_bytes_in_flight"));
        assertTrue(e.getMessage().contains("meshpilot_xds_send_bytes_in_flight"), e.getMessage());
    }

    @Test
    void memoryLineAddsHeapAndDirectInMiB() {
        XdsLoad.Memory m = new XdsLoad.Memory(300L << 20, 212L << 20);
        assertEquals("server heap + direct: 512.0 MiB (heap 300.0, direct 212.0) at the end", m.line());
    }

    @Test
    void machineLoadSaysWhetherItStayedUnderTheCores() {
        String quiet = MachineLoad.summary(new MachineLoad.Readings(0.5, 1.5, 1.0), 2);
        assertTrue(quiet.contains("0.5 before the run (under the cores)"), quiet);
        assertTrue(quiet.contains("1.5 at its highest (sampled every second; stayed under the cores)"), quiet);
        String noisy = MachineLoad.summary(new MachineLoad.Readings(3.0, 9.0, 4.0), 2);
        assertTrue(noisy.contains("3.0 before the run (NOT under the cores: other work was running)"), noisy);
        assertTrue(noisy.contains("9.0 at its highest (sampled every second; NOT under the cores"), noisy);
    }
}
