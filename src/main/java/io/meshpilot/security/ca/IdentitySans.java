package io.meshpilot.security.ca;

import io.meshpilot.security.ca.CsrRejectedException.Reason;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.ASN1String;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.util.IPAddress;

/**
 * Identities as SAN entries, encoded the way istiod's BuildSubjectAltNameExtension does:
 * {@code spiffe://...} as a URI, an IP literal as an IP address, anything else as a DNS name.
 */
final class IdentitySans {
    static final String SPIFFE_PREFIX = "spiffe://";
    /** Far beyond any real identity; stops a runaway value from becoming a certificate. */
    static final int MAX_LENGTH = 2048;

    private IdentitySans() {
    }

    /** The caller's identities as SANs, duplicates dropped, order kept. */
    static GeneralName[] of(List<String> identities) throws CsrRejectedException {
        if (identities == null || identities.isEmpty()) {
            throw new CsrRejectedException(Reason.NO_IDENTITY, "the caller has no identity to certify");
        }
        Set<String> unique = new LinkedHashSet<>();
        for (String id : identities) {
            String problem = problem(id);
            if (problem != null) {
                throw new CsrRejectedException(Reason.INVALID_IDENTITY, "identity " + quote(id) + " " + problem);
            }
            unique.add(id);
        }
        return unique.stream().map(IdentitySans::name).toArray(GeneralName[]::new);
    }

    static String problem(String id) {
        if (id == null || id.isEmpty()) {
            return "is empty";
        }
        if (id.length() > MAX_LENGTH) {
            return "is longer than " + MAX_LENGTH + " characters";
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return "has a character a SAN cannot hold (spaces, control or non-ASCII)";
            }
        }
        return null;
    }

    static GeneralName name(String id) {
        if (id.startsWith(SPIFFE_PREFIX)) {
            return new GeneralName(GeneralName.uniformResourceIdentifier, id);
        }
        if (IPAddress.isValid(id)) {
            return new GeneralName(GeneralName.iPAddress, id);
        }
        return new GeneralName(GeneralName.dNSName, id);
    }

    static String describe(GeneralName[] names) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < names.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(describe(names[i]));
        }
        return sb.append(']').toString();
    }

    static String describe(GeneralName name) {
        String type = switch (name.getTagNo()) {
            case GeneralName.otherName -> "otherName";
            case GeneralName.rfc822Name -> "email";
            case GeneralName.dNSName -> "DNS";
            case GeneralName.directoryName -> "dirName";
            case GeneralName.uniformResourceIdentifier -> "URI";
            case GeneralName.iPAddress -> "IP";
            case GeneralName.registeredID -> "RID";
            default -> "tag" + name.getTagNo();
        };
        String value;
        if (name.getName() instanceof ASN1String s) {
            value = s.getString();
        } else if (name.getTagNo() == GeneralName.iPAddress && name.getName() instanceof ASN1OctetString octets) {
            value = ip(octets.getOctets());
        } else {
            value = String.valueOf(name.getName());
        }
        return type + ":" + quote(value);
    }

    private static String ip(byte[] addr) {
        try {
            return InetAddress.getByAddress(addr).getHostAddress(); // no lookup: built from bytes
        } catch (UnknownHostException e) {
            return "(" + addr.length + "-byte address)";
        }
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        String shown = s.length() > 200 ? s.substring(0, 200) + "..." : s;
        StringBuilder sb = new StringBuilder("\"");
        shown.codePoints().forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f) {
                sb.append(String.format("\\x%02x", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        return sb.append('"').toString();
    }
}
