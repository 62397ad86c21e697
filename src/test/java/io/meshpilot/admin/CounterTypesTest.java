package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The TYPE lines of istiod's counters are retyped, whatever the write boundaries; nothing else changes. */
class CounterTypesTest {
    static final String TEXT = """
            # HELP pilot_xds_pushes Pilot build and send errors for lds, rds, cds and eds.
            # TYPE pilot_xds_pushes gauge
            pilot_xds_pushes{type="cds"} 3.0
            # HELP pilot_xds Number of endpoints connected to this pilot using XDS.
            # TYPE pilot_xds gauge
            pilot_xds 2.0
            # TYPE pilot_xds_pushes_other gauge
            """;

    private static String rewrite(String contentType, int chunk) throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (var out = new CounterTypes.Rewriter(sink, Set.of("pilot_xds_pushes")::contains, () -> contentType)) {
            byte[] bytes = TEXT.getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < bytes.length; i += chunk) {
                if (chunk == 1) {
                    out.write(bytes[i]);
                } else {
                    out.write(bytes, i, Math.min(chunk, bytes.length - i));
                }
            }
        }
        return sink.toString(StandardCharsets.UTF_8);
    }

    @Test
    void onlyTheCountersTypeLineChangesForEveryWriteSize() throws Exception {
        String expected = TEXT.replace("# TYPE pilot_xds_pushes gauge", "# TYPE pilot_xds_pushes counter");
        for (int chunk : new int[] {1, 2, 7, 64, 4096}) {
            assertEquals(expected, rewrite("text/plain; version=0.0.4", chunk), "writes of " + chunk);
        }
    }

    @Test
    void openMetricsOutputIsLeftAlone() throws Exception {
        assertEquals(TEXT, rewrite("application/openmetrics-text; version=1.0.0", 5));
    }

    @Test
    void aLastLineWithoutNewlineIsKept() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (var out = new CounterTypes.Rewriter(sink, "c"::equals, () -> "text/plain")) {
            out.write("# TYPE c gauge".getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("# TYPE c counter", sink.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theApplicationScopeLabelIsDroppedAndTheJvmsScopesKept() throws Exception {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (var out = new CounterTypes.Rewriter(sink, "c"::equals, () -> "text/plain")) {
            out.write("memory_usedHeap_bytes{mp_scope=\"base\",} 1.0\nc{mp_scope=\"application\",} 2.0\n"
                    .getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("memory_usedHeap_bytes{mp_scope=\"base\",} 1.0\nc 2.0\n", sink.toString(StandardCharsets.UTF_8));
        assertEquals("pilot_no_ip 1.0\n",
                CounterTypes.Rewriter.withoutApplicationScope("pilot_no_ip{mp_scope=\"application\",} 1.0\n"));
        assertEquals("pilot_xds{version=\"1.26.0\"} 2.0\n",
                CounterTypes.Rewriter.withoutApplicationScope("pilot_xds{mp_scope=\"application\",version=\"1.26.0\",} 2.0\n"));
        assertEquals("pilot_xds_pushes{type=\"cds\"} 3.0\n",
                CounterTypes.Rewriter.withoutApplicationScope("pilot_xds_pushes{type=\"cds\",mp_scope=\"application\"} 3.0\n"));
        // label values are the proxies' text: left exactly as they are
        String nack = "pilot_xds_cds_reject{node=\"a{,b,}c mp_scope=\\\"application\\\",\",err=\"13\",mp_scope=\"application\",} 1.0\n";
        assertEquals("pilot_xds_cds_reject{node=\"a{,b,}c mp_scope=\\\"application\\\",\",err=\"13\"} 1.0\n",
                CounterTypes.Rewriter.withoutApplicationScope(nack));
    }
}
