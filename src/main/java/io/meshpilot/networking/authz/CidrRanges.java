package io.meshpilot.networking.authz;

import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.CidrRange;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpPrefix;
import io.meshpilot.util.IpSyntaxException;

/**
 * istiod's AddrStrToCidrRange: an address ({@code 10.1.2.3}: a /32 or /128) or a prefix
 * ({@code 10.1.0.0/16}, host bits kept) read with Go's netip rules, written back as Go prints
 * the address (dotted IPv4, RFC 5952 IPv6, {@code ::ffff:a.b.c.d} for IPv4-mapped).
 */
final class CidrRanges {
    private CidrRanges() {
    }

    /** The range of {@code value}; throws {@link UnsupportedValue} naming the value when it is neither. */
    static CidrRange of(String value) throws UnsupportedValue {
        if (value.isEmpty()) {
            throw new UnsupportedValue("empty address");
        }
        try {
            IpPrefix p = IpPrefix.parseAddressOrPrefix(value);
            return CidrRange.newBuilder().setAddressPrefix(format(p.addr())).setPrefixLen(UInt32Value.of(p.bits()))
                    .build();
        } catch (IpSyntaxException e) {
            throw new UnsupportedValue("invalid IP address or CIDR " + value + ": " + e.getMessage());
        }
    }

    /** Go's netip.Addr.String. */
    static String format(IpAddr addr) {
        byte[] b = addr.bytes();
        if (addr.is4()) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        String zone = addr.hasZone() ? "%" + addr.zone() : "";
        if (addr.is4In6()) {
            return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff)
                    + zone;
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
        return out + zone;
    }
}
