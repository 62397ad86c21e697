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
        return addr.text();
    }
}
