package io.meshpilot.config.validation.policy;

/**
 * IP addresses and CIDR prefixes as istiod reads them (Go's net/netip): IPv4 dotted quads
 * without leading zeros, IPv6 with at most one "::" and an optional trailing IPv4 part, zones
 * only on plain addresses, prefix lengths as plain decimal numbers. Answers with the reason a
 * value is not one, or null when it is.
 */
public final class IpLiterals {
    private IpLiterals() {
    }

    /** A single address or, with a "/", a CIDR prefix; null when valid. */
    public static String addressOrPrefix(String s) {
        return s.contains("/") ? prefix(s) : address(s) == null ? null : "\"" + s + "\" is not a valid IP address";
    }

    /** A CIDR prefix ({@code 10.0.0.0/8}, {@code 2001:db8::/32}); null when valid. */
    public static String prefix(String s) {
        int slash = s.lastIndexOf('/');
        String ip = s.substring(0, slash);
        String bits = s.substring(slash + 1);
        if (ip.contains("%")) {
            return "\"" + s + "\" is not a valid CIDR block: a zone is not allowed in a prefix";
        }
        if (address(ip) != null) {
            return "\"" + s + "\" is not a valid CIDR block: \"" + ip + "\" is not an IP address";
        }
        int max = ip.contains(":") ? 128 : 32;
        if (bits.isEmpty() || bits.length() > 3 || !bits.chars().allMatch(c -> c >= '0' && c <= '9')
                || (bits.length() > 1 && bits.charAt(0) == '0') || Integer.parseInt(bits) > max) {
            return "\"" + s + "\" is not a valid CIDR block: prefix length must be 0-" + max;
        }
        return null;
    }

    /** Why {@code s} is not an IP address, or null. */
    public static String address(String s) {
        if (s.isEmpty()) {
            return "empty";
        }
        if (s.indexOf(':') < 0) {
            return ipv4(s, 0, s.length());
        }
        return ipv6(s);
    }

    private static String ipv4(String s, int from, int to) {
        int fields = 0;
        int i = from;
        while (i <= to) {
            int start = i;
            while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            int len = i - start;
            if (len == 0 || len > 3) {
                return "bad IPv4 field";
            }
            if (len > 1 && s.charAt(start) == '0') {
                return "IPv4 field has a leading zero";
            }
            if (Integer.parseInt(s.substring(start, i)) > 255) {
                return "IPv4 field out of range";
            }
            fields++;
            if (i == to) {
                break;
            }
            if (s.charAt(i) != '.') {
                return "unexpected character in IPv4 address";
            }
            i++;
            if (i == to) {
                return "IPv4 address ends with a dot";
            }
        }
        return fields == 4 ? null : "IPv4 address needs 4 fields";
    }

    private static String ipv6(String s) {
        int end = s.length();
        int pct = s.indexOf('%');
        if (pct >= 0) {
            if (pct == s.length() - 1) {
                return "empty zone";
            }
            end = pct;
        }
        int groups = 0;
        int ellipsis = -1;
        int i = 0;
        if (end >= 2 && s.startsWith("::")) {
            ellipsis = 0;
            i = 2;
            if (i == end) {
                return null;
            }
        }
        while (i < end) {
            int start = i;
            while (i < end && i - start < 5 && Character.digit(s.charAt(i), 16) >= 0) {
                i++;
            }
            int len = i - start;
            if (len == 0 || len > 4) {
                return "bad IPv6 group";
            }
            if (i < end && s.charAt(i) == '.') {
                // trailing dotted IPv4 takes two groups
                if (ellipsis < 0 && groups != 6) {
                    return "embedded IPv4 address in the wrong place";
                }
                if (groups + 2 > 8) {
                    return "too many IPv6 groups";
                }
                String v4 = ipv4(s, start, end);
                if (v4 != null) {
                    return v4;
                }
                groups += 2;
                i = end;
                break;
            }
            groups++;
            if (i == end) {
                break;
            }
            if (s.charAt(i) != ':') {
                return "unexpected character in IPv6 address";
            }
            i++;
            if (i == end) {
                return "IPv6 address ends with a colon";
            }
            if (s.charAt(i) == ':') {
                if (ellipsis >= 0) {
                    return "more than one \"::\"";
                }
                ellipsis = groups;
                i++;
                if (i == end) {
                    break;
                }
            }
            if (groups > 8) {
                return "too many IPv6 groups";
            }
        }
        if (groups > 8 || (ellipsis >= 0 && groups > 7)) {
            return ellipsis >= 0 ? "\"::\" must stand for at least one group" : "too many IPv6 groups";
        }
        if (ellipsis < 0 && groups < 8) {
            return "IPv6 address too short";
        }
        return null;
    }
}
