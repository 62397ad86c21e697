package io.meshpilot.security.ca;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/**
 * PEM in and out for the CA: certificates and private keys as istiod's files hold them
 * (PKCS#1 {@code RSA PRIVATE KEY}, SEC1 {@code EC PRIVATE KEY} or PKCS#8 {@code PRIVATE KEY}).
 * Reading names the file in every error, because start-up reports exactly that line.
 */
public final class Pem {
    private static final Base64.Encoder BASE64 = Base64.getMimeEncoder(64, new byte[] {'\n'});

    private Pem() {
    }

    /** One {@code CERTIFICATE} block, newline-terminated (istiod's cert_chain entries end with one). */
    public static String certificate(X509Certificate certificate) {
        try {
            return certificate(certificate.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalArgumentException("certificate cannot be encoded: " + e.getMessage(), e);
        }
    }

    /** One {@code CERTIFICATE} block from DER. */
    public static String certificate(byte[] der) {
        return block("CERTIFICATE", der);
    }

    /** Several certificates, concatenated in order (a trust bundle). */
    public static String certificates(List<X509Certificate> certificates) {
        StringBuilder sb = new StringBuilder();
        certificates.forEach(c -> sb.append(certificate(c)));
        return sb.toString();
    }

    /** PKCS#8 {@code PRIVATE KEY}: readable by Helidon, Netty, Envoy and openssl for every key type. */
    public static String privateKey(PrivateKey key) {
        return block("PRIVATE KEY", key.getEncoded());
    }

    private static String block(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + BASE64.encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    /** Every certificate in {@code file}; at least one. */
    public static List<X509Certificate> readCertificates(Path file) {
        return parseCertificates(read(file), file);
    }

    static List<X509Certificate> parseCertificates(String text, Path file) {
        try {
            return certificatesIn(text);
        } catch (IllegalArgumentException e) {
            throw new CaLoadException(file, e.getMessage(), e.getCause());
        }
    }

    /**
     * Every certificate in PEM {@code text}, in order; at least one.
     *
     * @throws IllegalArgumentException saying why, when the text holds anything else or no certificate
     */
    public static List<X509Certificate> certificatesIn(String text) {
        List<X509Certificate> certs = new ArrayList<>();
        JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            Object o;
            while ((o = parser.readObject()) != null) {
                if (!(o instanceof X509CertificateHolder holder)) {
                    throw new IllegalArgumentException("holds " + describe(o) + " where a CERTIFICATE was expected");
                }
                certs.add(converter.getCertificate(holder));
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (IOException | CertificateException | RuntimeException e) {
            throw new IllegalArgumentException("not a PEM certificate: " + e.getMessage(), e);
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException("not a PEM certificate: no CERTIFICATE block found");
        }
        return certs;
    }

    /** The one private key in {@code file}. Encrypted keys are refused: there is no passphrase to ask for. */
    public static PrivateKey readPrivateKey(Path file) {
        try {
            return privateKeyIn(read(file));
        } catch (IllegalArgumentException e) {
            throw new CaLoadException(file, e.getMessage(), e.getCause());
        }
    }

    static PrivateKey parsePrivateKey(String text, Path file) {
        try {
            return privateKeyIn(text);
        } catch (IllegalArgumentException e) {
            throw new CaLoadException(file, e.getMessage(), e.getCause());
        }
    }

    /**
     * The one private key in PEM {@code text} (PKCS#1, SEC1 or PKCS#8). Encrypted keys are
     * refused: there is no passphrase to ask for.
     *
     * @throws IllegalArgumentException saying why, when there is no key, more than one, or something else
     */
    public static PrivateKey privateKeyIn(String text) {
        List<PrivateKey> keys = new ArrayList<>();
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (PEMParser parser = new PEMParser(new StringReader(text))) {
            Object o;
            while ((o = parser.readObject()) != null) {
                switch (o) {
                    case ASN1ObjectIdentifier ignored -> { } // "EC PARAMETERS" block openssl writes before an EC key
                    case PEMKeyPair pair -> keys.add(converter.getPrivateKey(pair.getPrivateKeyInfo()));
                    case PrivateKeyInfo info -> keys.add(converter.getPrivateKey(info));
                    case PKCS8EncryptedPrivateKeyInfo ignored -> throw encrypted();
                    case PEMEncryptedKeyPair ignored -> throw encrypted();
                    default -> throw new IllegalArgumentException("holds " + describe(o) + " where a private key was expected");
                }
            }
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not a PEM private key: " + e.getMessage(), e);
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("not a PEM private key: no PRIVATE KEY block found");
        }
        if (keys.size() > 1) {
            throw new IllegalArgumentException("holds " + keys.size() + " private keys, expected one");
        }
        return keys.getFirst();
    }

    /** Whether {@code key} is the private half of {@code certificate}'s public key (signs and verifies a probe). */
    public static boolean keyMatches(PrivateKey key, X509Certificate certificate) {
        return KeyPolicy.keyMatches(key, certificate.getPublicKey());
    }

    private static IllegalArgumentException encrypted() {
        return new IllegalArgumentException("encrypted private keys are not supported; store it unencrypted with mode 0600");
    }

    /** The file as text; ISO-8859-1 so that binary garbage still decodes and fails as "not PEM". */
    private static String read(Path file) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (NoSuchFileException e) {
            throw new CaLoadException(file, "missing", e);
        } catch (IOException e) {
            throw new CaLoadException(file, "cannot be read: " + e.getMessage(), e);
        }
    }

    private static String describe(Object o) {
        return switch (o) {
            case X509CertificateHolder ignored -> "a CERTIFICATE";
            case PKCS10CertificationRequest ignored -> "a CERTIFICATE REQUEST";
            case PEMKeyPair ignored -> "a private key";
            case PrivateKeyInfo ignored -> "a private key";
            default -> "a " + o.getClass().getSimpleName();
        };
    }
}
