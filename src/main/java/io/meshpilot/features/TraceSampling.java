package io.meshpilot.features;

import java.util.Optional;

/**
 * PILOT_TRACE_SAMPLING (istiod's pilot/pkg/features/telemetry.go TraceSampling): the percentage
 * of requests traced by a connection manager whose ProxyConfig leaves {@code tracing.sampling}
 * at 0. istiod takes a value outside 0..100 as 1.0 with a warning; the warning is kept here for
 * start-up to log once logging is set up.
 *
 * @param percent    the sampling percentage in force
 * @param outOfRange the value as set when it was outside 0..100, else null
 */
public record TraceSampling(double percent, String outOfRange) {
    /** istiod's default. */
    public static final double DEFAULT_PERCENT = 1.0;
    public static final TraceSampling DEFAULT = new TraceSampling(DEFAULT_PERCENT, null);

    /** Reads a set value: a number, in range or replaced by the default. */
    static TraceSampling parse(String value) {
        double p;
        try {
            p = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            p = Double.NaN;
        }
        if (Double.isNaN(p)) {
            throw new IllegalArgumentException("PILOT_TRACE_SAMPLING=\"" + value + "\": expected a number from 0 to 100");
        }
        return p < 0.0 || p > 100.0 ? new TraceSampling(DEFAULT_PERCENT, value.trim()) : new TraceSampling(p, null);
    }

    /** The start-up line for a value out of range. */
    public Optional<String> warning() {
        return Optional.ofNullable(outOfRange)
                .map(v -> "PILOT_TRACE_SAMPLING out of range: " + v + " (0 to 100), using " + DEFAULT_PERCENT);
    }
}
