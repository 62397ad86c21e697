package io.meshpilot.security.ca;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
        return load(new Source() {
            @Override
            public boolean has(String name) {
                return Files.exists(dir.resolve(name));
            }

            @Override
            public List<X509Certificate> certificates(String name) {
                return Pem.readCertificates(dir.resolve(name));
            }

            @Override
            public PrivateKey key(String name) {
                return Pem.readPrivateKey(dir.resolve(name));
            }
        }, dir, clock);
    }

    /**
     * The same from the data of istiod's {@code cacerts} Secret (same keys, same layouts).
     * Errors name the key under {@code where}, e.g. {@code Secret istio-system/cacerts/ca-key.pem}.
     */
    public static CaMaterial loadPluggedIn(Map<String, String> data, Path where, Clock clock) {
        return load(new Source() {
            @Override
            public boolean has(String name) {
                return data.containsKey(name);
            }

            @Override
            public List<X509Certificate> certificates(String name) {
                return Pem.parseCertificates(text(name), where.resolve(name));
            }

            @Override
            public PrivateKey key(String name) {
                return Pem.parsePrivateKey(text(name), where.resolve(name));
            }

            private String text(String name) {
                String text = data.get(name);
                if (text == null) {
                    throw new CaLoadException(where.resolve(name), "missing");
                }
                return text;
            }
        }, where, clock);
    }

    /** True when {@code data} holds a signing certificate or key of either layout (see {@link #hasPluggedIn(Path)}). */
    public static boolean hasPluggedIn(Map<String, String> data) {
        return data.containsKey(CA_KEY) || data.containsKey(CA_CERT) || data.containsKey(TLS_CERT)
                || data.containsKey(TLS_KEY);
    }

    /** Named PEM contents: files in a directory or keys of a Secret. */
    private interface Source {
        boolean has(String name);

        List<X509Certificate> certificates(String name);

        PrivateKey key(String name);
    }

    private static CaMaterial load(Source source, Path dir, Clock clock) {
        boolean tls = source.has(TLS_CERT);
        Path certFile = dir.resolve(tls ? TLS_CERT : CA_CERT);
        Path keyFile = dir.resolve(tls ? TLS_KEY : CA_KEY);
        Path rootFile = dir.resolve(tls ? TLS_CA : ROOT_CERT);
        boolean chainPresent = !tls && source.has(CERT_CHAIN);
        Path chainFile = tls ? rootFile : dir.resolve(CERT_CHAIN);

        List<X509Certificate> certs = source.certificates(certFile.getFileName().toString());
        X509Certificate signing = certs.getFirst();
        PrivateKey key = source.key(keyFile.getFileName().toString());
        List<X509Certificate> roots = source.certificates(rootFile.getFileName().toString());
        List<X509Certificate> pool = new ArrayList<>(certs.subList(1, certs.size()));
        if (chainPresent) {
            pool.addAll(source.certificates(CERT_CHAIN));
        } else if (tls) {
            pool.addAll(roots);
        }
        Path chainLabel = tls || !chainPresent ? certFile : chainFile;

        ChainVerifier.checkSigningPair(signing, certFile, key, keyFile);
        List<X509Certificate> path = ChainVerifier.verifiedPath(signing, certFile, pool, chainLabel, roots, rootFile,
                clock.instant());
        return new CaMaterial(signing, key, path.subList(1, path.size()), roots,
                new CaMaterial.Origin(CaMaterial.Kind.PLUGGED_IN, dir));
    }
}
