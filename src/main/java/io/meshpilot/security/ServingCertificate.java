package io.meshpilot.security;

import io.meshpilot.security.ca.AtomicFiles;
import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.IssuedChain;
import io.meshpilot.security.ca.Pem;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * istiod's TLS serving certificate for the secure gRPC (15012) and webhook (15017) ports,
 * issued by our CA for istiod's DNS names. The files are what Helidon's socket TLS config
 * reads at start; later renewals reach the sockets as in-memory key material.
 *
 * @param certificate the leaf
 * @param privateKey  its key (EC P-256)
 * @param chain       the leaf, intermediates and root, as presented to clients
 * @param dnsNames    the names it was issued for
 * @param issuedAt    when it was issued (renewal is planned from here, not from the backdated notBefore)
 * @param keyFile     PEM private key (mode 0600)
 * @param chainFile   PEM certificate chain (leaf first)
 * @param trustFile   PEM roots client certificates are verified against (the trust bundle at issue time)
 */
public record ServingCertificate(X509Certificate certificate, PrivateKey privateKey, List<X509Certificate> chain,
                                 List<String> dnsNames, Instant issuedAt, Path keyFile, Path chainFile,
                                 Path trustFile) {
    public ServingCertificate {
        chain = List.copyOf(chain);
        dnsNames = List.copyOf(dnsNames);
    }

    /** istiod's names: its Service in {@code namespace}, ISTIOD_CUSTOM_HOST names, and localhost when embedded. */
    public static List<String> istiodNames(String namespace, String domainSuffix, List<String> customHosts,
                                           boolean embedded) {
        List<String> names = new ArrayList<>(List.of(
                "istiod." + namespace + ".svc",
                "istiod." + namespace + ".svc." + domainSuffix,
                "istiod-remote." + namespace + ".svc"));
        customHosts.stream().filter(h -> !names.contains(h)).forEach(names::add);
        if (embedded) {
            names.add("localhost");
        }
        return names;
    }

    /**
     * Issues a new serving certificate from {@code ca} for a fresh EC P-256 key and writes it
     * under {@code dir} (each file replaced atomically and durably).
     */
    public static ServingCertificate issue(CertificateAuthority ca, List<String> names, Duration ttl,
                                           List<X509Certificate> trust, Path dir) {
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
            gen.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair kp = gen.generateKeyPair();
            Instant now = Instant.now();
            IssuedChain issued = ca.issueServing(kp.getPublic(), names, ttl);
            List<X509Certificate> chain = new ArrayList<>();
            for (String pem : issued.certChain()) {
                chain.add(parse(pem));
            }
            Files.createDirectories(dir);
            Path key = dir.resolve("key.pem");
            Path chainFile = dir.resolve("cert-chain.pem");
            Path trustFile = dir.resolve("trust-bundle.pem");
            // PKCS#8 ("PRIVATE KEY"): what Helidon and Netty read for every key type
            AtomicFiles.write(key, Pem.privateKey(kp.getPrivate()), true);
            AtomicFiles.write(chainFile, String.join("", issued.certChain()), false);
            AtomicFiles.write(trustFile, Pem.certificates(trust), false);
            return new ServingCertificate(chain.getFirst(), kp.getPrivate(), chain, names, now, key, chainFile, trustFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the serving certificate under " + dir, e);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("cannot create the serving certificate: " + e.getMessage(), e);
        }
    }

    /** When to renew: half way through its life, as istiod renews workload certificates. */
    public Instant renewAt() {
        return issuedAt.plus(Duration.between(issuedAt, certificate.getNotAfter().toInstant()).dividedBy(2));
    }

    private static X509Certificate parse(String pem) throws CertificateException {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }
}
