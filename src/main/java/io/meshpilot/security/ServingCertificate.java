package io.meshpilot.security;

import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.IssuedChain;
import io.meshpilot.security.ca.Pem;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
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
 * issued by our CA for istiod's DNS names. It exists in memory only: Helidon's socket TLS
 * config takes it as PEM text at start, and renewals reach the sockets as key objects, so
 * the private key is never written to disk (nothing is left behind by a killed process).
 *
 * @param certificate the leaf
 * @param privateKey  its key (EC P-256)
 * @param chain       the leaf, intermediates and root, as presented to clients
 * @param dnsNames    the names it was issued for
 * @param issuedAt    when it was issued (renewal is planned from here, not from the backdated notBefore)
 * @param trust       roots client certificates are verified against (the CA roots at issue time)
 */
public record ServingCertificate(X509Certificate certificate, PrivateKey privateKey, List<X509Certificate> chain,
                                 List<String> dnsNames, Instant issuedAt, List<X509Certificate> trust) {
    public ServingCertificate {
        chain = List.copyOf(chain);
        dnsNames = List.copyOf(dnsNames);
        trust = List.copyOf(trust);
    }

    /** The private key as PKCS#8 PEM ("PRIVATE KEY"): what Helidon and Netty read for every key type. */
    public String keyPem() {
        return Pem.privateKey(privateKey);
    }

    /** The chain as PEM, leaf first. */
    public String chainPem() {
        return Pem.certificates(chain);
    }

    /** The trusted roots as PEM. */
    public String trustPem() {
        return Pem.certificates(trust);
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

    /** Issues a new serving certificate from {@code ca} for a fresh EC P-256 key. */
    public static ServingCertificate issue(CertificateAuthority ca, List<String> names, Duration ttl,
                                           List<X509Certificate> trust) {
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
            return new ServingCertificate(chain.getFirst(), kp.getPrivate(), chain, names, now, trust);
        } catch (GeneralSecurityException e) {
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
