package io.meshpilot.security;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CertificatesV1Api;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequest;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestCondition;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestList;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestStatus;
import io.kubernetes.client.util.Config;
import io.meshpilot.security.ca.Pem;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.Extensions;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequest;

/**
 * Plays an external Kubernetes signer, as a cert-manager-like controller would: a client-java
 * informer on CertificateSigningRequests for its signerName; once one is Approved it signs the
 * request with its own CA (BouncyCastle, independent of MeshPilot's CA code) and writes the leaf
 * to status.certificate through the status subresource. It can be told to deny instead (an
 * approval policy overruling, through the approval subresource) or to stay silent.
 */
final class ExternalSigner implements AutoCloseable {
    enum Behaviour { SIGN, DENY, SILENT }

    static final String DENY_REASON = "PolicyRejected";
    static final String DENY_MESSAGE = "identity not allowed by the test policy";

    private final String signerName;
    private final KeyPair caKey;
    private final X509Certificate root;
    private final CertificatesV1Api api;
    private final SharedInformerFactory factory;
    private volatile Behaviour behaviour = Behaviour.SIGN;
    /** CSR name -> the object as the signer last saw it approved. */
    final Map<String, V1CertificateSigningRequest> approvedSeen = new ConcurrentHashMap<>();

    ExternalSigner(Path kubeconfig, String signerName) throws Exception {
        this.signerName = signerName;
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        this.caKey = g.generateKeyPair();
        X500Name name = new X500Name("O=External Signer Test CA");
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(Duration.ofDays(1))), name,
                caKey.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        this.root = new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKey.getPrivate())));
        ApiClient client = Config.fromConfig(kubeconfig.toString());
        client.setHttpClient(client.getHttpClient().newBuilder().readTimeout(Duration.ZERO).build());
        this.api = new CertificatesV1Api(client);
        this.factory = new SharedInformerFactory(client);
        SharedIndexInformer<V1CertificateSigningRequest> informer = factory.sharedIndexInformerFor(
                params -> api.listCertificateSigningRequest().resourceVersion(params.resourceVersion)
                        .timeoutSeconds(params.timeoutSeconds).watch(params.watch).buildCall(null),
                V1CertificateSigningRequest.class, V1CertificateSigningRequestList.class);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1CertificateSigningRequest csr) {
                handle(csr);
            }

            @Override
            public void onUpdate(V1CertificateSigningRequest old, V1CertificateSigningRequest csr) {
                handle(csr);
            }

            @Override
            public void onDelete(V1CertificateSigningRequest csr, boolean unknownFinalState) {
            }
        });
        factory.startAllRegisteredInformers();
    }

    X509Certificate root() {
        return root;
    }

    void behave(Behaviour b) {
        behaviour = b;
    }

    private void handle(V1CertificateSigningRequest csr) {
        if (!signerName.equals(csr.getSpec().getSignerName()) || csr.getStatus() == null
                || csr.getStatus().getCertificate() != null) {
            return;
        }
        List<V1CertificateSigningRequestCondition> conditions = csr.getStatus().getConditions() == null ? List.of()
                : csr.getStatus().getConditions();
        if (conditions.stream().noneMatch(c -> "Approved".equals(c.getType()) && "True".equals(c.getStatus()))) {
            return;
        }
        String name = csr.getMetadata().getName();
        approvedSeen.put(name, csr);
        try {
            switch (behaviour) {
                case SIGN -> {
                    String leaf = Pem.certificate(sign(new String(csr.getSpec().getRequest(), StandardCharsets.US_ASCII)));
                    csr.getStatus().setCertificate(leaf.getBytes(StandardCharsets.US_ASCII));
                    api.replaceCertificateSigningRequestStatus(name, csr).execute();
                }
                case DENY -> {
                    csr.setStatus(new V1CertificateSigningRequestStatus().addConditionsItem(
                            new V1CertificateSigningRequestCondition().type("Denied").status("True")
                                    .reason(DENY_REASON).message(DENY_MESSAGE)));
                    api.replaceCertificateSigningRequestApproval(name, csr).execute();
                }
                case SILENT -> {
                }
            }
        } catch (ApiException e) {
            // a conflicting write: the informer delivers the newer object and we try again
        } catch (Exception e) {
            throw new IllegalStateException("test signer failed on " + name, e);
        }
    }

    /** A one-hour leaf for the CSR's key with the CSR's requested extensions (its SANs). */
    private X509Certificate sign(String csrPem) throws Exception {
        PKCS10CertificationRequest request;
        try (PEMParser parser = new PEMParser(new StringReader(csrPem))) {
            request = (PKCS10CertificationRequest) parser.readObject();
        }
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(root, new BigInteger(64, new SecureRandom()),
                Date.from(now.minus(Duration.ofMinutes(1))), Date.from(now.plus(Duration.ofHours(1))),
                new X500Name(new RDN[0]),
                new JcaPKCS10CertificationRequest(request).getPublicKey());
        for (var attribute : request.getAttributes(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest)) {
            Extensions requested = Extensions.getInstance(attribute.getAttrValues().getObjectAt(0));
            Extension san = requested.getExtension(Extension.subjectAlternativeName);
            if (san != null) {
                // an empty subject requires a critical SAN (RFC 5280)
                b.addExtension(Extension.subjectAlternativeName, true, san.getParsedValue());
            }
        }
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKey.getPrivate())));
    }

    @Override
    public void close() {
        factory.stopAllRegisteredInformers();
    }
}
