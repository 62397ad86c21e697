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
        return parsePiped(name, OUTBOUND_PREFIX);
    }

    private static final String OUTBOUND_PREFIX = "outbound|";
    private static final String INBOUND_VIP_PREFIX = "inbound-vip|";

    /**
     * A waypoint's cluster for a service it serves (istiod's BuildSubsetKey with
     * TrafficDirectionInboundVIP): {@code inbound-vip|<port>|<protocol>[/<subset>]|<host>},
     * {@code protocol} {@code http} or {@code tcp}.
     */
    public static String inboundVip(int port, String protocol, String subset, String host) {
        return INBOUND_VIP_PREFIX + port + "|" + protocol + (subset == null || subset.isEmpty() ? "" : "/" + subset)
                + "|" + host;
    }

    /** A parsed {@link #inboundVip} name: its DestinationRule subset is what follows the protocol's {@code /}. */
    public record InboundVip(int port, String protocol, String subset, String host) {
    }

    /** The parsed waypoint cluster name, or null when {@code name} is not one. */
    public static InboundVip parseInboundVip(String name) {
        Outbound o = parsePiped(name, INBOUND_VIP_PREFIX);
        if (o == null) {
            return null;
        }
        int slash = o.subset().indexOf('/');
        return slash < 0 ? new InboundVip(o.port(), o.subset(), "", o.host())
                : new InboundVip(o.port(), o.subset().substring(0, slash), o.subset().substring(slash + 1), o.host());
    }

    /** The service host an outbound or waypoint cluster is for, or null when {@code name} is neither. */
    public static String host(String name) {
        Outbound o = parseOutbound(name);
        if (o != null) {
            return o.host();
        }
        InboundVip v = parseInboundVip(name);
        return v == null ? null : v.host();
    }

    /** {@code <prefix><port>|<subset>|<host>}, or null. */
    private static Outbound parsePiped(String name, String prefix) {
        if (!name.startsWith(prefix)) {
            return null;
        }
        int a = prefix.length();
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
