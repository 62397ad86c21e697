package io.meshpilot.util;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations written the way istiod's flags and env vars take them (Go's time.ParseDuration):
 * a sequence of decimal numbers with units ns, us (or µs), ms, s, m, h, e.g. {@code 100ms},
 * {@code 1h30m}, {@code 2562047h47m16.854775807s}. A bare {@code 0} is allowed.
 */
public final class GoDuration {
    /** What istiod prints for "no limit" (math.MaxInt64 nanoseconds). */
    public static final Duration INFINITE = Duration.ofNanos(Long.MAX_VALUE);

    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

    private GoDuration() {
    }

    public static Duration parse(String text) {
        String s = text == null ? "" : text.trim();
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty duration");
        }
        boolean negative = s.startsWith("-");
        if (negative || s.startsWith("+")) {
            s = s.substring(1);
        }
        if (s.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = PART.matcher(s);
        int pos = 0;
        BigDecimal nanos = BigDecimal.ZERO;
        while (pos < s.length()) {
            if (!m.find(pos) || m.start() != pos) {
                throw new IllegalArgumentException("invalid duration \"" + text
                        + "\" (expected e.g. 100ms, 10s, 1h30m)");
            }
            BigDecimal value = new BigDecimal(m.group(1));
            long unit = switch (m.group(2)) {
                case "ns" -> 1L;
                case "us", "µs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                default -> 3_600_000_000_000L;
            };
            nanos = nanos.add(value.multiply(BigDecimal.valueOf(unit)));
            pos = m.end();
        }
        if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("duration \"" + text + "\" is out of range");
        }
        long n = nanos.longValue();
        return Duration.ofNanos(negative ? -n : n);
    }

    /** Formats like Go's Duration.String() for the values we print (e.g. 10s, 1m30s, 100ms). */
    public static String format(Duration d) {
        if (d.equals(INFINITE)) {
            return "2562047h47m16.854775807s";
        }
        if (d.isZero()) {
            return "0s";
        }
        if (d.compareTo(Duration.ofSeconds(1)) < 0 && d.toNanos() % 1_000_000 == 0) {
            return d.toMillis() + "ms";
        }
        StringBuilder sb = new StringBuilder();
        long h = d.toHours();
        int m = d.toMinutesPart();
        if (h > 0) {
            sb.append(h).append('h');
        }
        if (h > 0 || m > 0) {
            sb.append(m).append('m');
        }
        long secNanos = d.toSecondsPart() * 1_000_000_000L + d.toNanosPart();
        BigDecimal secs = BigDecimal.valueOf(secNanos, 9).stripTrailingZeros();
        sb.append(secs.toPlainString()).append('s');
        return sb.toString();
    }
}
