package io.meshpilot.bootstrap;

import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.grpc.NettyDirectMemory;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.lifecycle.ServerState;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.model.Environment;
import io.meshpilot.model.HboneSend;
import io.meshpilot.monitoring.RegistryGeneration;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.webhook.WebhookRoutes;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place to read how MeshPilot starts: istiod's {@code NewServer()} and
 * {@code Server.Start()}. {@link #newServer} builds the components (docs/ARCHITECTURE.md) in
 * order, each concern in its own init class (CA, config, webhooks, discovery, registries;
 * everything that needs a Kubernetes client behind {@link Platform}), and appends the start
 * functions; {@link #start} binds the listeners and runs the start functions in order;
 * {@link #close} undoes it in reverse. Every step is timed by the {@link StartupRecorder}.
 *
 * <p>Nothing here is static: several servers can run in one JVM. Helidon MP runs one CDI
 * container per JVM, so one server at a time hosts the HTTP listeners ({@link Hosting#FULL});
 * others serve gRPC only (xDS and the CA).
 */
public final class PilotServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    /** Which listeners a server binds. */
    public enum Hosting {
        /** Every listener: Helidon MP's HTTP sockets and the gRPC ones. */
        FULL,
        /** The gRPC listeners only (a second server in a JVM whose Helidon host is taken). */
        GRPC_ONLY
    }

    private final Components components;
    private final ServerListeners listeners;
    /** Run in order by {@link #start()}, after the listeners are bound. */
    private final List<StartFunction> startFunctions;
    /** What to close on the way out, in reverse order of start. */
    private final List<AutoCloseable> closeables;

    private PilotServer(Components components, Hosting hosting, List<StartFunction> startFunctions,
                        List<AutoCloseable> closeables) {
        this.components = components;
        this.listeners = new ServerListeners(this, hosting, closeables);
        this.startFunctions = List.copyOf(startFunctions);
        this.closeables = closeables;
    }

    /**
     * istiod's NewServer(): every component built and connected, in istiod's order, and the start
     * functions appended; nothing listens and no config is loaded yet.
     *
     * @throws ComponentStartException naming the component that could not be built
     */
    public static PilotServer newServer(PilotArgs args, Hosting hosting) {
        StartupRecorder recorder = new StartupRecorder();
        Readiness readiness = new Readiness();
        ServerState state = new ServerState();
        GrpcServices grpcServices = new GrpcServices();
        Authenticators authenticators = new Authenticators();
        CredentialsController credentials = new CredentialsController();
        WebhookRoutes webhooks = new WebhookRoutes();
        List<AutoCloseable> closeables = new ArrayList<>();
        try {
            recorder.run(Component.ARGS, () -> checkArgs(args, hosting));
            Environment environment = recorder.build(Component.ENVIRONMENT, () -> {
                Environment e = new Environment(args.domainSuffix(), args.clusterId(),
                        args.features().traceSampling().percent());
                e.setMetadataExchange(args.features().metadataExchange());
                e.setStrictGatewayMerging(args.features().gatewayApi().strictGatewayMerging());
                e.setAmbientWaypoints(args.features().ambient().enabled() && args.features().ambient().waypoints());
                e.setHboneSend(HboneSend.of(args.features().ambient()));
                return new Built<>(e, "domainSuffix=" + e.domainSuffix() + " clusterId=" + e.clusterId());
            });
            Platform platform = recorder.build(Component.KUBE_CLIENT, () -> Platform.connect(args, closeables));
            var mesh = recorder.build(Component.MESH_WATCHERS,
                    () -> ConfigInit.meshWatchers(args, environment, platform, closeables));
            var certificates = recorder.build(Component.CA,
                    () -> CaInit.ca(args, environment, platform, authenticators, grpcServices, closeables));
            var configs = recorder.build(Component.CONFIG_STORES,
                    () -> ConfigInit.configController(args, environment, platform, readiness, credentials, closeables));
            recorder.run(Component.CONFIG_STORES, "config-validation", () -> WebhookInit.configValidation(configs, webhooks));
            var injector = recorder.build(Component.CONFIG_STORES, "sidecar-injector",
                    () -> WebhookInit.sidecarInjector(args, environment, platform, webhooks, closeables));
            // before the registries: they report to it
            var discovery = recorder.build(Component.DISCOVERY_SERVER, "discovery-init", () -> DiscoveryInit.discoveryServer(
                    args, environment, configs, grpcServices, authenticators, credentials, closeables));
            var registries = recorder.build(Component.SERVICE_REGISTRIES, () -> RegistryInit.serviceControllers(args,
                    platform, configs, discovery.server(), environment, readiness, credentials, closeables));
            recorder.run(Component.DISCOVERY_SERVER, discovery.server()::start);
            recorder.run(Component.DISCOVERY_SERVER, "registry-event-handlers",
                    () -> DiscoveryInit.pushHandlers(discovery, configs, environment, credentials));
            var kube = recorder.build(Component.KUBE_CLIENT, "kube-controllers", () -> platform.controllers(certificates,
                    configs, discovery.server(), registries.registries(), registries.remoteSecrets(), closeables));

            List<StartFunction> starts = new ArrayList<>();
            starts.add(startFunction("readiness-probes", () -> {
                readiness.register("started", state::started);
                readiness.register("not-shutting-down", () -> !state.draining());
                kube.probes().accept(readiness);
                return null;
            }));
            starts.addAll(kube.beforeConfigSync());
            starts.add(startFunction("config-sync", () -> {
                // the ServiceEntry registry is synced once the config is, now or (API server down) later
                configs.onSynced(registries.registries()::configSynced);
                configs.run(platform.syncTimeout());
                return null;
            }));
            starts.addAll(kube.afterConfigSync());
            starts.add(startFunction("first-push", () -> {
                discovery.server().firstPush();
                return null;
            }));
            starts.addAll(kube.afterFirstPush());
            starts.add(startFunction("metrics", () -> {
                // meters go into the registry the HTTP host's container set up (a new one per container)
                if (hosting == Hosting.FULL) {
                    RegistryGeneration.advance();
                }
                ServerMetrics.register(recorder);
                NettyDirectMemory.registerGauge();
                discovery.server().registerMetrics();
                registries.registries().registerMetrics();
                certificates.registerMetrics();
                return null;
            }));
            starts.add(startFunction("serving", () -> {
                state.markStarted(Instant.now());
                grpcServices.setServing(true);
                return null;
            }));
            ServerIdentity identity = new ServerIdentity(args.mode().label(), args.modeReason(), args.namespace(),
                    args.clusterId(), args.domainSuffix(), args.grpcTransportLabel());
            Components components = new Components(args, identity, recorder, readiness, state, grpcServices,
                    authenticators, credentials, environment, platform.client(), mesh.file(), mesh.configMap(),
                    certificates, configs, registries.registries(), registries.remoteSecrets(), discovery.server(),
                    injector, webhooks);
            return new PilotServer(components, hosting, starts, closeables);
        } catch (RuntimeException | Error e) {
            closeAll(closeables);
            throw e;
        }
    }

    private static String checkArgs(PilotArgs args, Hosting hosting) {
        for (String ignored : args.ignoredArguments()) {
            LOG.log(Level.WARNING, "unknown argument ignored (istiod accepts unknown flags): " + ignored);
        }
        args.features().traceSampling().warning().ifPresent(w -> LOG.log(Level.WARNING, w));
        args.features().gatewayApi().warnings().forEach(w -> LOG.log(Level.WARNING, w));
        if (hosting == Hosting.GRPC_ONLY && (args.grpcTransport() == GrpcTransportKind.HELIDON
                || args.listeners().grpc() == null)) {
            throw new ComponentStartException(Component.ARGS, "a gRPC-only server needs --grpcTransport netty and a "
                    + "--grpcAddr (Helidon's gRPC lives in the HTTP host)", null);
        }
        return "mode=" + args.mode().label() + " namespace=" + args.namespace() + " cluster=" + args.clusterId()
                + " domain=" + args.domainSuffix() + " grpcTransport=" + args.grpcTransportLabel()
                + (hosting == Hosting.GRPC_ONLY ? " hosting=grpc-only" : "");
    }

    private static StartFunction startFunction(String name, StartFunction.Step run) {
        return new StartFunction(Component.START_FUNCTIONS, name, run);
    }

    /**
     * istiod's Server.Start(): binds the listeners (component 8), then runs the start
     * functions (component 9) in order: the config stores load and deliver their events through
     * the handlers, registries sync, the first PushContext is built, and readiness turns on.
     *
     * @throws ComponentStartException naming what could not start
     * @throws InterruptedException    when interrupted while the config stores sync
     */
    public PilotServer start() throws InterruptedException {
        StartupRecorder recorder = components.recorder();
        listeners.startFunction().runTimed(recorder);
        Instant startAt = Instant.now();
        long t0 = System.nanoTime();
        for (StartFunction f : startFunctions) {
            f.runTimed(recorder);
        }
        recorder.completed(Component.START_FUNCTIONS, startAt, (System.nanoTime() - t0) / 1e6,
                "readiness probes=" + components.readiness().probeNames());
        LOG.log(Level.INFO, () -> "ready: started in "
                + Duration.between(recorder.createdAt(), components.state().readyAt()).toMillis() + " ms");
        return this;
    }

    /**
     * Readiness off, health NOT_SERVING, no new gRPC calls; then waits for running calls to
     * end. Returns true when they all ended before the deadline.
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        GrpcServices grpc = components.grpcServices();
        components.state().markDraining();
        grpc.setServing(false);
        grpc.activeCalls().startDraining();
        LOG.log(Level.INFO, "draining: readiness off, waiting up to " + timeout.toMillis() + " ms for "
                + grpc.activeCalls().active() + " gRPC call(s)");
        return grpc.activeCalls().awaitIdle(timeout);
    }

    /** Stops everything that started, in reverse order; safe to call more than once. */
    @Override
    public synchronized void close() {
        closeAll(closeables);
    }

    private static void closeAll(List<AutoCloseable> closeables) {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception | LinkageError e) {
                LOG.log(Level.WARNING, "stopping " + closeables.get(i) + " failed: " + e.getMessage());
            }
        }
        closeables.clear();
    }

    /** Every component this server built. */
    public Components components() {
        return components;
    }

    Servers servers() {
        return listeners.servers();
    }
}
