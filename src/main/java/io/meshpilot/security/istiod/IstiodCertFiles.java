package io.meshpilot.security.istiod;

import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ca.CaLoadException;
import io.meshpilot.security.ca.Pem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * istiod's serving certificate kept in files by someone else (cert-manager, istio-csr): the
 * chain, its key, and the roots client certificates are verified against.
 *
 * @param certFile   the chain, leaf first
 * @param keyFile    the leaf's private key
 * @param caCertFile the roots callers' client certificates must chain to (istiod's createPeerCertVerifier)
 */
public record IstiodCertFiles(Path certFile, Path keyFile, Path caCertFile) {
    /** istiod's well-known locations (pkg/config/constants DefaultPilotTLSCert ...), relative to the working directory. */
    static final Path WELL_KNOWN_CERT = Path.of("var/run/secrets/istiod/tls/tls.crt");
    static final Path WELL_KNOWN_KEY = Path.of("var/run/secrets/istiod/tls/tls.key");
    static final Path WELL_KNOWN_CA = Path.of("var/run/secrets/istiod/ca/root-cert.pem");
    static final Path WELL_KNOWN_CA_ALTERNATE = Path.of("var/run/secrets/istiod/tls/ca.crt");
    private static final int SAN_DNS = 2;

    /**
     * istiod's hasCustomTLSCerts: the three flags when all are set; else the well-known files
     * under {@code workingDir} when the certificate, key and a CA file (ca/root-cert.pem, else
     * tls/ca.crt) all exist; else none, and the CA issues istiod's certificate.
     */
    public static Optional<IstiodCertFiles> find(ServerTlsOptions flags, Path workingDir) {
        if (flags.certFilesGiven()) {
            return Optional.of(new IstiodCertFiles(Path.of(flags.certFile()), Path.of(flags.keyFile()),
                    Path.of(flags.caCertFile())));
        }
        Path cert = workingDir.resolve(WELL_KNOWN_CERT);
        Path key = workingDir.resolve(WELL_KNOWN_KEY);
        for (Path ca : List.of(workingDir.resolve(WELL_KNOWN_CA), workingDir.resolve(WELL_KNOWN_CA_ALTERNATE))) {
            if (Files.isRegularFile(cert) && Files.isRegularFile(key) && Files.isRegularFile(ca)) {
                return Optional.of(new IstiodCertFiles(cert, key, ca));
            }
        }
        return Optional.empty();
    }

    /** The three files, for the watch. */
    public List<Path> files() {
        return List.of(certFile, keyFile, caCertFile);
    }

    /**
     * Reads the files as they are now.
     *
     * @throws CaLoadException naming the file and why, when one is missing, not PEM, or the key
     *                         is not the certificate's
     */
    public ServingCertificate load() {
        List<X509Certificate> chain = Pem.readCertificates(certFile);
        PrivateKey key = Pem.readPrivateKey(keyFile);
        List<X509Certificate> roots = Pem.readCertificates(caCertFile);
        X509Certificate leaf = chain.getFirst();
        if (!Pem.keyMatches(key, leaf)) {
            throw new CaLoadException(keyFile, "is not the private key of the certificate in " + certFile);
        }
        return new ServingCertificate(leaf, key, chain, dnsNames(leaf), Instant.now(), roots);
    }

    private static List<String> dnsNames(X509Certificate leaf) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> sans = leaf.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (san.size() == 2 && Integer.valueOf(SAN_DNS).equals(san.get(0))) {
                        names.add(String.valueOf(san.get(1)));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // names are shown by the start-up line only; the certificate itself was parsed
        }
        return names;
    }
}
