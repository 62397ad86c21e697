package io.meshpilot.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The metrics test is only as good as its parser: it must reject what the format forbids. */
class PrometheusTextParserTest {
    @Test
    void acceptsAWellFormedExposition() {
        var f = PrometheusTextParser.parse("""
                # HELP pilot_xds_pushes Pilot build and send errors.
                # TYPE pilot_xds_pushes counter
                pilot_xds_pushes{type="cds",} 3
                pilot_xds_pushes{type="eds"} 1.5E1
                # TYPE t histogram
                t_bucket{le="0.1"} 1
                t_bucket{le="+Inf"} 2
                t_sum 0.3
                t_count 2
                x{a="q\\"uote\\\\"} NaN 1700000000000
                """);
        assertEquals(15.0, f.get("pilot_xds_pushes").samples().get(1).value());
        assertEquals("histogram", f.get("t").type());
        assertEquals("q\"uote\\", f.get("x").samples().get(0).labels().get("a"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "1bad_name 1\n",
            "m{a=\"x\"} one\n",
            "m{a=x} 1\n",
            "m{a=\"x\",a=\"y\"} 1\n",
            "m 1\nm 2\n",
            "a 1\nb 1\na 2\n",
            "# TYPE m counter\n# TYPE m counter\nm 1\n",
            "m 1\n# TYPE m gauge\n",
            "# TYPE m counter\nm -1\n",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\n",
            "m{a=\"\\x\"} 1\n",
            "m 1"})
    void rejectsViolations(String text) {
        assertThrows(IllegalArgumentException.class, () -> PrometheusTextParser.parse(text));
    }
}
