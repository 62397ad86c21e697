package io.meshpilot.util;

/** A string that is not an IP address or prefix; the reason is worded as Go's netip words it. */
public final class IpSyntaxException extends IllegalArgumentException {
    private final String input;
    private final String reason;

    public IpSyntaxException(String input, String reason) {
        super("\"" + input + "\": " + reason);
        this.input = input;
        this.reason = reason;
    }

    public String input() {
        return input;
    }

    public String reason() {
        return reason;
    }
}
