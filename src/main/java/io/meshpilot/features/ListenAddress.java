package io.meshpilot.features;

/**
 * A listen address as istiod's flags take it: {@code :8080} (all interfaces),
 * {@code 127.0.0.1:0} (ephemeral port), {@code [::1]:15010}. An empty flag value means the
 * listener is not opened on its own port (istiod then multiplexes it onto the http port).
 *
 * @param host interface to bind, {@code 0.0.0.0} for all
 * @param port port, 0 for ephemeral
 */
public record ListenAddress(String host, int port) {

    public ListenAddress {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range 0-65535");
        }
    }

    /** Parses a flag value; returns null for the empty string (listener disabled / merged). */
    public static ListenAddress parse(String flag, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.trim();
        int colon = v.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--" + flag + " \"" + value + "\": expected host:port or :port");
        }
        String host = v.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.contains(":")) {
            throw new IllegalArgumentException("--" + flag + " \"" + value + "\": IPv6 hosts need brackets, e.g. [::1]:8080");
        }
        int port;
        try {
            port = Integer.parseInt(v.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + flag + " \"" + value + "\": port is not a number");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--" + flag + " \"" + value + "\": port is out of range 0-65535");
        }
        return new ListenAddress(host.isEmpty() ? "0.0.0.0" : host, port);
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
