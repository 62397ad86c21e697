package io.meshpilot.security.ra;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CertificatesV1Api;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequest;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestCondition;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestList;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestSpec;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequestStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.CsrRejectedException;
import io.meshpilot.security.ca.CsrRejectedException.Reason;
import io.meshpilot.security.ca.CsrSigner;
import io.meshpilot.security.ca.IssuedChain;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.util.GoDuration;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * RA mode ({@code EXTERNAL_CA=ISTIOD_RA_KUBERNETES_API}): MeshPilot checks the CSR as its own CA
 * would, then hands it to the Kubernetes CSR API for {@code K8S_SIGNER}, as istiod's
 * KubernetesRA: a {@code certificates.k8s.io/v1} CertificateSigningRequest is created,
 * approved by MeshPilot through the approval subresource, the signer's certificate read back
 * within a bounded wait, and the object deleted whatever the outcome. The chain is verified
 * against the signer's root ({@link SignerRoots}) and answered with that root last.
 */
public final class KubernetesRa implements CsrSigner {
    /** The EXTERNAL_CA value that selects this RA. */
    public static final String EXTERNAL_CA = "ISTIOD_RA_KUBERNETES_API";
    /** cert-manager reads the requested lifetime from this annotation (istiod sets it too). */
    static final String LIFETIME_ANNOTATION = "experimental.cert-manager.io/request-duration";
    /** istiod's workload usages. */
    static final List<String> USAGES = List.of("digital signature", "key encipherment", "server auth", "client auth");
    /** The API server's minimum for spec.expirationSeconds. */
    private static final long MIN_EXPIRATION_SECONDS = 600;
    private static final int CREATE_ATTEMPTS = 3;
    private static final Duration FIRST_RETRY = Duration.ofMillis(50);
    private static final Duration MAX_RETRY = Duration.ofMillis(500);
    private static final String NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789";
    private static final System.Logger LOG = System.getLogger(KubernetesRa.class.getName());

    private final ApiClient client;
    private final CertificatesV1Api api;
    private final GenericKubernetesApi<V1CertificateSigningRequest, V1CertificateSigningRequestList> csrs;
    private final String signerName;
    private final Supplier<CertificateAuthority> checks;
    private final SignerRoots roots;
    private final Duration wait;
    private final SecureRandom random = new SecureRandom();

    /**
     * @param signerName K8S_SIGNER
     * @param checks     the CA whose request checks and TTL limits apply before anything is sent
     * @param roots      where the signer's root comes from
     * @param wait       how long to wait for the signer to fill in the certificate
     */
    public KubernetesRa(ApiClient client, String signerName, Supplier<CertificateAuthority> checks, SignerRoots roots,
                        Duration wait) {
        if (signerName == null || signerName.isBlank()) {
            throw new IllegalArgumentException("EXTERNAL_CA=" + EXTERNAL_CA + " needs K8S_SIGNER (the signerName of the "
                    + "CertificateSigningRequests, e.g. example.com/workloads)");
        }
        this.client = client;
        this.api = new CertificatesV1Api(client);
        this.csrs = new GenericKubernetesApi<>(V1CertificateSigningRequest.class, V1CertificateSigningRequestList.class,
                "certificates.k8s.io", "v1", "certificatesigningrequests", client);
        this.signerName = signerName;
        this.checks = checks;
        this.roots = roots;
        this.wait = wait;
    }

    public String signerName() {
        return signerName;
    }

    @Override
    public IssuedChain sign(String csrPem, List<String> identities, Duration requestedTtl) throws CsrRejectedException {
        Duration lifetime = checks.get().checkRequest(csrPem, identities, requestedTtl);
        return submit(csrPem, identities, lifetime);
    }

    /**
     * istiod's own certificate (PILOT_CERT_PROVIDER=k8s.io/&lt;signer&gt;, istiod's
     * GenKeyCertK8sCA): MeshPilot made the CSR itself, so no workload checks apply; the same
     * create, approve, wait and delete as a workload's.
     */
    public IssuedChain signIstiod(String csrPem, List<String> dnsNames, Duration lifetime) throws CsrRejectedException {
        return submit(csrPem, dnsNames, lifetime);
    }

    private IssuedChain submit(String csrPem, List<String> names, Duration lifetime) throws CsrRejectedException {
        String name = create(csrPem, lifetime);
        try {
            approve(name, names);
            String certificate = awaitCertificate(name);
            return chain(name, certificate);
        } finally {
            delete(name);
        }
    }

    private String create(String csrPem, Duration lifetime) throws CsrRejectedException {
        ApiException last = null;
        for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
            String name = "csr-workload-" + randomSuffix();
            V1CertificateSigningRequestSpec spec = new V1CertificateSigningRequestSpec()
                    .request(csrPem.getBytes(StandardCharsets.US_ASCII)).signerName(signerName).usages(USAGES);
            if (lifetime.toSeconds() >= MIN_EXPIRATION_SECONDS) {
                spec.expirationSeconds((int) Math.min(Integer.MAX_VALUE, lifetime.toSeconds()));
            }
            V1CertificateSigningRequest csr = new V1CertificateSigningRequest().apiVersion("certificates.k8s.io/v1")
                    .kind("CertificateSigningRequest")
                    .metadata(new V1ObjectMeta().name(name).annotations(Map.of(LIFETIME_ANNOTATION,
                            GoDuration.format(lifetime))))
                    .spec(spec);
            try {
                api.createCertificateSigningRequest(csr).execute();
                LOG.log(Level.DEBUG, () -> "CSR " + name + " created for signer " + signerName);
                return name;
            } catch (ApiException e) {
                last = e;
                if (e.getCode() != 409) {
                    break; // only a name clash is worth another name
                }
            }
        }
        throw new CsrRejectedException(Reason.SIGNING_FAILED, "cannot create a CertificateSigningRequest for signer "
                + signerName + ": " + describe(last), last);
    }

    /** As istiod: an Approved condition whose reason and message say which CSR and identities. */
    private void approve(String name, List<String> identities) throws CsrRejectedException {
        String message = "CSR (" + name + ") for the certificate (" + String.join(",", identities) + ") is approved";
        try {
            V1CertificateSigningRequest current = api.readCertificateSigningRequest(name).execute();
            V1CertificateSigningRequestStatus status = current.getStatus() == null
                    ? new V1CertificateSigningRequestStatus() : current.getStatus();
            status.addConditionsItem(new V1CertificateSigningRequestCondition().type("Approved").status("True")
                    .reason(message).message(message).lastUpdateTime(OffsetDateTime.now()));
            current.setStatus(status);
            api.replaceCertificateSigningRequestApproval(name, current).execute();
        } catch (ApiException e) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "cannot approve CertificateSigningRequest " + name
                    + " for signer " + signerName + ": " + describe(e), e);
        }
    }

    /**
     * Waits, at most {@link #wait}, until the signer sets a certificate or a Denied/Failed
     * condition: reads the object, then watches it from the version read (istiod's
     * readSignedCertificate watches too), so the answer wakes the wait. A watch that ends early
     * (dropped, expired version) is followed by another read and watch.
     */
    private String awaitCertificate(String name) throws CsrRejectedException {
        long deadline = System.nanoTime() + wait.toNanos();
        String lastProblem = "no answer from the signer";
        Duration pause = FIRST_RETRY;
        while (true) {
            try {
                V1CertificateSigningRequest csr = api.readCertificateSigningRequest(name).execute();
                String certificate = certificateOrRefusal(name, csr);
                if (certificate != null) {
                    return certificate;
                }
                certificate = watchForCertificate(name, csr.getMetadata().getResourceVersion(), deadline);
                if (certificate != null) {
                    return certificate;
                }
                pause = FIRST_RETRY;
            } catch (ApiException e) {
                lastProblem = "last read or watch failed: " + describe(e);
            } catch (IOException | RuntimeException e) {
                lastProblem = "last watch failed: " + e.getMessage();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new CsrRejectedException(Reason.SIGNER_TIMEOUT, "signer " + signerName + " did not sign "
                        + "CertificateSigningRequest " + name + " within " + GoDuration.format(wait) + " ("
                        + lastProblem + ")");
            }
            try {
                // a failed read or watch is asked again after a growing pause, not at once
                Thread.sleep(Math.min(pause.toMillis(), Math.max(1, left / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CsrRejectedException(Reason.SIGNER_TIMEOUT, "interrupted waiting for signer " + signerName, e);
            }
            pause = pause.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : pause.multipliedBy(2);
        }
    }

    /**
     * The certificate from the first change of the object that carries one, watching from
     * {@code resourceVersion} until the deadline (the watch is closed then); null when none came.
     */
    private String watchForCertificate(String name, String resourceVersion, long deadline)
            throws ApiException, IOException, CsrRejectedException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return null;
        }
        ListOptions options = new ListOptions();
        options.setFieldSelector("metadata.name=" + name);
        options.setResourceVersion(resourceVersion);
        options.setTimeoutSeconds((int) Math.max(1, TimeUnit.NANOSECONDS.toSeconds(left) + 1));
        try (Watchable<V1CertificateSigningRequest> watch = csrs.watch(options)) {
            CompletableFuture.delayedExecutor(left, TimeUnit.NANOSECONDS).execute(() -> closeQuietly(watch));
            for (Watch.Response<V1CertificateSigningRequest> event : watch) {
                if (event.object == null || "ERROR".equals(event.type)) {
                    return null; // an expired version, say: read again
                }
                if ("DELETED".equals(event.type)) {
                    throw new CsrRejectedException(Reason.SIGNING_FAILED, "CertificateSigningRequest " + name
                            + " was deleted before signer " + signerName + " answered");
                }
                String certificate = certificateOrRefusal(name, event.object);
                if (certificate != null) {
                    return certificate;
                }
            }
        } catch (RuntimeException e) {
            if (System.nanoTime() - deadline >= 0) {
                return null; // closed at the deadline
            }
            throw e;
        }
        return null;
    }

    private static void closeQuietly(Watchable<?> watch) {
        try {
            watch.close();
        } catch (IOException | RuntimeException e) {
            // already ended
        }
    }

    /** The signed certificate, null while the signer has not answered; a refusal is thrown. */
    private String certificateOrRefusal(String name, V1CertificateSigningRequest csr) throws CsrRejectedException {
        V1CertificateSigningRequestStatus status = csr.getStatus();
        if (status == null) {
            return null;
        }
        for (V1CertificateSigningRequestCondition c : status.getConditions() == null
                ? List.<V1CertificateSigningRequestCondition>of() : status.getConditions()) {
            if (("Denied".equals(c.getType()) || "Failed".equals(c.getType())) && !"False".equals(c.getStatus())) {
                throw new CsrRejectedException(Reason.SIGNER_REFUSED, "signer " + signerName + ": "
                        + "CertificateSigningRequest " + name + " " + c.getType() + ": " + c.getReason()
                        + (c.getMessage() == null || c.getMessage().isBlank() ? "" : " (" + c.getMessage() + ")"));
            }
        }
        if (status.getCertificate() != null && status.getCertificate().length > 0) {
            return new String(status.getCertificate(), StandardCharsets.US_ASCII);
        }
        return null;
    }

    /** The signer's certificates without any root it included, then the configured root, verified. */
    private IssuedChain chain(String name, String certificatePem) throws CsrRejectedException {
        List<X509Certificate> issued;
        try {
            issued = Pem.certificatesIn(certificatePem);
        } catch (RuntimeException e) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "signer " + signerName + " wrote a certificate to "
                    + name + " that does not parse: " + e.getMessage(), e);
        }
        List<X509Certificate> path = new ArrayList<>();
        for (X509Certificate c : issued) {
            if (!selfSigned(c)) {
                path.add(c);
            }
        }
        if (path.isEmpty()) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "signer " + signerName + " wrote no leaf certificate to "
                    + name);
        }
        SignerRoots.Bundle bundle = roots.forSigner(signerName, issued);
        X509Certificate anchor = verify(path, bundle);
        List<String> chain = new ArrayList<>();
        path.forEach(c -> chain.add(Pem.certificate(c)));
        chain.add(Pem.certificate(anchor));
        X509Certificate leaf = path.getFirst();
        return new IssuedChain(chain, Pem.certificates(bundle.roots()), leaf.getSerialNumber(),
                leaf.getNotBefore().toInstant(), leaf.getNotAfter().toInstant());
    }

    private X509Certificate verify(List<X509Certificate> path, SignerRoots.Bundle bundle) throws CsrRejectedException {
        try {
            for (int i = 0; i + 1 < path.size(); i++) {
                path.get(i).verify(path.get(i + 1).getPublicKey());
            }
        } catch (GeneralSecurityException e) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "the chain signer " + signerName
                    + " returned is broken: " + e.getMessage(), e);
        }
        X509Certificate last = path.getLast();
        for (X509Certificate root : bundle.roots()) {
            try {
                last.verify(root.getPublicKey());
                return root;
            } catch (GeneralSecurityException e) {
                // try the next root
            }
        }
        throw new CsrRejectedException(Reason.SIGNING_FAILED, "the chain signer " + signerName + " returned (issuer "
                + last.getIssuerX500Principal() + ") does not chain to its root from " + bundle.source());
    }

    private void delete(String name) {
        try {
            // executed without reading the answer: the API server answers with the object or a Status
            client.execute(api.deleteCertificateSigningRequest(name).buildCall(null));
            LOG.log(Level.DEBUG, () -> "CSR " + name + " deleted");
        } catch (ApiException e) {
            if (e.getCode() != 404) {
                LOG.log(Level.WARNING, "cannot delete CertificateSigningRequest " + name + ": " + describe(e));
            }
        }
    }

    static boolean selfSigned(X509Certificate c) {
        if (!c.getSubjectX500Principal().equals(c.getIssuerX500Principal())) {
            return false;
        }
        try {
            c.verify(c.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private String randomSuffix() {
        StringBuilder b = new StringBuilder(18);
        for (int i = 0; i < 18; i++) {
            b.append(NAME_CHARS.charAt(random.nextInt(NAME_CHARS.length())));
        }
        return b.toString();
    }

    private static String describe(ApiException e) {
        if (e == null) {
            return "unknown error";
        }
        String body = e.getResponseBody();
        return (e.getCode() == 0 ? "" : "HTTP " + e.getCode() + " ") + (body == null || body.isBlank()
                ? String.valueOf(e.getMessage()) : body.strip());
    }
}
