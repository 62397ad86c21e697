package io.meshpilot.security;

import io.helidon.common.tls.Tls;
import io.helidon.common.tls.TlsClientAuth;
import io.helidon.microprofile.server.ServerCdiExtension;
import io.meshpilot.bootstrap.BootstrapContext;
import io.meshpilot.bootstrap.Component;
import io.meshpilot.bootstrap.ComponentStartException;
import io.meshpilot.bootstrap.GrpcTransportKind;
import io.meshpilot.bootstrap.ListenerNames;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.bootstrap.StartupOrder;
import io.meshpilot.bootstrap.StartupRecorder;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.model.Environment;
import io.meshpilot.security.ca.CaMaterial;
import io.meshpilot.security.ca.CertificateAuthority;
import io.meshpilot.security.ca.SelfSignedRootRotator;
import io.meshpilot.security.jwt.JwtAuthenticator;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Component 4 (CA / RA): the CA made before the container ({@link CaSetup}), the CSR service
 * on the secure port, istiod's authenticators (client certificate, then JWT_RULE's token
 * authenticator), the trust bundle (CA roots plus MeshConfig caCertificates), and the
 * timers: istiod's serving certificate renewed half way through its life, the self-signed
 * root checked every CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL and rotated in its grace
 * period. New certificates and roots reach the secure sockets without closing connections.
 */
@ApplicationScoped
public class IstiodCertificates {
    private static final System.Logger LOG = System.getLogger(IstiodCertificates.class.getName());

    @Inject
    StartupRecorder recorder;

    @Inject
    GrpcServices grpcServices;

    @Inject
    Authenticators authenticators;

    @Inject
    Environment environment;

    @Inject
    PilotArgs args;

    @Inject
    BeanManager beanManager;

    private CaSetup setup;
    private volatile ServingCertificate serving;
    private volatile TrustBundle trustBundle;
    private ServingTls servingTls;
    private ScheduledExecutorService timer;
    private JwtAuthenticator jwt;
    private SelfSignedRootRotator rotator;
    private java.util.concurrent.ScheduledFuture<?> renewal;

    void start(@Observes @Priority(StartupOrder.CA) @Initialized(ApplicationScoped.class) Object event) {
        recorder.run(Component.CA, () -> {
            setup = BootstrapContext.current().ca();
            serving = setup.serving();
            trustBundle = TrustBundle.of(setup.ca().material().roots(), meshPems());
            // client certificates must chain to our CA's roots only, as istiod's peer verifier:
            // MeshConfig caCertificates are for workloads to trust, not callers to be trusted by
            servingTls = new ServingTls(serving, setup.ca().material().roots());
            rotator = new SelfSignedRootRotator(args.features().ca().selfSignedTtl(), args.features().ca().gracePercentile());
            String rule = args.features().jwtRule();
            try {
                JwtAuthenticator.fromJwtRule(rule, () -> environment.mesh().getTrustDomain())
                        .ifPresent(a -> {
                            jwt = a;
                            authenticators.register(a);
                        });
            } catch (IllegalArgumentException e) {
                throw new ComponentStartException(Component.CA, e.getMessage(), e);
            }
            grpcServices.register(new CertificateService(authenticators, setup::ca), GrpcServices.Ports.SECURE_ONLY);
            CaMetrics.expiryGauges(() -> setup.ca().material().root().getNotAfter().toInstant().getEpochSecond(),
                    () -> setup.ca().material().signingCertificate().getNotAfter().toInstant().getEpochSecond());
            // one thread owns the trust bundle and the TLS swaps: timers and mesh changes alike
            timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("ca-timer").unstarted(r));
            environment.addMeshHandler(() -> timer.execute(this::meshChanged));
            timer.execute(this::meshChanged); // a mesh change between the first bundle and the handler
            scheduleRenewal();
            long every = args.features().ca().rootCheckInterval().toMillis();
            if (setup.ca().material().origin().kind() == CaMaterial.Kind.SELF_SIGNED && every > 0) {
                timer.scheduleWithFixedDelay(this::checkRoot, every, every, TimeUnit.MILLISECONDS);
            }
            CaMaterial m = setup.ca().material();
            return "CA " + m.origin() + " root=" + m.root().getSubjectX500Principal() + " notAfter="
                    + m.root().getNotAfter().toInstant() + "; serving certificate dns=" + serving.dnsNames()
                    + " notAfter=" + serving.certificate().getNotAfter().toInstant()
                    + (rule.isBlank() ? "" : "; JWT_RULE authenticator");
        });
    }

    void stop(@Observes @BeforeDestroyed(ApplicationScoped.class) Object event) {
        if (timer != null) {
            timer.shutdownNow();
        }
        if (jwt != null) {
            jwt.close();
        }
    }

    public CertificateAuthority ca() {
        return setup.ca();
    }

    public CaMaterial material() {
        return setup.ca().material();
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
            TrustBundle next = TrustBundle.of(setup.ca().material().roots(), meshPems());
            if (!next.certificates().equals(trustBundle.certificates())) {
                trustBundle = next; // what workloads are told to trust; the sockets keep trusting the CA roots
                LOG.log(Level.INFO, "trust bundle changed: " + next.certificates().size() + " roots"
                        + (next.problems().isEmpty() ? "" : " problems=" + next.problems()));
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

    /** istiod's own certificate, renewed before it expires; open connections keep going. */
    void renewServing() {
        try {
            ServingCertificate next = ServingCertificate.issue(setup.ca(), setup.names(), setup.servingTtl(),
                    setup.ca().material().roots());
            applyTls(next);
            serving = next; // published once the sockets present it
            LOG.log(Level.INFO, "serving certificate renewed serial=" + serving.certificate().getSerialNumber().toString(16)
                    + " notAfter=" + serving.certificate().getNotAfter().toInstant());
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "serving certificate renewal failed (retrying in a minute): " + e.getMessage(), e);
            schedule(TimeUnit.MINUTES.toMillis(1));
            return;
        }
        scheduleRenewal();
    }

    /** The self-signed root, rotated in its grace period with the same key; both roots stay trusted. */
    void checkRoot() {
        try {
            var rotated = rotator.rotateAndSave(setup.ca().material(), setup.stateDir(), Instant.now());
            if (rotated.isPresent()) {
                setup.ca().update(rotated.get());
                trustBundle = TrustBundle.of(rotated.get().roots(), meshPems());
                LOG.log(Level.WARNING, "self-signed root rotated: new notAfter="
                        + rotated.get().root().getNotAfter().toInstant() + "; the old root stays in the trust bundle");
                renewServing();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "root certificate check failed: " + e.getMessage(), e);
        }
    }

    /** New handshakes on the secure sockets use the current certificate and trust bundle. */
    private void applyTls(ServingCertificate cert) {
        List<java.security.cert.X509Certificate> roots = setup.ca().material().roots();
        servingTls.update(cert, roots);
        Tls tls = Tls.builder()
                .privateKey(cert.privateKey())
                .privateKeyCertChain(cert.chain())
                .trust(roots)
                .clientAuth(TlsClientAuth.OPTIONAL)
                .endpointIdentificationAlgorithm("NONE")
                .build();
        ServerCdiExtension server = beanManager.getExtension(ServerCdiExtension.class);
        PilotArgs.Listeners l = args.listeners();
        if (l.secureGrpc() != null && args.grpcTransport() == GrpcTransportKind.HELIDON) {
            server.reloadTls(ListenerNames.GRPC_SECURE, tls);
        }
        if (l.https() != null) {
            server.reloadTls(ListenerNames.WEBHOOK, tls);
        }
    }
}
