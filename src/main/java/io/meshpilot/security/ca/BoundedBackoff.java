package io.meshpilot.security.ca;

import java.time.Duration;

/**
 * How long and how often start-up asks the API server again for istiod's CA Secrets, as
 * istiod's self-signed CA does (pkg/backoff: 500 ms first, growing by half each time, at most
 * 60 s apart, all within a 20-minute context) before it gives up and start-up fails.
 *
 * @param first  the first pause
 * @param most   the longest pause
 * @param budget the whole wait; once spent the last error is final
 */
public record BoundedBackoff(Duration first, Duration most, Duration budget) {
    /** istiod's: 500 ms growing to 60 s, for at most {@code budget}. */
    public static BoundedBackoff istiod(Duration budget) {
        return new BoundedBackoff(Duration.ofMillis(500), Duration.ofSeconds(60), budget);
    }

    public BoundedBackoff {
        if (first.isNegative() || first.isZero() || most.compareTo(first) < 0 || budget.isNegative()) {
            throw new IllegalArgumentException("backoff " + first + ".." + most + " within " + budget
                    + ": pauses must be positive, growing, and the budget not negative");
        }
    }

    /** The pause after {@code previous} (null before the first). */
    public Duration after(Duration previous) {
        if (previous == null) {
            return first;
        }
        Duration grown = previous.plus(previous.dividedBy(2));
        return grown.compareTo(most) > 0 ? most : grown;
    }
}
