package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/** The injector ConfigMap's {@code values} over the chart's defaults, coalesced as Helm coalesces them. */
class InjectionValuesTest {
    @Test
    void aNullRemovesTheChartDefaultAndKeepsItsSiblings() {
        InjectionValues v = InjectionValues.parse("""
                {"global":{"proxy":{"resources":{"limits":{"cpu":null,"memory":"500Mi"}}}}}""");
        assertFalse(v.get("global.proxy.resources.limits").getAsJsonObject().has("cpu"),
                "Helm drops a key set to null: no CPU limit");
        assertEquals("500Mi", v.string("global.proxy.resources.limits.memory"));
        assertEquals("100m", v.string("global.proxy.resources.requests.cpu"), "untouched defaults stay");
        assertEquals("proxyv2", v.string("global.proxy.image"));
    }
}
