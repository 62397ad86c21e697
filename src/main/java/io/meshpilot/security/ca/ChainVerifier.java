package io.meshpilot.security.ca;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks istiod's KeyCertBundle and plugged-in CA options make before a key and
 * certificate may sign, each failure naming the file it is about: the key matches the
 * certificate, the certificate is a CA, it chains through the given intermediates to a
 * self-signed root from the root file, and nothing on that path is outside its validity.
 */
final class ChainVerifier {
    /** Longer chains than this are a configuration mistake (or a loop), not a real PKI. */
    static final int MAX_DEPTH = 8;

    private ChainVerifier() {
    }

    /** The key signs for the certificate, and both are usable as a CA. */
    static void checkSigningPair(X509Certificate cert, Path certFile, PrivateKey key, Path keyFile) {
        String keyProblem = KeyPolicy.caKeyProblem(cert.getPublicKey());
        if (keyProblem != null) {
            throw new CaLoadException(certFile, keyProblem);
        }
        if (!KeyPolicy.keyMatches(key, cert.getPublicKey())) {
            throw new CaLoadException(keyFile, "private key does not match the certificate in " + certFile.getFileName());
        }
        if (cert.getBasicConstraints() < 0) {
            throw new CaLoadException(certFile, "certificate " + subject(cert)
                    + " is not a CA (basicConstraints CA:TRUE missing)");
        }
        boolean[] usage = cert.getKeyUsage();
        if (usage != null && (usage.length < 6 || !usage[5])) {
            throw new CaLoadException(certFile, "certificate " + subject(cert) + " may not sign certificates (keyUsage lacks keyCertSign)");
        }
    }

    /**
     * The path from {@code signing} up to a root in {@code roots}, signing certificate first,
     * root last. {@code pool} holds candidate intermediates in any order; {@code chainFile} is
     * the file they came from (the signing certificate's own file when there is no chain file).
     */
    static List<X509Certificate> verifiedPath(X509Certificate signing, Path signingFile,
                                              List<X509Certificate> pool, Path chainFile,
                                              List<X509Certificate> roots, Path rootFile, Instant now) {
        List<X509Certificate> path = new ArrayList<>();
        path.add(signing);
        X509Certificate current = signing;
        while (!roots.contains(current)) {
            if (path.size() > MAX_DEPTH) {
                throw new CaLoadException(chainFile, "chain is longer than " + MAX_DEPTH + " certificates");
            }
            X509Certificate issuer = findIssuer(current, roots);
            if (issuer == null) {
                issuer = findIssuer(current, pool.stream().filter(c -> !path.contains(c)).toList());
            }
            if (issuer == null) {
                if (selfSigned(current)) {
                    throw new CaLoadException(current == signing ? signingFile : chainFile, "self-signed certificate "
                            + subject(current) + " is not in " + rootFile.getFileName());
                }
                String hint = !chainFile.equals(signingFile) ? ""
                        : signingFile.endsWith(CaLoader.TLS_CERT) ? "; put the intermediates after it in " + CaLoader.TLS_CERT
                        : "; put the intermediates in " + CaLoader.CERT_CHAIN;
                throw new CaLoadException(chainFile, "does not chain to " + rootFile.getFileName()
                        + " (no certificate for issuer " + current.getIssuerX500Principal() + ")" + hint);
            }
            if (!roots.contains(issuer) && issuer.getBasicConstraints() < 0) {
                throw new CaLoadException(chainFile, "certificate " + subject(issuer) + " is not a CA");
            }
            path.add(issuer);
            current = issuer;
        }
        if (!selfSigned(current)) {
            throw new CaLoadException(rootFile, "root " + subject(current) + " is not self-signed");
        }
        for (X509Certificate c : path) {
            Path at = c == signing ? signingFile : c == current ? rootFile : chainFile;
            checkValidity(c, at, now);
        }
        return List.copyOf(path);
    }

    static void checkValidity(X509Certificate cert, Path file, Instant now) {
        if (now.isAfter(cert.getNotAfter().toInstant())) {
            throw new CaLoadException(file, "certificate " + subject(cert) + " expired at " + cert.getNotAfter().toInstant());
        }
        if (now.isBefore(cert.getNotBefore().toInstant())) {
            throw new CaLoadException(file, "certificate " + subject(cert) + " is not valid before "
                    + cert.getNotBefore().toInstant());
        }
    }

    static boolean selfSigned(X509Certificate cert) {
        return cert.getSubjectX500Principal().equals(cert.getIssuerX500Principal()) && signedBy(cert, cert.getPublicKey());
    }

    private static X509Certificate findIssuer(X509Certificate cert, List<X509Certificate> candidates) {
        for (X509Certificate c : candidates) {
            if (c.getSubjectX500Principal().equals(cert.getIssuerX500Principal()) && signedBy(cert, c.getPublicKey())) {
                return c;
            }
        }
        return null;
    }

    private static boolean signedBy(X509Certificate cert, PublicKey key) {
        try {
            cert.verify(key);
            return true;
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }

    private static String subject(X509Certificate cert) {
        String s = cert.getSubjectX500Principal().getName();
        return s.isEmpty() ? "(empty subject)" : "\"" + s + "\"";
    }
}
