package io.meshpilot.inject;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.custom.Quantity.Format;
import java.math.BigDecimal;

/**
 * Kubernetes resource quantities in the canonical form Go's resource.Quantity writes
 * ({@code 2000m} becomes {@code 2}, {@code 1024Mi} becomes {@code 1Gi}, {@code 0.5Gi} becomes
 * {@code 512Mi}), so an injected pod reads as istiod's: the API server keeps the spelling it
 * receives. client-java's {@link Quantity} writes the same except for two cases corrected
 * here: it writes any binary quantity with a fraction in its spelling as a plain number
 * ({@code 1.5Gi} as {@code 1610612736}), and a zero with its suffix ({@code 0m}).
 */
final class ResourceQuantities {
    private static final BigDecimal KI = BigDecimal.valueOf(1024);

    private ResourceQuantities() {
    }

    /** {@code written} in canonical form, or as written when it is no quantity (the API server then refuses it). */
    static String canonical(String written) {
        Quantity quantity;
        try {
            quantity = Quantity.fromString(written.strip());
        } catch (RuntimeException e) {
            // client-java 25.0.0 refuses most malformed input with QuantityFormatException but
            // throws ArrayIndexOutOfBoundsException for a bare suffix ("Mi")
            return written;
        }
        BigDecimal number = quantity.getNumber();
        if (number.signum() == 0) {
            return "0";
        }
        if (quantity.getFormat() == Format.BINARY_SI && isWhole(number) && number.compareTo(KI) >= 0) {
            // Go keeps the binary suffix for a whole number of bytes from 1Ki up, whatever its spelling
            return new Quantity(number.setScale(0), Format.BINARY_SI).toSuffixedString();
        }
        return quantity.toSuffixedString();
    }

    private static boolean isWhole(BigDecimal n) {
        return n.stripTrailingZeros().scale() <= 0;
    }
}
