package io.meshpilot.bootstrap;

import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.monitoring.MeterRegistration;
import io.helidon.common.tls.Tls;
import io.helidon.common.tls.TlsClientAuth;
import io.helidon.config.mp.MpConfigSources;
import io.helidon.microprofile.server.Server;
import io.helidon.microprofile.server.ServerCdiExtension;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.lifecycle.HelidonPhase;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.lifecycle.ServerState;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.mesh.MeshWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.xds.DiscoveryServer;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.CDI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;

/**
 * The HTTP host: Helidon MP's container, which serves the JAX-RS admin API, probes, metrics
 * and OpenAPI on the http, monitoring and webhook sockets (and gRPC when Helidon serves it).
 * Helidon MP runs one container per JVM, so one {@link PilotServer} at a time is hosted; its
 * components are what the resources inject (the producers below). The observer is the only
 * start-up step that must run inside the container: just before Helidon binds its sockets.
 */
@ApplicationScoped
public class HelidonHost {
    private static final AtomicReference<PilotServer> HOSTED = new AtomicReference<>();

    /** A running container; closing it stops Helidon and frees the host for another server. */
    record Running(PilotServer server, Server helidon) implements AutoCloseable {
        @Override
        public void close() {
            try {
                // the container's close includes the metrics registry's
                MeterRegistration.whileClosing(helidon::stop);
            } finally {
                HOSTED.compareAndSet(server, null);
            }
        }
    }

    /**
     * Starts Helidon MP with the listeners' config (derived from the flags, above MP's own
     * sources) hosting {@code server}.
     *
     * @throws IllegalStateException when another server in this JVM is hosted already
     */
    static Running start(PilotServer server, Map<String, String> listenerConfig) {
        if (!HOSTED.compareAndSet(null, server)) {
            throw new IllegalStateException("servers: Helidon MP hosts the HTTP listeners of one server per JVM, and "
                    + "another server here has them; start this one gRPC-only");
        }
        try {
            Config config = ConfigProviderResolver.instance().getBuilder()
                    .withSources(MpConfigSources.create("meshpilot-flags", listenerConfig))
                    .addDefaultSources()
                    .addDiscoveredSources()
                    .addDiscoveredConverters()
                    .build();
            Server helidon = Server.builder().config(config).build();
            helidon.start();
            return new Running(server, helidon);
        } catch (RuntimeException | Error e) {
            closeContainerQuietly();
            HOSTED.compareAndSet(server, null);
            throw e;
        }
    }

    private static void closeContainerQuietly() {
        try {
            if (CDI.current() instanceof AutoCloseable c) {
                MeterRegistration.whileClosing(() -> {
                    try {
                        c.close();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
        } catch (Exception | LinkageError ignored) {
            // no container was started, or it is already closed
        }
    }

    private static PilotServer hosted() {
        PilotServer s = HOSTED.get();
        if (s == null) {
            throw new IllegalStateException("the Helidon container was not started through PilotServer");
        }
        return s;
    }

    void beforeBind(@Observes @Priority(HelidonPhase.BEFORE_BIND) @Initialized(ApplicationScoped.class) Object event,
                    BeanManager beanManager) {
        PilotServer s = hosted();
        ServerCdiExtension helidon = beanManager.getExtension(ServerCdiExtension.class);
        s.servers().prepareHelidon(helidon);
        // renewed certificates reach Helidon's TLS sockets without closing connections
        Listeners l = s.components().args().listeners();
        boolean helidonSecureGrpc = l.secureGrpc() != null && s.components().args().grpcTransport() == GrpcTransportKind.HELIDON;
        s.components().certificates().addServingListener(cert -> {
            Tls tls = tls(cert);
            if (helidonSecureGrpc) {
                helidon.reloadTls(ListenerNames.GRPC_SECURE, tls);
            }
            if (l.https() != null) {
                helidon.reloadTls(ListenerNames.WEBHOOK, tls);
            }
        });
    }

    private static Tls tls(ServingCertificate cert) {
        return Tls.builder()
                .privateKey(cert.privateKey())
                .privateKeyCertChain(cert.chain())
                .trust(cert.trust())
                .clientAuth(TlsClientAuth.OPTIONAL)
                .endpointIdentificationAlgorithm("NONE")
                .build();
    }

    @Produces
    Listeners listeners() {
        return hosted().components().args().listeners();
    }

    @Produces
    SidecarInjector sidecarInjector() {
        return hosted().components().sidecarInjector();
    }

    @Produces
    PilotFeatures features() {
        return hosted().components().args().features();
    }

    @Produces
    ServerIdentity identity() {
        return hosted().components().identity();
    }

    @Produces
    ServerState state() {
        return hosted().components().state();
    }

    @Produces
    StartupRecorder recorder() {
        return hosted().components().recorder();
    }

    @Produces
    Readiness readiness() {
        return hosted().components().readiness();
    }

    @Produces
    Environment environment() {
        return hosted().components().environment();
    }

    @Produces
    MeshWatcher meshWatcher() {
        return hosted().components().meshWatcher();
    }

    @Produces
    IstiodCertificates certificates() {
        return hosted().components().certificates();
    }

    @Produces
    Authenticators authenticators() {
        return hosted().components().authenticators();
    }

    @Produces
    CredentialsController credentials() {
        return hosted().components().credentials();
    }

    @Produces
    ConfigController configs() {
        return hosted().components().configs();
    }

    @Produces
    ServiceRegistries registries() {
        return hosted().components().registries();
    }

    @Produces
    DiscoveryServer discovery() {
        return hosted().components().discovery();
    }
}
