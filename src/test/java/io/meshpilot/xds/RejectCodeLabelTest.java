package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The {@code err} label of pilot_xds_*_reject: istiod's code names, and one value for whatever else a proxy sends. */
class RejectCodeLabelTest {
    @Test
    void grpcCodesAreNamedAsGoNamesThem() {
        assertEquals("OK", XdsMetrics.rejectCode(0));
        assertEquals("Canceled", XdsMetrics.rejectCode(1));
        assertEquals("InvalidArgument", XdsMetrics.rejectCode(3));
        assertEquals("Internal", XdsMetrics.rejectCode(13));
        assertEquals("Unauthenticated", XdsMetrics.rejectCode(16));
    }

    @Test
    void codesOutsideGrpcsSetShareOneLabelValue() {
        assertEquals("unknown", XdsMetrics.rejectCode(17));
        assertEquals("unknown", XdsMetrics.rejectCode(-1));
        assertEquals("unknown", XdsMetrics.rejectCode(Integer.MAX_VALUE));
    }
}
