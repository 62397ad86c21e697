package io.meshpilot.networking.validation;

/**
 * One broken constraint of a generated Envoy resource: where ({@code clusters[outbound|80||a].name})
 * and what ({@code string.min_len 1}). A value, not an exception, so one run reports them all.
 */
public record Violation(String path, String message) {
    @Override
    public String toString() {
        return path + ": " + message;
    }
}
