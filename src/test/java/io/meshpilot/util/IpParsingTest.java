package io.meshpilot.util;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link IpAddr} and {@link IpPrefix} against the cases Go's src/net/netip/netip_test.go
 * (TestParseAddr, TestParsePrefix) and the netip.ParsePrefix source document: what Go accepts
 * is accepted here, what Go refuses is refused, with its reason.
 */
class IpParsingTest {

    // TestParseAddr's valid inputs, with the family and zone Go reports for them
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "0.0.0.0|32|false|",
            "192.168.140.255|32|false|",
            "::|128|false|",
            "::1|128|false|",
            "fd7a:115c:a1e0:ab12:4843:cd96:626b:430b|128|false|",
            "fd7a:115c::626b:430b|128|false|",
            "fd7a:115c:a1e0:ab12:4843:cd96::|128|false|",
            "FD7A:115C:A1E0:AB12:4843:CD96:626B:430B|128|false|",
            "1:2:3:4:5:6:7:8|128|false|",
            "::ffff:c000:0280|128|true|",
            "::ffff:192.168.140.255|128|true|",
            "::ffff:192.168.140.255%eth1|128|true|eth1",
            "fe80::1cc0:3e8c:119f:c2e1%ens18|128|false|ens18",
            "fd7a:115c:a1e0:ab12:4843:cd96:192.168.140.255|128|false|",
            "::192.168.140.255|128|false|",
            "0:0:0:0:0:ffff:1.2.3.4|128|true|"})
    void acceptsWhatGoAccepts(String text, int bitLen, boolean is4In6, String zone) {
        IpAddr a = IpAddr.parse(text);
        assertEquals(bitLen, a.bitLen(), text);
        assertEquals(is4In6, a.is4In6(), text);
        assertEquals(zone == null ? "" : zone, a.zone(), text);
        assertNull(IpAddr.problem(text));
    }

    @Test
    void readsTheBytes() {
        assertArrayEquals(new byte[] {(byte) 192, (byte) 168, (byte) 140, (byte) 255},
                IpAddr.parse("192.168.140.255").bytes());
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        mapped[12] = 1;
        mapped[13] = 2;
        mapped[14] = 3;
        mapped[15] = 4;
        assertArrayEquals(mapped, IpAddr.parse("::ffff:1.2.3.4").bytes());
        byte[] ends = new byte[16];
        ends[0] = (byte) 0xfd;
        ends[1] = 0x7a;
        ends[15] = 1;
        assertArrayEquals(ends, IpAddr.parse("fd7a::1").bytes());
        assertEquals(IpAddr.parse("::ffff:c000:0280"), IpAddr.parse("::ffff:192.0.2.128"));
    }

    // TestParseAddr's invalid inputs; each names the rule it breaks
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "''|unable to parse IP",
            "bad|unable to parse IP",
            "%eth0|missing IPv6 address",
            "1.2.3|IPv4 address too short",
            "1.2.3.4.5|IPv4 address too long",
            "010.0.0.0|leading zero",
            "0300.0250.0214.0377|leading zero",
            "0xc0.0xa8.0x8c.0xff|unexpected character",
            "192.168.300.1|>255",
            "192.168.1..1|at least one digit",
            "192.168.1.1.|IPv4 address too long",
            "192.168.1.|at least one digit",
            "1.2.3.4%eth0|unexpected character",
            "1.2.3.4:80|unexpected character",
            "' 1.2.3.4'|unexpected character",
            "'1.2.3.4 '|unexpected character",
            "fe80::1%|zone must be a non-empty string",
            "fe80::1::1|multiple ::",
            "fe80:|colon must be followed",
            "fe80::1:|colon must be followed",
            ":1|at least one digit",
            "12345::|at most 4 hex digits",
            "1:2:3:4:5:6:7:8:9|trailing garbage",
            "1:2:3:4:5:6:7|too short",
            "1:2:3:4:5:6:7::8|at least one field",
            "ffff::0x1|want colon",
            "::ffff:192.168.140.bad|unexpected character",
            "::ffff:192.168.140.08|leading zero",
            "1:2:3:4:1.2.3.4|final 2 fields",
            "1:2:3:4:5:6:7:1.2.3.4|final 2 fields",
            "[::1]|at least one digit"})
    void refusesWhatGoRefuses(String text, String reason) {
        IpSyntaxException e = assertThrows(IpSyntaxException.class, () -> IpAddr.parse(text), text);
        assertTrue(e.reason().contains(reason), text + ": " + e.reason());
        assertFalse(IpAddr.isAddress(text));
    }

    // TestParsePrefix's valid inputs: host bits may be set; IPv4-mapped addresses take 0..128
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "192.168.0.0/24|24|32",
            "192.168.0.0/0|0|32",
            "192.168.0.0/32|32|32",
            "192.168.0.1/16|16|32",
            "10.0.0.0/8|8|32",
            "2001::/32|32|128",
            "2001:db8::/128|128|128",
            "::/0|0|128",
            "::ffff:192.0.2.128/120|120|128",
            "::ffff:c000:0280/96|96|128",
            "1.2.3.4/32|32|32"})
    void acceptsPrefixes(String text, int bits, int bitLen) {
        IpPrefix p = IpPrefix.parse(text);
        assertEquals(bits, p.bits(), text);
        assertEquals(bitLen, p.addr().bitLen(), text);
        assertNull(IpPrefix.problem(text));
    }

    // TestParsePrefix's invalid inputs and the leading-sign/zero rule in ParsePrefix's source
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "192.168.0.0|no '/'",
            "010.0.0.0/8|leading zero",
            "10.0.0.0/+8|bad bits after slash",
            "10.0.0.0/-8|bad bits after slash",
            "10.0.0.0/08|bad bits after slash",
            "10.0.0.0/00|bad bits after slash",
            "1.1.1.0/-1|bad bits after slash",
            "1.1.1.0/+|bad bits after slash",
            "1.1.1.0/|bad bits after slash",
            "1.1.1.0/a|bad bits after slash",
            "1.1.1.0/ 8|bad bits after slash",
            "1.1.1.0/33|prefix length out of range",
            "1.1.1.0/4294967304|prefix length out of range",
            "2001::/129|prefix length out of range",
            "::ffff:1.2.3.4/129|prefix length out of range",
            "2001::/+32|bad bits after slash",
            "2001::/032|bad bits after slash",
            "fe80::1%eth0/64|zones cannot be present",
            "2001:db8::%a/32|zones cannot be present",
            "1.2.3.4/24/8|ParseAddr",
            "/24|ParseAddr",
            "1.2.3.256/24|>255"})
    void refusesBadPrefixes(String text, String reason) {
        IpSyntaxException e = assertThrows(IpSyntaxException.class, () -> IpPrefix.parse(text), text);
        assertTrue(e.reason().contains(reason), text + ": " + e.reason());
        assertNotNull(IpPrefix.problem(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.1", "10.0.0.0/8", "2001:db8::/32", "fe80::1%eth0"})
    void addressOrPrefixTakesEither(String text) {
        assertNull(IpPrefix.addressOrPrefixProblem(text));
    }

    @Test
    void aZoneIsVisibleForCallersThatMirrorNetParseIp() {
        assertTrue(IpAddr.parse("fe80::1%eth0").hasZone());
        assertFalse(IpAddr.parse("fe80::1").hasZone());
    }

    /** Go's netip.Addr.IsGlobalUnicast, case by case (istiod's GlobalUnicastIP picks the pod IP with it). */
    @Test
    void globalUnicastAsGo() {
        for (String yes : List.of("10.0.0.7", "8.8.8.8", "192.168.1.1", "2001:db8::1", "fd00::1", "::ffff:10.0.0.7")) {
            assertTrue(IpAddr.parse(yes).isGlobalUnicast(), yes);
        }
        for (String no : List.of("0.0.0.0", "255.255.255.255", "127.0.0.1", "169.254.1.1", "224.0.0.1",
                "::", "::1", "fe80::1", "ff02::1", "::ffff:127.0.0.1")) {
            assertFalse(IpAddr.parse(no).isGlobalUnicast(), no);
        }
    }
}
