package io.meshpilot.util;

import java.util.Arrays;

/**
 * An IP address read the way istiod reads one from config: Go's {@code netip.ParseAddr}.
 * IPv4 is exactly four dotted decimal fields of 0-255 with no leading zeros (so no octal or hex
 * forms); IPv6 has at most one "::", fields of one to four hex digits, an optional trailing
 * dotted IPv4 part (so {@code ::ffff:1.2.3.4} is an IPv4-mapped IPv6 address) and an optional
 * non-empty {@code %zone}. No name is ever looked up: unlike {@code InetAddress.getByName},
 * a string that is not a literal is simply not an address.
 *
 * <p>Go's older {@code net.ParseIP} reads the same forms but refuses a zone; callers that
 * mirror an istiod check built on it use {@link #hasZone()} to say so.
 *
 * @param bytes 4 bytes for IPv4, 16 for IPv6 (an IPv4-mapped address stays 16 bytes)
 * @param zone the IPv6 zone, or empty
 */
public record IpAddr(byte[] bytes, String zone) {
    public IpAddr {
        if (bytes.length != 4 && bytes.length != 16) {
            throw new IllegalArgumentException("an IP address has 4 or 16 bytes, not " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /** The address in {@code s}; throws {@link IpSyntaxException} with Go's reason when it is not one. */
    public static IpAddr parse(String s) {
        for (int i = 0; i < s.length(); i++) {
            switch (s.charAt(i)) {
                case '.':
                    return new IpAddr(parseIpv4(s, s, 0, s.length()), "");
                case ':':
                    return parseIpv6(s);
                case '%':
                    throw new IpSyntaxException(s, "missing IPv6 address");
                default:
                    break;
            }
        }
        throw new IpSyntaxException(s, "unable to parse IP");
    }

    /** Null when {@code s} is an address, else why not (Go's wording). */
    public static String problem(String s) {
        try {
            parse(s);
            return null;
        } catch (IpSyntaxException e) {
            return e.reason();
        }
    }

    public static boolean isAddress(String s) {
        return problem(s) == null;
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    public boolean is4() {
        return bytes.length == 4;
    }

    public boolean is6() {
        return bytes.length == 16;
    }

    /** {@code ::ffff:a.b.c.d}: IPv6 by family (128 prefix bits), carrying an IPv4 address. */
    public boolean is4In6() {
        if (!is6()) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    }

    /**
     * Go's {@code netip.Addr.IsGlobalUnicast}: not unspecified, IPv4 broadcast, loopback,
     * multicast or link-local (an IPv4-mapped address judged as its IPv4 address). Private
     * ranges (10/8, fc00::/7 ...) count as global unicast, as in Go.
     */
    public boolean isGlobalUnicast() {
        byte[] b = is4In6() ? Arrays.copyOfRange(bytes, 12, 16) : bytes;
        int first = b[0] & 0xff;
        if (b.length == 4) {
            boolean unspecified = first == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0;
            boolean broadcast = (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff;
            boolean linkLocal = first == 169 && (b[1] & 0xff) == 254;
            return !unspecified && !broadcast && first != 127 && (first & 0xf0) != 224 && !linkLocal;
        }
        boolean zeroToLast = Arrays.equals(b, 0, 15, new byte[15], 0, 15);
        boolean unspecifiedOrLoopback = zeroToLast && (b[15] == 0 || b[15] == 1);
        boolean linkLocal = first == 0xfe && (b[1] & 0xc0) == 0x80;
        return !unspecifiedOrLoopback && first != 0xff && !linkLocal;
    }

    public boolean hasZone() {
        return !zone.isEmpty();
    }

    /** 32 or 128: the largest prefix length this address takes. */
    public int bitLen() {
        return bytes.length * 8;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpAddr other && Arrays.equals(bytes, other.bytes) && zone.equals(other.zone);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes) * 31 + zone.hashCode();
    }

    /** The address as Go's netip.Addr.String prints it (IPv6 per RFC 5952, an IPv4-mapped one as {@code ::ffff:a.b.c.d}). */
    public String text() {
        byte[] b = bytes;
        if (is4()) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        String zoneSuffix = hasZone() ? "%" + zone : "";
        if (is4In6()) {
            return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff)
                    + zoneSuffix;
        }
        int[] groups = new int[8];
        for (int i = 0; i < 8; i++) {
            groups[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        // the longest run of two or more zero groups (the first of equal runs) becomes "::"
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                out.append("::");
                i += bestLen - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(groups[i]));
        }
        return out + zoneSuffix;
    }

    @Override
    public String toString() {
        return "IpAddr[" + Arrays.toString(bytes) + (zone.isEmpty() ? "" : "%" + zone) + "]";
    }

    private static byte[] parseIpv4(String in, String s, int from, int to) {
        byte[] out = new byte[4];
        int field = 0;
        int value = 0;
        int digits = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                if (digits == 1 && value == 0) {
                    throw new IpSyntaxException(in, "IPv4 field has octet with leading zero");
                }
                value = value * 10 + (c - '0');
                digits++;
                if (value > 255) {
                    throw new IpSyntaxException(in, "IPv4 field has value >255");
                }
            } else if (c == '.') {
                if (digits == 0) {
                    throw new IpSyntaxException(in, "IPv4 field must have at least one digit");
                }
                if (field == 3) {
                    throw new IpSyntaxException(in, "IPv4 address too long");
                }
                out[field++] = (byte) value;
                value = 0;
                digits = 0;
            } else {
                throw new IpSyntaxException(in, "unexpected character " + quote(c));
            }
        }
        if (digits == 0) {
            throw new IpSyntaxException(in, "IPv4 field must have at least one digit");
        }
        if (field != 3) {
            throw new IpSyntaxException(in, "IPv4 address too short");
        }
        out[3] = (byte) value;
        return out;
    }

    private static IpAddr parseIpv6(String in) {
        String s = in;
        String zone = "";
        int pct = in.indexOf('%');
        if (pct >= 0) {
            s = in.substring(0, pct);
            zone = in.substring(pct + 1);
            if (zone.isEmpty()) {
                throw new IpSyntaxException(in, "zone must be a non-empty string");
            }
        }
        byte[] out = new byte[16];
        int ellipsis = -1; // byte index where "::" stands
        int i = 0;
        if (s.length() >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
            ellipsis = 0;
            i = 2;
            if (i == s.length()) {
                return new IpAddr(out, zone);
            }
        }
        int at = 0; // next byte of out to fill
        while (at < 16) {
            int start = i;
            int value = 0;
            while (i < s.length() && isAsciiHex(s.charAt(i))) {
                if (i - start == 4) {
                    throw new IpSyntaxException(in, "each colon-separated field must have at most 4 hex digits");
                }
                value = value * 16 + Character.digit(s.charAt(i), 16);
                i++;
            }
            if (i == start) {
                throw new IpSyntaxException(in, "each colon-separated field must have at least one digit");
            }
            if (i < s.length() && s.charAt(i) == '.') {
                if (ellipsis < 0 && at != 12) {
                    throw new IpSyntaxException(in, "embedded IPv4 address must replace the final 2 fields of the address");
                }
                if (at + 4 > 16) {
                    throw new IpSyntaxException(in, "too many hex fields to fit an embedded IPv4 at the end of the address");
                }
                byte[] v4 = parseIpv4(in, s, start, s.length());
                System.arraycopy(v4, 0, out, at, 4);
                at += 4;
                i = s.length();
                break;
            }
            out[at++] = (byte) (value >> 8);
            out[at++] = (byte) value;
            if (i == s.length()) {
                break;
            }
            if (s.charAt(i) != ':') {
                throw new IpSyntaxException(in, "unexpected character, want colon");
            }
            if (i + 1 == s.length()) {
                throw new IpSyntaxException(in, "colon must be followed by more characters");
            }
            i++;
            if (s.charAt(i) == ':') {
                if (ellipsis >= 0) {
                    throw new IpSyntaxException(in, "multiple :: in address");
                }
                ellipsis = at;
                i++;
                if (i == s.length()) {
                    break;
                }
            }
        }
        if (i != s.length()) {
            throw new IpSyntaxException(in, "trailing garbage after address");
        }
        if (at < 16) {
            if (ellipsis < 0) {
                throw new IpSyntaxException(in, "address string too short");
            }
            int tail = at - ellipsis;
            System.arraycopy(out, ellipsis, out, 16 - tail, tail);
            Arrays.fill(out, ellipsis, 16 - tail, (byte) 0);
        } else if (ellipsis >= 0) {
            throw new IpSyntaxException(in, "the :: must expand to at least one field of zeros");
        }
        return new IpAddr(out, zone);
    }

    private static boolean isAsciiHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static String quote(char c) {
        return "'" + c + "'";
    }
}
