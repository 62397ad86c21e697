package io.meshpilot.security.ca;

import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the CA signs with: a verified key and certificate, the certificates above it, and the
 * roots workloads should trust. Immutable; rotation makes a new one.
 *
 * @param signingCertificate the CA certificate leaves are issued under (the root when self-signed)
 * @param signingKey         its private key
 * @param chain              certificates above the signing certificate, root last; empty when
 *                           the signing certificate is the root
 * @param roots              the trust bundle: the root {@code chain} ends at, plus any other
 *                           roots (extra roots in root-cert.pem, the previous root after rotation)
 * @param origin             where it came from
 */
public record CaMaterial(X509Certificate signingCertificate, PrivateKey signingKey, List<X509Certificate> chain,
                         List<X509Certificate> roots, Origin origin) {

    /** How the material was obtained. */
    public enum Kind {
        PLUGGED_IN("plugged-in"),
        SELF_SIGNED("self-signed");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** Kind and directory, printed as e.g. {@code plugged-in ./etc/cacerts}. */
    public record Origin(Kind kind, Path dir) {
        public Origin {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(dir, "dir");
        }

        @Override
        public String toString() {
            return kind.label() + " " + dir;
        }
    }

    public CaMaterial {
        Objects.requireNonNull(signingCertificate, "signingCertificate");
        Objects.requireNonNull(signingKey, "signingKey");
        Objects.requireNonNull(origin, "origin");
        chain = List.copyOf(chain);
        roots = List.copyOf(roots);
        if (roots.isEmpty()) {
            throw new IllegalArgumentException("CA material needs at least one root");
        }
    }

    /** Signing certificate, intermediates, root: what follows a leaf in its chain, without duplicates. */
    public List<X509Certificate> chainAboveLeaf() {
        List<X509Certificate> out = new ArrayList<>(chain.size() + 1);
        out.add(signingCertificate);
        for (X509Certificate c : chain) {
            if (!out.contains(c)) {
                out.add(c);
            }
        }
        return List.copyOf(out);
    }

    /** The root the signing certificate chains to. */
    public X509Certificate root() {
        return chain.isEmpty() ? signingCertificate : chain.getLast();
    }

    /** All roots as one PEM string: the trust bundle istiod sends as the last cert_chain element. */
    public String rootCertsPem() {
        return Pem.certificates(roots);
    }

    /** Never prints the key. */
    @Override
    public String toString() {
        return "CaMaterial[" + origin + ", signing=" + signingCertificate.getSubjectX500Principal()
                + ", notAfter=" + signingCertificate.getNotAfter().toInstant() + ", chain=" + chain.size()
                + ", roots=" + roots.size() + "]";
    }
}
