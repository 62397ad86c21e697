package io.meshpilot.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

    @ParameterizedTest
    @CsvSource({
            "100ms, 100000000",
            "10s, 10000000000",
            "1h30m, 5400000000000",
            "1.5s, 1500000000",
            "0, 0",
            "-2m, -120000000000",
            "250us, 250000",
            "3ns, 3",
            "2562047h47m16.854775807s, 9223372036854775807"})
    void parsesGoDurations(String text, long nanos) {
        assertEquals(Duration.ofNanos(nanos), GoDuration.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10", "ms", "1x", "1h 30m", "s10", "3000000h"})
    void rejectsWhatGoRejects(String text) {
        assertThrows(IllegalArgumentException.class, () -> GoDuration.parse(text));
    }

    @ParameterizedTest
    @CsvSource({"10s, 10s", "100ms, 100ms", "1m30s, 1m30s", "1h, 1h0m0s", "0, 0s", "1.5s, 1.5s"})
    void formatsLikeGo(String in, String out) {
        assertEquals(out, GoDuration.format(GoDuration.parse(in)));
    }

    @Test
    void infiniteRoundTrips() {
        assertEquals(GoDuration.INFINITE, GoDuration.parse(GoDuration.format(GoDuration.INFINITE)));
    }
}
