package io.meshpilot.security.ca;

import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A signed certificate with what it chains to.
 *
 * @param certChain    one PEM certificate per element: the new leaf first, then the signing
 *                     certificate and intermediates, the root it chains to last
 * @param rootCertsPem every root of the trust bundle, concatenated
 * @param serialNumber the leaf's serial
 * @param notBefore    the leaf's notBefore (backdated by the clock-skew allowance)
 * @param notAfter     the leaf's notAfter
 */
public record IssuedChain(List<String> certChain, String rootCertsPem, BigInteger serialNumber,
                          Instant notBefore, Instant notAfter) {

    public IssuedChain {
        certChain = List.copyOf(certChain);
        if (certChain.size() < 2) {
            throw new IllegalArgumentException("a chain has at least the leaf and its root");
        }
    }

    public String leafPem() {
        return certChain.getFirst();
    }

    /**
     * The cert_chain istiod's CreateCertificate answers with: the leaf and intermediates one
     * per element, then all roots together as the last element (so that a client taking the
     * last element as its trust bundle gets every root, e.g. old and new after a rotation).
     */
    public List<String> istioResponseChain() {
        List<String> out = new ArrayList<>(certChain.subList(0, certChain.size() - 1));
        out.add(rootCertsPem);
        return List.copyOf(out);
    }

    /** The leaf parsed, for callers that want its fields (logging, tests). */
    public X509Certificate leafCertificate() {
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(leafPem().getBytes(StandardCharsets.US_ASCII)));
        } catch (CertificateException e) {
            throw new IllegalStateException("issued certificate does not parse: " + e.getMessage(), e);
        }
    }
}
