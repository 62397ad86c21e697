package io.meshpilot.security.istiod;

import io.meshpilot.security.Authenticators;
import io.meshpilot.security.CaMetrics;
import io.meshpilot.security.CaOptions;
import io.meshpilot.security.CertificateService;
import io.meshpilot.security.ImpersonationPolicy;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ServingTls;
import io.meshpilot.security.SignerServing;
import io.meshpilot.security.TrustBundle;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.model.Environment;
import io.meshpilot.security.ca.CaMaterial;
import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.CsrRejectedException;
import io.meshpilot.security.ca.CsrSigner;
import io.meshpilot.security.ca.SelfSignedRootRotator;
import io.meshpilot.security.jwt.JwtAuthenticator;
import io.meshpilot.security.ra.KubernetesRa;
import io.meshpilot.mesh.FileWatcher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Component 4 (CA / RA): the CA made before the container ({@link CaSetup}), the CSR service
 * on the secure port, istiod's authenticators (client certificate, then JWT_RULE's token
 * authenticator), the trust bundle (CA roots plus MeshConfig caCertificates), and the
 * timers: istiod's serving certificate renewed half way through its life, the self-signed
 * root checked every CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL and rotated in its grace
 * period. New certificates and roots reach the secure sockets without closing connections.
 * With ENABLE_CA_SERVER=false ({@link #withoutCa}) there is no CA: no CSR service, and istiod's
 * certificate and the root it publishes come from files kept by someone else (istio-csr).
 */
public final class IstiodCertificates implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(IstiodCertificates.class.getName());
    private static final Duration CERT_FILES_DEBOUNCE = Duration.ofMillis(100);
    private static final Duration CERT_FILES_POLL = Duration.ofSeconds(5);

    /** Null when ENABLE_CA_SERVER=false: no CA exists. */
    private final CaSetup setup;
    private final CaOptions options;
    private final Environment environment;
    private final Authenticators authenticators;
    private final GrpcServices grpcServices;
    private final List<Consumer<ServingCertificate>> servingListeners =
            new CopyOnWriteArrayList<>();
    private volatile ServingCertificate serving;
    private volatile TrustBundle trustBundle;
    private final List<Runnable> trustBundleListeners = new CopyOnWriteArrayList<>();
    private final ServingTls servingTls;
    private ScheduledExecutorService timer;
    private JwtAuthenticator jwt;
    private ImpersonationPolicy impersonation = ImpersonationPolicy.NOBODY;
    private final SelfSignedRootRotator rotator;
    private ScheduledFuture<?> renewal;
    private AutoCloseable pluggedInWatch;
    /** RA mode: signs workload CSRs instead of the CA (which still signs istiod's own certificate). */
    private CsrSigner workloadSigner;
    /** PILOT_CERT_PROVIDER=k8s.io/<signer>: istiod's certificate and the published root come from that signer. */
    private SignerServing signerServing;
    /** istiod's certificate kept in files by someone else (cert-manager): read from there, never issued. */
    private IstiodCertFiles certFiles;
    private AutoCloseable certFilesWatch;

    /**
     * @param setup the CA and the first serving certificate, made before the listeners (their
     *              TLS is configured with it)
     */
    public IstiodCertificates(CaSetup setup, CaOptions options, Environment environment, Authenticators authenticators,
                              GrpcServices grpcServices) {
        // client certificates must chain to our CA's roots only, as istiod's peer verifier:
        // MeshConfig caCertificates are for workloads to trust, not callers to be trusted by
        this(setup, setup.serving(), setup.ca().material().roots(), options, environment, authenticators, grpcServices);
    }

    private IstiodCertificates(CaSetup setup, ServingCertificate serving, List<X509Certificate> clientRoots,
                               CaOptions options, Environment environment, Authenticators authenticators,
                               GrpcServices grpcServices) {
        this.setup = setup;
        this.options = options;
        this.environment = environment;
        this.authenticators = authenticators;
        this.grpcServices = grpcServices;
        this.serving = serving;
        this.servingTls = new ServingTls(serving, clientRoots);
        this.rotator = new SelfSignedRootRotator(options.selfSignedTtl(), options.gracePercentile());
    }

    /**
     * ENABLE_CA_SERVER=false (istiod's maybeCreateCA creates nothing): istiod's certificate is read
     * from {@code files} and watched, their CA file is the root published and the one client
     * certificates are checked against, and no CSR service is registered.
     *
     * @throws io.meshpilot.security.ca.CaLoadException naming the file when it cannot be used
     */
    public static IstiodCertificates withoutCa(IstiodCertFiles files, CaOptions options, Environment environment,
                                               Authenticators authenticators, GrpcServices grpcServices) {
        ServingCertificate loaded = files.load();
        IstiodCertificates certificates = new IstiodCertificates(null, loaded, loaded.trust(), options, environment,
                authenticators, grpcServices);
        certificates.certFiles = files;
        return certificates;
    }

    /** False under ENABLE_CA_SERVER=false: nothing is signed here and no root is kept. */
    public boolean caEnabled() {
        return setup != null;
    }

    /** Who may ask for another identity (Kubernetes mode's node authorizer); call before {@link #start()}. */
    public void impersonationPolicy(ImpersonationPolicy policy) {
        this.impersonation = policy;
    }

    /**
     * Builds the trust bundle, registers the authenticators and the CSR service, and starts
     * the timers; returns what the start-up log says.
     *
     * @throws IllegalArgumentException when JWT_RULE is malformed
     */
    public String start() {
        if (setup == null) {
            return startWithoutCa();
        }
        if (signerServing != null && certFiles == null) {
            try {
                serving = signerServing.issue(setup.names(), setup.servingTtl(), setup.ca().material().roots());
            } catch (CsrRejectedException e) {
                throw new IllegalArgumentException("PILOT_CERT_PROVIDER=k8s.io/" + signerServing.signerName()
                        + ": istiod's certificate cannot be had from the signer: " + e.getMessage(), e);
            }
            servingTls.update(serving, setup.ca().material().roots());
        }
        trustBundle = TrustBundle.of(publishedRoots(), meshPems());
        String rule = options.jwtRule();
        registerJwtAuthenticator();
        Supplier<? extends CsrSigner> signing =
                workloadSigner != null ? () -> workloadSigner : setup::ca;
        grpcServices.register(new CertificateService(authenticators, signing, impersonation), GrpcServices.Ports.SECURE_ONLY);
        startTimer();
        if (certFiles == null) {
            scheduleRenewal();
        } else {
            watchCertFiles();
        }
        pluggedInWatch = setup.rootStore().watchPluggedIn(setup.ca().material(),
                next -> timer.execute(() -> pluggedInChanged(next)));
        long every = options.rootCheckInterval().toMillis();
        if (setup.ca().material().origin().kind() == CaMaterial.Kind.SELF_SIGNED && every > 0) {
            timer.scheduleWithFixedDelay(this::checkRoot, every, every, TimeUnit.MILLISECONDS);
        }
        CaMaterial m = setup.ca().material();
        return "CA " + m.origin() + " root=" + m.root().getSubjectX500Principal() + " notAfter="
                + m.root().getNotAfter().toInstant() + "; serving certificate dns=" + serving.dnsNames()
                + " notAfter=" + serving.certificate().getNotAfter().toInstant()
                + (certFiles == null ? "" : " from " + certFiles.certFile() + " (watched), client certificates checked against "
                        + certFiles.caCertFile())
                + (rule.isBlank() ? "" : "; JWT_RULE authenticator")
                + (workloadSigner instanceof KubernetesRa ra
                        ? "; RA mode: workload CSRs to the Kubernetes CSR API, signer " + ra.signerName() : "")
                + (signerServing == null ? "" : "; istiod's certificate and published root from signer "
                        + signerServing.signerName());
    }

    /** The trust bundle, authenticators and the files' watch; no CSR service, no CA timers. */
    private String startWithoutCa() {
        trustBundle = TrustBundle.of(publishedRoots(), meshPems());
        registerJwtAuthenticator();
        startTimer();
        watchCertFiles();
        return "CA disabled (ENABLE_CA_SERVER=false): no CSR service, no CA Secrets; serving certificate dns="
                + serving.dnsNames() + " notAfter=" + serving.certificate().getNotAfter().toInstant() + " from "
                + certFiles.certFile() + " (watched), root published and client certificates checked from "
                + certFiles.caCertFile() + (options.jwtRule().isBlank() ? "" : "; JWT_RULE authenticator");
    }

    private void registerJwtAuthenticator() {
        JwtAuthenticator.fromJwtRule(options.jwtRule(), () -> environment.mesh().getTrustDomain())
                .ifPresent(a -> {
                    jwt = a;
                    authenticators.register(a);
                });
    }

    /** One thread owns the trust bundle and the TLS swaps: timers and mesh changes alike. */
    private void startTimer() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("ca-timer").unstarted(r));
        environment.addMeshHandler(() -> timer.execute(this::meshChanged));
        timer.execute(this::meshChanged); // a mesh change between the first bundle and the handler
    }

    /**
     * istiod's custom TLS certificates (initIstiodCerts with hasCustomTLSCerts): its certificate
     * is read from {@code files} now, and again whenever they change, and client certificates
     * are checked against their CA file; the CA issues none. Call before {@link #start}.
     *
     * @throws io.meshpilot.security.ca.CaLoadException naming the file when it cannot be used
     */
    public void serveFromFiles(IstiodCertFiles files) {
        ServingCertificate loaded = files.load();
        this.certFiles = files;
        serving = loaded;
        servingTls.update(loaded, loaded.trust());
    }

    /** Reloads on every change of the files (cert-manager's renewals); a bad state is logged and the last good kept. */
    private void watchCertFiles() {
        try {
            certFilesWatch = new FileWatcher("istiod-tls-files", certFiles.files(), CERT_FILES_DEBOUNCE,
                    CERT_FILES_POLL, changed -> timer.execute(this::renewServing));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot watch " + certFiles.files() + ": " + e.getMessage(), e);
        }
    }

    /**
     * PILOT_CERT_PROVIDER=k8s.io/&lt;signer&gt;: istiod's certificate is requested from that
     * signer and its root is what is published; call before {@link #start}.
     */
    public void serveFrom(SignerServing signer) {
        this.signerServing = signer;
    }

    /**
     * The roots workloads are told to trust before MeshConfig's extra ones: the CA's, or the
     * serving signer's (as istiod's CA bundle under a k8s.io certificate provider).
     */
    private List<X509Certificate> publishedRoots() {
        if (certFiles != null) {
            // istiod's caBundleWatcher is fed from the files (initFileCertificateWatches): their CA
            // is what namespaces' istio-ca-root-cert and the webhooks' caBundle carry, CA on or off
            return serving.trust();
        }
        if (signerServing == null) {
            return setup.ca().material().roots();
        }
        try {
            return signerServing.publishedRoots();
        } catch (CsrRejectedException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** The root istiod publishes as root-cert.pem: the CA's, or the serving signer's. */
    public X509Certificate publishedRoot() {
        return publishedRoots().getFirst();
    }

    /** Where {@link #publishedRoot()} comes from, for the CA root API. */
    public String publishedRootSource() {
        if (certFiles != null) {
            return "file " + certFiles.caCertFile() + (setup == null ? " (ENABLE_CA_SERVER=false)" : "");
        }
        return signerServing == null ? material().origin().toString()
                : "signer " + signerServing.signerName() + " (meshConfig.caCertificates)";
    }

    /** RA mode: workload CSRs go to {@code signer}; call before {@link #start}. */
    public void signWorkloadsWith(CsrSigner signer) {
        this.workloadSigner = signer;
    }

    /** The CA expiry gauges (registered once the metrics registry is up). */
    public void registerMetrics() {
        if (setup == null) {
            return;
        }
        CaMetrics.expiryGauges(() -> setup.ca().material().root().getNotAfter().toInstant().getEpochSecond(),
                () -> setup.ca().material().signingCertificate().getNotAfter().toInstant().getEpochSecond());
    }

    /**
     * Called with each renewed serving certificate, before it is published: listeners that
     * present it (Helidon's TLS sockets) reload here. Runs on the CA timer thread.
     */
    public void addServingListener(Consumer<ServingCertificate> listener) {
        servingListeners.add(listener);
    }

    /**
     * Told after each change of the trust bundle (root rotation, MeshConfig caCertificates);
     * runs on the CA timer thread, so it must not block.
     */
    public void addTrustBundleListener(Runnable listener) {
        trustBundleListeners.add(listener);
    }

    private void trustBundleChanged() {
        for (Runnable l : trustBundleListeners) {
            try {
                l.run();
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "trust bundle listener failed: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public void close() {
        if (certFilesWatch != null) {
            try {
                certFilesWatch.close();
            } catch (Exception e) {
                LOG.log(Level.WARNING, "stopping the watch of istiod's certificate files: " + e.getMessage());
            }
        }
        if (pluggedInWatch != null) {
            try {
                pluggedInWatch.close();
            } catch (Exception e) {
                LOG.log(Level.WARNING, "stopping the plugged-in CA watch: " + e.getMessage());
            }
        }
        if (timer != null) {
            timer.shutdownNow();
        }
        if (jwt != null) {
            jwt.close();
        }
    }

    public CertificateAuthority ca() {
        return caSetup().ca();
    }

    public CaMaterial material() {
        return caSetup().ca().material();
    }

    private CaSetup caSetup() {
        if (setup == null) {
            throw new IllegalStateException("no CA: ENABLE_CA_SERVER=false");
        }
        return setup;
    }

    public ServingCertificate serving() {
        return serving;
    }

    public TrustBundle trustBundle() {
        return trustBundle;
    }

    /** Swappable TLS managers for the Netty transport's secure port. */
    public ServingTls servingTls() {
        return servingTls;
    }

    private List<String> meshPems() {
        return environment.mesh().getCaCertificatesList().stream()
                .filter(c -> c.hasPem()).map(c -> c.getPem()).toList();
    }

    private void meshChanged() {
        try {
            TrustBundle next = TrustBundle.of(publishedRoots(), meshPems());
            if (!next.certificates().equals(trustBundle.certificates())) {
                trustBundle = next; // what workloads are told to trust; the sockets keep trusting the CA roots
                LOG.log(Level.INFO, "trust bundle changed: " + next.certificates().size() + " roots"
                        + (next.problems().isEmpty() ? "" : " problems=" + next.problems()));
                trustBundleChanged();
                if (signerServing != null && certFiles == null) {
                    renewServing(); // as istiod: a new root of the signer, a new certificate from it
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "trust bundle update failed; the previous one stays in force: " + e.getMessage(), e);
        }
    }

    private void scheduleRenewal() {
        long delay = Math.max(Duration.between(Instant.now(), serving.renewAt()).toMillis(), 1000);
        schedule(delay);
    }

    /** One pending renewal at a time (a root rotation renews early and replaces it); timer thread only. */
    private void schedule(long delayMillis) {
        if (renewal != null) {
            renewal.cancel(false);
        }
        renewal = timer.schedule(this::renewServing, delayMillis, TimeUnit.MILLISECONDS);
    }

    /** istiod's own certificate, renewed before it expires (or read again from its files); open connections keep going. */
    void renewServing() {
        if (certFiles != null) {
            reloadCertFiles();
            return;
        }
        try {
            ServingCertificate next = signerServing != null
                    ? signerServing.issue(setup.names(), setup.servingTtl(), setup.ca().material().roots())
                    : ServingCertificate.issue(setup.ca(), setup.names(), setup.servingTtl(),
                            setup.ca().material().roots());
            applyTls(next);
            serving = next; // published once the sockets present it
            LOG.log(Level.INFO, "serving certificate renewed serial=" + serving.certificate().getSerialNumber().toString(16)
                    + " notAfter=" + serving.certificate().getNotAfter().toInstant());
        } catch (RuntimeException | CsrRejectedException e) {
            LOG.log(Level.ERROR, "serving certificate renewal failed (retrying in a minute): " + e.getMessage(), e);
            schedule(TimeUnit.MINUTES.toMillis(1));
            return;
        }
        scheduleRenewal();
    }

    private void reloadCertFiles() {
        try {
            ServingCertificate next = certFiles.load();
            if (next.chain().equals(serving.chain()) && next.trust().equals(serving.trust())) {
                return;
            }
            applyTls(next);
            serving = next;
            meshChanged(); // the files' CA is the published root: a new one reaches the bundle's listeners
            LOG.log(Level.INFO, "serving certificate reloaded from " + certFiles.certFile() + " serial="
                    + next.certificate().getSerialNumber().toString(16) + " notAfter="
                    + next.certificate().getNotAfter().toInstant());
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "serving certificate files not reloaded, the previous certificate stays in use: "
                    + e.getMessage());
        }
    }

    /** The self-signed root, rotated in its grace period with the same key; both roots stay trusted. */
    void checkRoot() {
        try {
            var rotated = setup.rootStore().checkRotation(setup.ca().material(), rotator, Instant.now());
            if (rotated.isPresent()) {
                setup.ca().update(rotated.get());
                trustBundle = TrustBundle.of(publishedRoots(), meshPems());
                trustBundleChanged();
                LOG.log(Level.WARNING, "self-signed root rotated: new notAfter="
                        + rotated.get().root().getNotAfter().toInstant() + "; the old root stays in the trust bundle");
                renewServing();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "root certificate check failed: " + e.getMessage(), e);
        }
    }

    /**
     * A changed plugged-in CA (istiod's cacerts watch): signing, the trust bundle and the
     * serving certificate move to it without a restart. Timer thread only.
     */
    void pluggedInChanged(CaMaterial next) {
        CaMaterial current = setup.ca().material();
        if (next.signingCertificate().equals(current.signingCertificate()) && next.chain().equals(current.chain())
                && next.roots().equals(current.roots())) {
            return;
        }
        setup.ca().update(next);
        trustBundle = TrustBundle.of(publishedRoots(), meshPems());
        LOG.log(Level.WARNING, "plugged-in CA changed in " + next.origin().dir() + ": now signing as "
                + next.signingCertificate().getSubjectX500Principal() + " until "
                + next.signingCertificate().getNotAfter().toInstant() + ", " + next.roots().size() + " roots trusted");
        renewServing();
    }

    /** New handshakes on the secure sockets use the current certificate and trust bundle. */
    private void applyTls(ServingCertificate cert) {
        servingTls.update(cert, cert.trust());
        for (var l : servingListeners) {
            l.accept(cert);
        }
    }
}
