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
        String[] p = name.split("\\|", -1);
        if (p.length != 4 || !p[0].equals("outbound")) {
            return null;
        }
        try {
            return new Outbound(Integer.parseInt(p[1]), p[2], p[3]);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
