package io.meshpilot.inject;

import io.kubernetes.client.custom.Quantity;

/**
 * Kubernetes resource quantities in the canonical form the API machinery writes back
 * ({@code 2000m} becomes {@code 2}, {@code 1024Mi} becomes {@code 1Gi}), so an injected pod
 * reads as istiod's does: client-java's {@link Quantity}. It differs from Go's
 * resource.Quantity only in spelling, never in value, for a fractional binary quantity
 * ({@code 1.5Gi} is written {@code 1610612736}, Go writes {@code 1536Mi}) and a zero with a
 * suffix ({@code 0m}, Go writes {@code 0}); the API server stores its own spelling of either.
 */
final class ResourceQuantities {
    private ResourceQuantities() {
    }

    /** {@code written} in canonical form, or as written when it is no quantity (the API server then refuses it). */
    static String canonical(String written) {
        try {
            return Quantity.fromString(written.strip()).toSuffixedString();
        } catch (RuntimeException e) {
            // client-java 25.0.0 refuses most malformed input with QuantityFormatException but
            // throws ArrayIndexOutOfBoundsException for a bare suffix ("Mi")
            return written;
        }
    }
}
