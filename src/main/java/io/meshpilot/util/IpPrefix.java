package io.meshpilot.util;

/**
 * A CIDR prefix read the way istiod reads one from config: Go's {@code netip.ParsePrefix}. The
 * address is an {@link IpAddr} without a zone; the length after the last "/" is plain decimal
 * with no sign and no leading zero ({@code 10.0.0.0/+8} and {@code 10.0.0.0/08} are refused),
 * 0-32 for IPv4 and 0-128 for IPv6, IPv4-mapped IPv6 included. Host bits may be set, as in Go.
 */
public record IpPrefix(IpAddr addr, int bits) {
    public IpPrefix {
        if (bits < 0 || bits > addr.bitLen()) {
            throw new IllegalArgumentException("prefix length " + bits + " is not in 0.." + addr.bitLen());
        }
    }

    /** The prefix in {@code s}; throws {@link IpSyntaxException} with Go's reason when it is not one. */
    public static IpPrefix parse(String s) {
        int slash = s.lastIndexOf('/');
        if (slash < 0) {
            throw new IpSyntaxException(s, "no '/'");
        }
        IpAddr addr;
        try {
            addr = IpAddr.parse(s.substring(0, slash));
        } catch (IpSyntaxException e) {
            throw new IpSyntaxException(s, "ParseAddr(\"" + e.input() + "\"): " + e.reason());
        }
        if (addr.hasZone()) {
            throw new IpSyntaxException(s, "IPv6 zones cannot be present in a prefix");
        }
        String bits = s.substring(slash + 1);
        // Go's ParsePrefix refuses what strconv.Atoi would take: a sign, a leading zero
        if (bits.isEmpty() || !bits.chars().allMatch(c -> c >= '0' && c <= '9')
                || (bits.length() > 1 && bits.charAt(0) == '0')) {
            throw new IpSyntaxException(s, "bad bits after slash: \"" + bits + "\"");
        }
        int n = bits.length() > 3 ? Integer.MAX_VALUE : Integer.parseInt(bits);
        if (n > addr.bitLen()) {
            throw new IpSyntaxException(s, "prefix length out of range");
        }
        return new IpPrefix(addr, n);
    }

    /**
     * {@code s} as a prefix when it has a "/", else as a single address (its full length), as
     * istiod reads the IP values of policies; throws {@link IpSyntaxException} when it is neither.
     */
    public static IpPrefix parseAddressOrPrefix(String s) {
        if (s.contains("/")) {
            return parse(s);
        }
        IpAddr addr = IpAddr.parse(s);
        return new IpPrefix(addr, addr.bitLen());
    }

    /** The address with its host bits cleared (Go's {@code Prefix.Masked().Addr()}). */
    public byte[] maskedBytes() {
        byte[] out = addr.bytes().clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.clamp(bits - i * 8L, 0, 8);
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    /** Whether the prefix covers one address only (Go's {@code IsSingleIP}). */
    public boolean singleIp() {
        return bits == addr.bitLen();
    }

    /** Null when {@code s} is a prefix, else why not. */
    public static String problem(String s) {
        try {
            parse(s);
            return null;
        } catch (IpSyntaxException e) {
            return e.reason();
        }
    }

    /** Whether istiod's ValidateIPSubnet reads {@code s} as a prefix: it has exactly one "/". */
    public static boolean looksLikePrefix(String s) {
        int slash = s.indexOf('/');
        return slash >= 0 && slash == s.lastIndexOf('/');
    }

    /**
     * istiod's ValidateIPSubnet: a prefix when {@code s} has exactly one "/", else a single
     * address. Null when valid, else why not.
     */
    public static String addressOrPrefixProblem(String s) {
        return looksLikePrefix(s) ? problem(s) : IpAddr.problem(s);
    }
}
