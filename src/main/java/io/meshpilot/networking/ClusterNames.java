package io.meshpilot.networking;

/** Istio's cluster names: {@code outbound|<port>|<subset>|<host>}, {@code inbound|<port>||}. */
public final class ClusterNames {
    private ClusterNames() {
    }

    public static String outbound(int port, String subset, String host) {
        return "outbound|" + port + "|" + (subset == null ? "" : subset) + "|" + host;
    }

    /** Parsed outbound name, or null when {@code name} is not one. */
    public record Outbound(int port, String subset, String host) {
    }

    public static Outbound parseOutbound(String name) {
        // by hand, not split(): this runs for every cluster of every EDS push
        if (!name.startsWith("outbound|")) {
            return null;
        }
        int a = "outbound|".length();
        int b = name.indexOf('|', a);
        int c = b < 0 ? -1 : name.indexOf('|', b + 1);
        if (c < 0 || name.indexOf('|', c + 1) >= 0) {
            return null;
        }
        try {
            return new Outbound(Integer.parseInt(name, a, b, 10), name.substring(b + 1, c), name.substring(c + 1));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
