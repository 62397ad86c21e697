package io.meshpilot.networking;

/**
 * Istio's cluster names: {@code outbound|<port>|<subset>|<host>}, {@code inbound|<port>||}, and
 * the SNI-DNAT form gateways pass TLS through to, {@code outbound_.<port>_.<subset>_.<host>}
 * (a name that is valid as an SNI).
 */
public final class ClusterNames {
    private ClusterNames() {
    }

    public static String outbound(int port, String subset, String host) {
        return "outbound|" + port + "|" + (subset == null ? "" : subset) + "|" + host;
    }

    /** The SNI-DNAT name of an outbound cluster (istiod's BuildDNSSrvSubsetKey). */
    public static String sniDnat(int port, String subset, String host) {
        return SNI_DNAT_PREFIX + port + "_." + (subset == null ? "" : subset) + "_." + host;
    }

    private static final String SNI_DNAT_PREFIX = "outbound_.";

    /** Parsed outbound name (either form), or null when {@code name} is not one. */
    public record Outbound(int port, String subset, String host) {
    }

    public static Outbound parseOutbound(String name) {
        // by hand, not split(): this runs for every cluster of every EDS push
        if (name.startsWith(SNI_DNAT_PREFIX)) {
            return parseSniDnat(name);
        }
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

    private static Outbound parseSniDnat(String name) {
        int a = SNI_DNAT_PREFIX.length();
        int b = name.indexOf("_.", a);
        int c = b < 0 ? -1 : name.indexOf("_.", b + 2);
        if (c < 0 || c + 2 >= name.length()) {
            return null;
        }
        try {
            return new Outbound(Integer.parseInt(name, a, b, 10), name.substring(b + 2, c), name.substring(c + 2));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
