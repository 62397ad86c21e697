package io.meshpilot.config.kube.gateway.convert;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * Whether a Secret or ConfigMap that a Gateway names holds a usable certificate, with the
 * messages istiod reports (pilot/pkg/credentials/kube ExtractCertInfo and ExtractRoot, then Go's
 * tls.X509KeyPair and x509 AppendCertsFromPEM). Key material is only parsed, never kept or logged.
 */
public final class CertificateChecks {
    private static final String GENERIC_CERT = "cert";
    private static final String GENERIC_KEY = "key";
    private static final String GENERIC_CA = "cacert";
    private static final String TLS_CERT = "tls.crt";
    private static final String TLS_KEY = "tls.key";
    private static final String TLS_CA = "ca.crt";

    private CertificateChecks() {
    }

    /** Why {@code data} is not a certificate and key (the part after istiod's "invalid ... reference X, "); empty when it is. */
    public static Optional<String> keyPairProblem(Map<String, byte[]> data) {
        byte[] cert;
        byte[] key;
        if (hasValue(data, GENERIC_CERT, GENERIC_KEY)) {
            cert = data.get(GENERIC_CERT);
            key = data.get(GENERIC_KEY);
        } else if (hasValue(data, TLS_CERT, TLS_KEY)) {
            cert = data.get(TLS_CERT);
            key = data.get(TLS_KEY);
        } else if (data.containsKey(GENERIC_CERT) && data.containsKey(GENERIC_KEY)) {
            return Optional.of("found keys \"cert\" and \"key\", but they were empty");
        } else if (data.containsKey(TLS_CERT) && data.containsKey(TLS_KEY)) {
            return Optional.of("found keys \"tls.crt\" and \"tls.key\", but they were empty");
        } else {
            return Optional.of("found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key); found: "
                    + foundKeys(data));
        }
        return keyPairMismatch(cert, key).map(m -> "the certificate is malformed: " + m);
    }

    /** Why {@code data} holds no CA bundle (ExtractRoot, then the bundle check); empty when it does. */
    public static Optional<String> caBundleProblem(Map<String, byte[]> data) {
        Optional<String> missing = caKeyProblem(data);
        if (missing.isPresent()) {
            return missing;
        }
        byte[] bundle = hasValue(data, GENERIC_CA) ? data.get(GENERIC_CA) : data.get(TLS_CA);
        return certificates(bundle).isEmpty() ? Optional.of("the bundle is malformed") : Optional.empty();
    }

    /**
     * Why {@code data} has no CA key istiod reads ({@code cacert}, else {@code ca.crt}; its
     * ExtractRoot, which does not parse the bundle); empty when it has one.
     */
    public static Optional<String> caKeyProblem(Map<String, byte[]> data) {
        if (hasValue(data, GENERIC_CA) || hasValue(data, TLS_CA)) {
            return Optional.empty();
        }
        if (data.containsKey(GENERIC_CA)) {
            return Optional.of("found key \"cacert\", but it was empty");
        }
        if (data.containsKey(TLS_CA)) {
            return Optional.of("found key \"ca.crt\", but it was empty");
        }
        return Optional.of("found secret, but didn't have expected keys cacert or ca.crt; found: " + foundKeys(data));
    }

    /** Text values as bytes, for ConfigMaps. */
    public static Map<String, byte[]> bytes(Map<String, String> data) {
        Map<String, byte[]> out = new HashMap<>();
        data.forEach((k, v) -> out.put(k, v.getBytes(StandardCharsets.UTF_8)));
        return out;
    }

    /** Go's tls.X509KeyPair errors, in its order of checks. */
    private static Optional<String> keyPairMismatch(byte[] certPem, byte[] keyPem) {
        List<X509Certificate> certs = certificates(certPem);
        if (certs.isEmpty()) {
            return Optional.of("tls: failed to find any PEM data in certificate input");
        }
        Optional<PrivateKey> key = privateKey(keyPem);
        if (key.isEmpty()) {
            return Optional.of("tls: failed to find any PEM data in key input");
        }
        return matches(certs.get(0), key.get()) ? Optional.empty()
                : Optional.of("tls: private key does not match public key");
    }

    private static List<X509Certificate> certificates(byte[] pem) {
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory f = CertificateFactory.getInstance("X.509");
            for (var c : f.generateCertificates(new ByteArrayInputStream(pem))) {
                out.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            return List.of();
        }
        return out;
    }

    private static Optional<PrivateKey> privateKey(byte[] pem) {
        try (PEMParser parser = new PEMParser(new StringReader(new String(pem, StandardCharsets.US_ASCII)))) {
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
                if (o instanceof PEMKeyPair pair) {
                    return Optional.of(converter.getPrivateKey(pair.getPrivateKeyInfo()));
                }
                if (o instanceof PrivateKeyInfo info) {
                    return Optional.of(converter.getPrivateKey(info));
                }
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** Whether the key signs what the certificate's public key verifies. */
    private static boolean matches(X509Certificate cert, PrivateKey key) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null) {
            return false;
        }
        try {
            byte[] probe = "meshpilot key pair check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(cert.getPublicKey());
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static boolean hasValue(Map<String, byte[]> data, String... keys) {
        for (String k : keys) {
            byte[] v = data.get(k);
            if (v == null || v.length == 0) {
                return false;
            }
        }
        return true;
    }

    /** istiod's truncatedKeysMessage: up to three sorted key names, then how many more. */
    private static String foundKeys(Map<String, byte[]> data) {
        List<String> keys = new ArrayList<>(new TreeSet<>(data.keySet()));
        if (keys.size() < 3) {
            return String.join(", ", keys);
        }
        return String.join(", ", keys.subList(0, 3)) + ", and " + (keys.size() - 3) + " more...";
    }
}
