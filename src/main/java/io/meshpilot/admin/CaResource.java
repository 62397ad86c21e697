package io.meshpilot.admin;

import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.security.TrustBundle;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The CA's public side: {@code GET /api/v1/ca/root} (the root workloads chain to, what
 * istiod publishes as {@code root-cert.pem}) and {@code GET /api/v1/ca/trust-bundle} (every
 * root workloads should trust: during a rotation both roots, plus MeshConfig caCertificates).
 */
@ApplicationScoped
@Path("/api/v1/ca")
public class CaResource {

    /** One certificate, described. */
    public record CertificateInfo(String subject, String issuer, String serialNumber, String notBefore,
                                  String notAfter, String keyAlgorithm, String sha256Fingerprint, String source,
                                  String pem) {
    }

    /** {@code /root}: the current root and where the CA material came from. */
    public record RootInfo(String caSource, CertificateInfo root) {
    }

    /** {@code /trust-bundle}: the trusted roots, in order, and unusable mesh entries. */
    public record TrustBundleInfo(List<CertificateInfo> certificates, List<String> problems, String pem) {
    }

    @Inject
    IstiodCertificates certificates;

    @GET
    @Path("root")
    @Produces(MediaType.APPLICATION_JSON)
    public RootInfo root() {
        return new RootInfo(certificates.publishedRootSource(), info(certificates.publishedRoot(), "ca"));
    }

    @GET
    @Path("trust-bundle")
    @Produces(MediaType.APPLICATION_JSON)
    public TrustBundleInfo trustBundle() {
        TrustBundle bundle = certificates.trustBundle();
        List<CertificateInfo> list = new ArrayList<>();
        for (int i = 0; i < bundle.certificates().size(); i++) {
            list.add(info(bundle.certificates().get(i), bundle.sources().get(i)));
        }
        return new TrustBundleInfo(list, bundle.problems(), bundle.pem());
    }

    static CertificateInfo info(X509Certificate c, String source) {
        return new CertificateInfo(c.getSubjectX500Principal().getName(), c.getIssuerX500Principal().getName(),
                c.getSerialNumber().toString(16), c.getNotBefore().toInstant().toString(),
                c.getNotAfter().toInstant().toString(), c.getPublicKey().getAlgorithm(), fingerprint(c), source,
                Pem.certificate(c));
    }

    private static String fingerprint(X509Certificate c) {
        try {
            return HexFormat.ofDelimiter(":").withUpperCase().formatHex(MessageDigest.getInstance("SHA-256").digest(c.getEncoded()));
        } catch (NoSuchAlgorithmException | CertificateEncodingException e) {
            throw new IllegalStateException(e);
        }
    }
}
