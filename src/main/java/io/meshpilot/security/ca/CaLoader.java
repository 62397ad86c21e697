package io.meshpilot.security.ca;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads a plugged-in CA from {@code ROOT_CA_DIR}, in either of istiod's layouts:
 * <ul>
 *   <li>istiod's {@code cacerts} Secret: {@code ca-cert.pem} (signing certificate),
 *       {@code ca-key.pem}, {@code cert-chain.pem} (signing certificate up to the root),
 *       {@code root-cert.pem} (one or more roots);</li>
 *   <li>a {@code kubernetes.io/tls} Secret: {@code tls.crt}, {@code tls.key}, {@code ca.crt};
 *       chosen when {@code tls.crt} exists, as istiod does. Extra certificates after the first
 *       in {@code tls.crt}, and {@code ca.crt}, form the chain.</li>
 * </ul>
 * Deviation: istiod requires cert-chain.pem; here it may be absent when the signing
 * certificate is issued directly by a root in root-cert.pem.
 */
public final class CaLoader {
    public static final String CA_CERT = "ca-cert.pem";
    public static final String CA_KEY = "ca-key.pem";
    public static final String CERT_CHAIN = "cert-chain.pem";
    public static final String ROOT_CERT = "root-cert.pem";
    public static final String TLS_CERT = "tls.crt";
    public static final String TLS_KEY = "tls.key";
    public static final String TLS_CA = "ca.crt";

    private CaLoader() {
    }

    /**
     * True when {@code dir} holds a signing certificate or key of either layout. A root-cert.pem
     * alone does not count: istiod reads it as extra roots for a self-signed CA. A partial set
     * counts, so that {@link #loadPluggedIn} names the missing file instead of a silent fallback
     * to a self-signed root.
     */
    public static boolean hasPluggedIn(Path dir) {
        return Files.exists(dir.resolve(CA_KEY)) || Files.exists(dir.resolve(CA_CERT))
                || Files.exists(dir.resolve(TLS_CERT)) || Files.exists(dir.resolve(TLS_KEY));
    }

    public static CaMaterial loadPluggedIn(Path dir) {
        return loadPluggedIn(dir, Clock.systemUTC());
    }

    /** Reads and verifies the plugged-in CA; any problem is a {@link CaLoadException} naming the file. */
    public static CaMaterial loadPluggedIn(Path dir, Clock clock) {
        boolean tls = Files.exists(dir.resolve(TLS_CERT));
        Path certFile = dir.resolve(tls ? TLS_CERT : CA_CERT);
        Path keyFile = dir.resolve(tls ? TLS_KEY : CA_KEY);
        Path rootFile = dir.resolve(tls ? TLS_CA : ROOT_CERT);
        Path chainFile = tls ? rootFile : dir.resolve(CERT_CHAIN);

        List<X509Certificate> certs = Pem.readCertificates(certFile);
        X509Certificate signing = certs.getFirst();
        PrivateKey key = Pem.readPrivateKey(keyFile);
        List<X509Certificate> roots = Pem.readCertificates(rootFile);
        List<X509Certificate> pool = new ArrayList<>(certs.subList(1, certs.size()));
        if (!tls && Files.exists(chainFile)) {
            pool.addAll(Pem.readCertificates(chainFile));
        } else if (tls) {
            pool.addAll(roots);
        }
        Path chainLabel = tls || !Files.exists(chainFile) ? certFile : chainFile;

        ChainVerifier.checkSigningPair(signing, certFile, key, keyFile);
        List<X509Certificate> path = ChainVerifier.verifiedPath(signing, certFile, pool, chainLabel, roots, rootFile,
                clock.instant());
        return new CaMaterial(signing, key, path.subList(1, path.size()), roots,
                new CaMaterial.Origin(CaMaterial.Kind.PLUGGED_IN, dir));
    }
}
