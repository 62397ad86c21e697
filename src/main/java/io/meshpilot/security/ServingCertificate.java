package io.meshpilot.security;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * istiod's TLS serving certificate for the secure gRPC (15012) and webhook (15017) ports.
 * Until the CA issues one, this is a self-signed certificate made at start for istiod's DNS
 * names; the files it writes are what Helidon's socket TLS config and the Netty transport read.
 *
 * @param certificate the leaf (self-signed for now)
 * @param privateKey  its key
 * @param dnsNames    the DNS SANs
 * @param keyFile     PEM private key (mode 0600)
 * @param chainFile   PEM certificate chain
 */
public record ServingCertificate(X509Certificate certificate, PrivateKey privateKey, List<String> dnsNames,
                                 Path keyFile, Path chainFile) {

    /** Creates a self-signed EC P-256 certificate for istiod's names and writes it under {@code dir}. */
    public static ServingCertificate selfSigned(String namespace, String domainSuffix, Path dir) {
        List<String> names = new ArrayList<>(List.of(
                "istiod." + namespace + ".svc",
                "istiod." + namespace + ".svc." + domainSuffix,
                "istiod-remote." + namespace + ".svc",
                "localhost"));
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
            gen.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair kp = gen.generateKeyPair();
            Instant now = Instant.now();
            X500Name subject = new X500Name("O=MeshPilot,CN=istiod." + namespace + ".svc");
            var builder = new JcaX509v3CertificateBuilder(subject, new BigInteger(127, new SecureRandom()),
                    Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(90))),
                    subject, kp.getPublic());
            List<GeneralName> sans = new ArrayList<>();
            names.forEach(n -> sans.add(new GeneralName(GeneralName.dNSName, n)));
            sans.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
            sans.add(new GeneralName(GeneralName.iPAddress, "::1"));
            var ext = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            builder.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            builder.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
            var signer = new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate());
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(builder.build(signer));

            Files.createDirectories(dir);
            Path key = dir.resolve("key.pem");
            Path chain = dir.resolve("cert-chain.pem");
            // PKCS#8 ("PRIVATE KEY"): what Helidon and Netty read for every key type
            writeOwnerOnly(key, pem(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(kp.getPrivate(), null).generate()));
            Files.writeString(chain, pem(cert));
            return new ServingCertificate(cert, kp.getPrivate(), List.copyOf(names), key, chain);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the serving certificate under " + dir, e);
        } catch (java.security.GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException("cannot create the serving certificate: " + e.getMessage(), e);
        }
    }

    private static void writeOwnerOnly(Path file, String content) throws IOException {
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, content);
    }

    static String pem(Object o) throws IOException {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            w.writeObject(o);
        }
        return sw.toString();
    }

    /** The certificate in PEM, e.g. for clients that want to trust it. */
    public String certificatePem() {
        try {
            return pem(certificate);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
