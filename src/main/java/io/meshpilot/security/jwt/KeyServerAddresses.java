package io.meshpilot.security.jwt;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;

/**
 * Which hosts MeshPilot fetches RequestAuthentication key sets from, as istiod's
 * jwksBlockedIP: never a link-local address (cloud instance metadata lives at 169.254.169.254)
 * nor another well-known cloud metadata address (Alibaba's 100.100.100.200, AWS's IPv6
 * fd00:ec2::/32), so that whoever may write a RequestAuthentication cannot make the control
 * plane read those services. Private and loopback addresses stay allowed (in-cluster OIDC
 * providers live there). istiod checks at dial time; here every address the host resolves to is
 * checked before the fetch.
 */
final class KeyServerAddresses {
    private KeyServerAddresses() {
    }

    /** Throws naming the address when {@code uri}'s host resolves to a blocked one. */
    static void check(URI uri) throws IOException {
        String host = uri.getHost();
        if (host == null) {
            return; // file: URIs and the like: DocumentFetcher decides
        }
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new IOException("unknown host " + host);
        }
        for (InetAddress a : addresses) {
            String why = blocked(a);
            if (why != null) {
                throw new IOException("connection blocked: " + host + " resolves to " + a.getHostAddress() + ", " + why);
            }
        }
    }

    /** Why {@code a} is blocked, or null. */
    static String blocked(InetAddress a) {
        if (a.isLinkLocalAddress() || a.isMCLinkLocal()) {
            return "a link-local address";
        }
        byte[] b = a.getAddress();
        boolean alibaba = b.length == 4 && (b[0] & 0xff) == 100 && (b[1] & 0xff) == 100 && (b[2] & 0xff) == 100
                && (b[3] & 0xff) == 200;
        boolean awsIpv6 = a instanceof Inet6Address && (b[0] & 0xff) == 0xfd && b[1] == 0 && (b[2] & 0xff) == 0x0e
                && (b[3] & 0xff) == 0xc2;
        return alibaba || awsIpv6 ? "a cloud metadata address" : null;
    }
}
