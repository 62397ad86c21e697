package io.meshpilot.security;

import io.meshpilot.security.ca.CsrRejectedException;
import io.meshpilot.security.ca.IssuedChain;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.security.ra.KubernetesRa;
import io.meshpilot.security.ra.SignerRoots;
import java.io.IOException;
import java.io.StringWriter;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.ExtensionsGenerator;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

/**
 * istiod's certificate and published root from a Kubernetes signer
 * ({@code PILOT_CERT_PROVIDER=k8s.io/<signer>} in RA mode, istiod's initDNSCertsK8SRA): the
 * serving certificate is requested through the CSR API from that signer, and the root
 * published (trust bundle, {@code istio-ca-root-cert}, the CA root API) is the one MeshConfig
 * {@code caCertificates} configures for it; without such an entry istiod does not start.
 */
public final class SignerServing {
    private final String signerName;
    private final KubernetesRa ra;
    private final SignerRoots roots;

    public SignerServing(String signerName, KubernetesRa ra, SignerRoots roots) {
        this.signerName = signerName;
        this.ra = ra;
        this.roots = roots;
    }

    public String signerName() {
        return signerName;
    }

    /**
     * The signer's root from MeshConfig.
     *
     * @throws CsrRejectedException when no caCertificates entry names the signer, or it does not parse
     */
    public List<X509Certificate> publishedRoots() throws CsrRejectedException {
        return roots.fromMeshConfig(signerName).map(SignerRoots.Bundle::roots).orElseThrow(() -> new CsrRejectedException(
                CsrRejectedException.Reason.SIGNING_FAILED, "PILOT_CERT_PROVIDER=k8s.io/" + signerName
                        + ": no root for signer " + signerName + " in meshConfig.caCertificates (add an entry with certSigners ["
                        + signerName + "] and its pem)"));
    }

    /**
     * A new certificate for a fresh EC P-256 key, for istiod's {@code names}, from the signer.
     *
     * @param clientTrust the roots client certificates are verified against
     */
    public ServingCertificate issue(List<String> names, Duration ttl, List<X509Certificate> clientTrust)
            throws CsrRejectedException {
        publishedRoots(); // as istiod: no certificate from a signer whose root is not configured
        KeyPair key = newKey();
        Instant now = Instant.now();
        IssuedChain issued = ra.signIstiod(csr(key, names), names, ttl);
        List<X509Certificate> chain = new ArrayList<>();
        for (String pem : issued.certChain()) {
            chain.addAll(Pem.certificatesIn(pem));
        }
        return new ServingCertificate(chain.getFirst(), key.getPrivate(), chain, names, now, clientTrust);
    }

    private static KeyPair newKey() {
        try {
            KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
            gen.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            return gen.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot make a key for istiod's certificate: " + e.getMessage(), e);
        }
    }

    /** A PKCS#10 request with the DNS names as SANs and an empty subject, as istiod's. */
    private static String csr(KeyPair key, List<String> names) {
        try {
            GeneralName[] sans = names.stream().map(n -> new GeneralName(GeneralName.dNSName, n)).toArray(GeneralName[]::new);
            ExtensionsGenerator extensions = new ExtensionsGenerator();
            extensions.addExtension(Extension.subjectAlternativeName, true, new GeneralNames(sans));
            var request = new JcaPKCS10CertificationRequestBuilder(new X500Name(new RDN[0]),
                    key.getPublic())
                    .addAttribute(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest, extensions.generate())
                    .build(new JcaContentSignerBuilder("SHA256withECDSA").build(key.getPrivate()));
            StringWriter out = new StringWriter();
            try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
                pem.writeObject(request);
            }
            return out.toString();
        } catch (IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the CSR for istiod's certificate: " + e.getMessage(), e);
        }
    }
}
