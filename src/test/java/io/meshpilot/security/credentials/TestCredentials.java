package io.meshpilot.security.credentials;

import io.meshpilot.security.ca.Pem;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Real certificates and keys (BouncyCastle) and Secret manifests holding them, for tests. */
public final class TestCredentials {
    private static final SecureRandom RANDOM = new SecureRandom();

    private TestCredentials() {
    }

    /** A certificate and its key, as PEM. */
    public record Pem2(String cert, String key) {
    }

    /** A fresh EC P-256 key and a self-signed certificate for {@code cn}, valid from a minute ago for {@code days}. */
    public static Pem2 selfSigned(String cn, int days) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair kp = g.generateKeyPair();
            long now = System.currentTimeMillis();
            X500Name name = new X500Name("CN=" + cn);
            var builder = new JcaX509v3CertificateBuilder(name, new BigInteger(64, RANDOM), new Date(now - 60_000),
                    new Date(now + days * 86_400_000L), name, kp.getPublic());
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate())));
            return new Pem2(Pem.certificate(cert), Pem.privateKey(kp.getPrivate()));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    public static Pem2 selfSigned(String cn) {
        return selfSigned(cn, 30);
    }

    /** A {@code kubernetes.io/tls} Secret with base64 {@code data} (ca.crt omitted when null). */
    public static String tlsSecret(String namespace, String name, String cert, String key, String ca) {
        StringBuilder sb = new StringBuilder("apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n");
        if (namespace != null) {
            sb.append("  namespace: ").append(namespace).append('\n');
        }
        sb.append("type: kubernetes.io/tls\ndata:\n");
        sb.append("  tls.crt: ").append(b64(cert)).append('\n');
        sb.append("  tls.key: ").append(b64(key)).append('\n');
        if (ca != null) {
            sb.append("  ca.crt: ").append(b64(ca)).append('\n');
        }
        return sb.toString();
    }

    /** A generic (Opaque) Secret with base64 {@code data} cert/key/cacert, as the API server holds it. */
    public static String genericSecretData(String namespace, String name, String cert, String key, String ca) {
        return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + namespace
                + "\ntype: Opaque\ndata:\n  cert: " + b64(cert) + "\n  key: " + b64(key) + "\n  cacert: " + b64(ca) + "\n";
    }

    /** A generic (Opaque) Secret with plain {@code stringData} cert/key/cacert (each omitted when null). */
    public static String genericSecret(String namespace, String name, String cert, String key, String ca) {
        StringBuilder sb = new StringBuilder("apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n");
        if (namespace != null) {
            sb.append("  namespace: ").append(namespace).append('\n');
        }
        sb.append("type: Opaque\nstringData:\n");
        if (cert != null) {
            sb.append("  cert: |\n").append(indent(cert));
        }
        if (key != null) {
            sb.append("  key: |\n").append(indent(key));
        }
        if (ca != null) {
            sb.append("  cacert: |\n").append(indent(ca));
        }
        return sb.toString();
    }

    /** Writes {@code content} to {@code dir/name} through a temp file and a rename, as editors and kubectl cp do. */
    public static Path write(Path dir, String name, String content) throws IOException {
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + name + ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        return Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
    }

    private static String indent(String pem) {
        StringBuilder sb = new StringBuilder();
        for (String line : pem.split("\n")) {
            sb.append("    ").append(line).append('\n');
        }
        return sb.toString();
    }
}
