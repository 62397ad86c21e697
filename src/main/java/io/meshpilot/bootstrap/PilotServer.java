package io.meshpilot.bootstrap;

import io.meshpilot.config.Config;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.features.ServerMode;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.SyncWaiter;
import io.meshpilot.security.kube.NamespaceController;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.lifecycle.ServerState;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.mesh.MeshConfigException;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.mesh.MeshWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.monitoring.RegistryGeneration;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.kube.DiscoverySelectors;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.kube.KubeJwtAuthenticator;
import io.meshpilot.security.kube.NodeAuthorizer;
import io.meshpilot.security.CaOptions;
import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.SignerServing;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.security.ra.KubernetesRa;
import io.meshpilot.security.ra.SignerRoots;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ca.CaLoadException;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.ca.BoundedBackoff;
import io.meshpilot.security.ca.KubeSecretCaRootStore;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.jwt.JwksCache;
import io.meshpilot.webhook.ValidationWebhook;
import io.meshpilot.webhook.WebhookConfigPatcher;
import io.meshpilot.webhook.WebhookRoutes;
import io.meshpilot.xds.DiscoveryServer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place to read how MeshPilot starts: istiod's {@code NewServer()} and
 * {@code Server.Start()}. {@link #newServer} builds the components of DESIGN section 3 in
 * order and connects them ({@link #initRegistryEventHandlers}); {@link #start} binds the
 * listeners and runs the start functions; {@link #close} undoes it in reverse. Components
 * know nothing of each other beyond what their constructors take; every cross-component
 * handler is registered here.
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

    private final PilotArgs args;
    private final Hosting hosting;
    private final StartupRecorder recorder = new StartupRecorder();
    private final Readiness readiness = new Readiness();
    private final ServerState state = new ServerState();
    private final GrpcServices grpcServices = new GrpcServices();
    private final Authenticators authenticators = new Authenticators();
    private final CredentialsController credentials = new CredentialsController();
    /** The webhooks the webhook listener (15017) serves. */
    private final WebhookRoutes webhooks = new WebhookRoutes();
    /** What to close on the way out, in reverse order of start. */
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private Environment environment;
    private KubeClient kubeClient;
    private io.meshpilot.kube.leaderelection.LeaderElection namespaceControllerElection;
    /** The status leader election (PILOT_ENABLE_STATUS or PILOT_ENABLE_ANALYSIS); null when off or embedded. */
    private io.meshpilot.kube.leaderelection.LeaderElection statusElection;
    private io.meshpilot.kube.leaderelection.LeaderElection validationControllerElection;
    private MeshWatcher meshWatcher;
    private MeshConfigMapWatcher meshConfigMap;
    private IstiodCertificates certificates;
    private ConfigController configs;
    private ServiceRegistries registries;
    private RemoteSecretController remoteSecrets;
    private DiscoveryServer discovery;
    private JwksCache jwks;
    private Servers servers;
    private HelidonHost.Running helidon;
    private io.meshpilot.inject.InjectWebhook injectWebhook;
    private io.meshpilot.inject.SidecarInjector sidecarInjector;

    private PilotServer(PilotArgs args, Hosting hosting) {
        this.args = args;
        this.hosting = hosting;
    }

    /**
     * istiod's NewServer(): every component built and connected, in DESIGN order; nothing
     * listens and no config is loaded yet.
     *
     * @throws ComponentStartException naming the component that could not be built
     */
    /** The cluster CA of the service account this server connects with (MESHPILOT_SERVICE_ACCOUNT_DIR moves it). */
    private java.nio.file.Path serviceAccountCa() {
        return args.kube() != null && args.kube().inCluster() != null ? args.kube().inCluster().caFile()
                : SignerRoots.SERVICE_ACCOUNT_CA;
    }

    public static PilotServer newServer(PilotArgs args, Hosting hosting) {
        PilotServer s = new PilotServer(args, hosting);
        try {
            s.recorder.run(Component.ARGS, s::initArgs);
            s.recorder.run(Component.ENVIRONMENT, s::initEnvironment);
            s.recorder.run(Component.KUBE_CLIENT, s::initKubeClient);
            s.recorder.run(Component.MESH_WATCHERS, s::initMeshWatchers);
            s.recorder.run(Component.CA, s::initCa);
            s.recorder.run(Component.CONFIG_STORES, s::initConfigController);
            s.initConfigValidation();
            s.initSidecarInjector();
            s.initDiscoveryServer(); // before the registries: they report to it
            s.recorder.run(Component.SERVICE_REGISTRIES, s::initServiceControllers);
            s.recorder.run(Component.DISCOVERY_SERVER, s.discovery::start);
            s.initRegistryEventHandlers();
            return s;
        } catch (RuntimeException | Error e) {
            s.close();
            throw e;
        }
    }

    private String initArgs() {
        for (String ignored : args.ignoredArguments()) {
            LOG.log(Level.WARNING, "unknown argument ignored (istiod accepts unknown flags): " + ignored);
        }
        if (hosting == Hosting.GRPC_ONLY && (args.grpcTransport() == GrpcTransportKind.HELIDON
                || args.listeners().grpc() == null)) {
            throw new ComponentStartException(Component.ARGS, "a gRPC-only server needs --grpcTransport netty and a "
                    + "--grpcAddr (Helidon's gRPC lives in the HTTP host)", null);
        }
        return "mode=" + args.mode().label() + " namespace=" + args.namespace() + " cluster=" + args.clusterId()
                + " domain=" + args.domainSuffix() + " grpcTransport=" + transportLabel()
                + (hosting == Hosting.GRPC_ONLY ? " hosting=grpc-only" : "");
    }

    private String initEnvironment() {
        environment = new Environment(args.domainSuffix(), args.clusterId());
        return "domainSuffix=" + environment.domainSuffix() + " clusterId=" + environment.clusterId();
    }

    /**
     * istiod's initKubeClient: the client every Kubernetes component shares, created early;
     * its informers are registered by the components built next and start with the start
     * functions. None in embedded mode.
     */
    private String initKubeClient() {
        if (args.kube() == null) {
            return "none (embedded mode)";
        }
        try {
            kubeClient = KubeClient.create(args.kube());
        } catch (java.io.IOException e) {
            throw new ComponentStartException(Component.KUBE_CLIENT, e.getMessage(), e);
        }
        closeables.add(kubeClient);
        return "apiServer=" + kubeClient.describe();
    }

    private String initMeshWatchers() throws java.io.IOException {
        meshWatcher = new MeshWatcher(environment, args.meshConfigFile(), args.networksConfigFile());
        closeables.add(meshWatcher);
        String detail;
        try {
            detail = meshWatcher.start();
        } catch (MeshConfigException e) {
            throw new ComponentStartException(Component.MESH_WATCHERS, "invalid mesh config " + e.getMessage(), e);
        }
        if (kubeClient != null && !java.nio.file.Files.exists(args.meshConfigFile())) {
            // istiod: a mesh config file wins; without one, the cluster's istio ConfigMap
            meshConfigMap = new MeshConfigMapWatcher(environment, kubeClient, args.namespace(), args.revision());
            closeables.add(meshConfigMap);
            detail = meshConfigMap.start();
        }
        return detail;
    }

    /**
     * istiod's initSidecarInjector: {@code /inject} on the webhook listener, with the settings of
     * the istio-sidecar-injector ConfigMap in Kubernetes mode (watched) or the chart's defaults.
     */
    private void initSidecarInjector() {
        java.util.function.Supplier<io.meshpilot.inject.SidecarInjector.Settings> settings =
                io.meshpilot.inject.SidecarInjector.Settings::defaults;
        java.util.function.Function<String, java.util.Map<String, String>> namespaceLabels = ns -> null;
        if (kubeClient != null) {
            var watcher = new io.meshpilot.inject.InjectorConfigMapWatcher(kubeClient, args.namespace(), args.revision());
            LOG.log(Level.INFO, "sidecar injector: " + watcher.start());
            settings = watcher;
            var namespaces = kubeClient.discoveryNamespaces().informer().getIndexer();
            namespaceLabels = ns -> {
                var n = namespaces.getByKey(ns);
                return n == null || n.getMetadata() == null ? null
                        : n.getMetadata().getLabels() == null ? java.util.Map.of() : n.getMetadata().getLabels();
            };
        }
        sidecarInjector = new io.meshpilot.inject.SidecarInjector(settings,
                environment::mesh, args.revision(), args.features().nativeSidecars(), namespaceLabels);
        injectWebhook = new io.meshpilot.inject.InjectWebhook(sidecarInjector);
        webhooks.addService(injectWebhook);
    }

    /** The CA exists before any listener: the TLS listeners are configured with its certificate. */
    private String initCa() {
        var f = args.features();
        // in a cluster the root is shared by the replicas through istiod's Secrets, and only there
        CaRootStore rootStore = kubeClient != null ? new KubeSecretCaRootStore(kubeClient, args.namespace(),
                BoundedBackoff.istiod(f.ca().secretTimeout()))
                : CaRootStore.directory(args.ca().stateDir());
        CaOptions options = new CaOptions(f.rootCaDir(), rootStore, args.ca().ecdsa(), f.ca().rsaKeySize(),
                f.ca().selfSignedTtl(), f.ca().rootCheckInterval(), f.ca().gracePercentile(),
                f.defaultWorkloadCertTtl(), f.maxWorkloadCertTtl(),
                ServingCertificate.istiodNames(args.namespace(), args.domainSuffix(), f.ca().customHosts(),
                        args.mode() == ServerMode.EMBEDDED), f.jwtRule());
        CaSetup setup;
        try {
            setup = CaSetup.create(options);
        } catch (CaLoadException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        certificates = new IstiodCertificates(setup, options, environment, authenticators, grpcServices);
        closeables.add(certificates);
        var kubeAuth = f.kubeAuth();
        if (kubeClient != null && !kubeAuth.trustedNodeAccounts().isEmpty()) {
            certificates.impersonationPolicy(new NodeAuthorizer(kubeClient.apiClient(), kubeAuth.trustedNodeAccounts()));
        }
        if (f.ra().kubernetesApi()) {
            if (kubeClient == null) {
                throw new ComponentStartException(Component.CA, "EXTERNAL_CA=" + f.ra().externalCa()
                        + " needs Kubernetes mode (--kubeconfig, or in a cluster)", null);
            }
            SignerRoots signerRoots = new SignerRoots(environment::mesh, List.of(SignerRoots.EXTERNAL_CA_ROOT,
                    serviceAccountCa()));
            try {
                certificates.signWorkloadsWith(new KubernetesRa(kubeClient.apiClient(), f.ra().k8sSigner(), setup::ca,
                        signerRoots, f.ra().signTimeout()));
            } catch (IllegalArgumentException e) {
                throw new ComponentStartException(Component.CA, e.getMessage(), e);
            }
            // istiod's initDNSCertsK8SRA: its own certificate from the named signer too
            f.ra().servingSigner().ifPresent(signer -> certificates.serveFrom(new SignerServing(signer,
                    new KubernetesRa(kubeClient.apiClient(), signer, setup::ca, signerRoots, f.ra().signTimeout()),
                    signerRoots)));
        } else if (f.ra().servingSigner().isPresent()) {
            throw new ComponentStartException(Component.CA, "PILOT_CERT_PROVIDER=" + f.ra().certProvider()
                    + " needs RA mode (EXTERNAL_CA=" + PilotFeatures.Ra.KUBERNETES_API + ")", null);
        }
        String started;
        try {
            started = certificates.start();
        } catch (IllegalArgumentException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        if (kubeClient == null) {
            return started;
        }
        // istiod's initAuthenticators: after the client-certificate and JWT_RULE ones, for
        // CreateCertificate and (XDS_AUTH) the xDS streams of the secure port alike
        authenticators.register(new KubeJwtAuthenticator(kubeClient.apiClient(), kubeAuth.jwtPolicy(),
                args.clusterId(), () -> environment.mesh().getTrustDomain(), KubeJwtAuthenticator.CACHE_TTL));
        return started + "; Kubernetes TokenReview authenticator JWT_POLICY=" + kubeAuth.jwtPolicy().envValue()
                + (kubeAuth.trustedNodeAccounts().isEmpty() ? ""
                        : " CA_TRUSTED_NODE_ACCOUNTS=" + kubeAuth.trustedNodeAccounts().accounts());
    }

    /**
     * istiod's discovery namespaces filter on the kube client: its selectors follow the mesh
     * config (file or ConfigMap), and every reader of the client sees the same selection.
     */
    private void watchDiscoverySelectors() {
        var filter = kubeClient.discoveryNamespaces();
        filter.setSelectors(DiscoverySelectors.of(environment.mesh()));
        environment.addMeshHandler(() -> filter.setSelectors(DiscoverySelectors.of(environment.mesh())));
    }

    /** istiod's initConfigController: the config source chosen from the mesh config and flags, and the credentials. */
    private String initConfigController() throws java.io.IOException {
        ConfigController.Sources sources;
        try {
            sources = ConfigController.Sources.choose(args.configDir(), args.configStateDir(),
                    environment.mesh().getConfigSourcesList().stream().map(c -> c.getAddress()).toList(),
                    kubeClient != null);
        } catch (IllegalArgumentException e) {
            throw new ComponentStartException(Component.CONFIG_STORES, e.getMessage(), e);
        }
        if (kubeClient != null) {
            watchDiscoverySelectors();
        }
        configs = new ConfigController(sources, readiness, kubeClient, args.features().enhancedResourceScoping());
        closeables.add(configs);
        String detail;
        try {
            detail = configs.start();
        } catch (java.io.IOException e) {
            throw new ComponentStartException(Component.CONFIG_STORES, e.getMessage(), e);
        }
        credentials.start(args.credentialsDir());
        closeables.add(credentials);
        return detail;
    }

    /**
     * istiod's initConfigValidation: {@code /validate} judges with the config stores' parser.
     * Served in every mode (istiod only with Kubernetes), so config can be checked before it
     * is applied anywhere.
     */
    private void initConfigValidation() {
        webhooks.add(new ValidationWebhook(configs.parser(), io.meshpilot.config.schema.Schemas.PILOT));
    }

    private void initDiscoveryServer() {
        // istiod's JwtKeyResolver, created with the discovery server: the key sets of
        // RequestAuthentication rules, fetched in the background and inlined by pushes
        jwks = new JwksCache(JwksCache.Options.defaults());
        environment.setJwksResolver(jwks);
        // Netty ends connections at the age itself; Helidon (chosen, or hosting the gRPC
        // multiplexed on the http port) has no such limit, so the xDS server ends its streams
        boolean helidonServesGrpc = args.grpcTransport() == GrpcTransportKind.HELIDON || args.listeners().grpc() == null;
        discovery = new DiscoveryServer(environment, configs, grpcServices, authenticators, credentials,
                new DiscoveryServer.Options(args.features(), helidonServesGrpc, args.keepalive().maxServerConnectionAge(),
                        args.clusterAliases()));
        closeables.add(discovery);
        closeables.add(jwks); // closed first: no key set change reaches a stopped discovery server
    }

    /** istiod's initServiceControllers: the registries --registries names, over the ServiceEntry registry. */
    private String initServiceControllers() {
        try {
            registries = new ServiceRegistries(new ServiceRegistries.Options(args.registries(), args.clusterId(),
                    args.namespace(), args.features().registry(), kubeClient),
                    configs.store(), discovery.updates(), environment, readiness);
            closeables.add(registries::close);
        } catch (ServiceRegistries.UnsupportedRegistryException e) {
            throw new ComponentStartException(Component.SERVICE_REGISTRIES, e.getMessage(), e);
        }
        if (registries.remoteClusters() == null) {
            return registries.describe();
        }
        // istiod's multicluster secret controller: remote clusters join (and leave) the aggregate
        // as their Secrets come and go; its informer starts with the local client's
        remoteSecrets = new RemoteSecretController(kubeClient, new RemoteSecretController.Options(
                args.clusterRegistriesNamespace(), args.clusterId(), args.kube().qps(), args.kube().burst()),
                registries.remoteClusters());
        closeables.add(remoteSecrets); // before the registries stop: no cluster arrives at a stopped aggregate
        return registries.describe() + "; " + remoteSecrets.describe();
    }

    /**
     * istiod's initRegistryEventHandlers, and the other handlers that cross components: every
     * way a change reaches the push path is registered here.
     */
    private void initRegistryEventHandlers() {
        // config -> full push naming the object; ServiceEntry, WorkloadEntry and WorkloadGroup
        // reach the push path through the ServiceEntry registry's service and endpoint updates
        configs.addPushHandler(event -> {
            Config c = event.current() != null ? event.current() : event.old();
            if (!ServiceRegistries.REGISTRY_KINDS.contains(c.gvk().kind())) {
                discovery.updates().configUpdate(PushRequest.full(TriggerReason.CONFIG, c.key()));
            }
        });
        // mesh config and networks -> full push (the CA follows the mesh's caCertificates itself)
        environment.addMeshHandler(() -> discovery.updates().configUpdate(PushRequest.full(TriggerReason.GLOBAL)));
        environment.addNetworksHandler(() -> discovery.updates().configUpdate(PushRequest.full(TriggerReason.NETWORKS)));
        // RequestAuthentication key sets fetched or changed after a push used others -> full push
        // (istiod's JwtKeyResolver.PushFunc, reason unknown)
        jwks.addChangeHandler(() -> discovery.updates().configUpdate(PushRequest.full(TriggerReason.UNKNOWN)));
        // gateway credentials -> SDS push to the proxies that use them
        credentials.addListener(discovery.updates()::credentialsUpdate);
    }

    /**
     * istiod's Server.Start(): binds the listeners (component 8), then runs the start
     * functions (component 9): the config stores load and deliver their events through the
     * handlers, registries sync, the first PushContext is built, and readiness turns on.
     *
     * @throws ComponentStartException naming what could not start
     * @throws InterruptedException    when interrupted while the config stores sync
     */
    public PilotServer start() throws InterruptedException {
        Instant serversAt = Instant.now();
        long t0 = System.nanoTime();
        servers = new Servers(args.listeners(), args.grpcTransport(), args.keepalive(), grpcServices,
                certificates.servingTls(), webhooks);
        closeables.add(servers::stopGrpc);
        servers.bindGrpc(hosting == Hosting.FULL);
        if (hosting == Hosting.FULL) {
            helidon = HelidonHost.start(this, HelidonConfig.fromArgs(args, certificates.serving()));
            closeables.add(helidon);
        }
        state.bound(servers.boundPorts(), servers.addresses());
        recorder.completed(Component.SERVERS, serversAt, (System.nanoTime() - t0) / 1e6,
                state.ports().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                        .collect(java.util.stream.Collectors.joining(" ")) + " grpcTransport=" + transportLabel());

        Instant startAt = Instant.now();
        long t1 = System.nanoTime();
        readiness.register("started", state::started);
        readiness.register("not-shutting-down", () -> !state.draining());
        if (kubeClient != null) {
            // istiod's kubeClient.RunAndWait: informers start last and are waited for, bounded;
            // readiness names each one still not synced
            readiness.registerGroup("kube-informer-synced", kubeClient::notSynced);
            if (remoteSecrets != null) {
                readiness.register("remote-secrets-synced", remoteSecrets::hasSynced);
            }
            initNamespaceController();
            initWebhookPatchers();
            kubeClient.runAndWait(args.kube().syncTimeout());
            LOG.log(Level.INFO, "leader election: " + namespaceControllerElection.start());
            LOG.log(Level.INFO, "leader election: " + validationControllerElection.start());
        }
        // the ServiceEntry registry is synced once the config is, now or (API server down) later
        configs.onSynced(registries::configSynced);
        configs.run(args.kube() == null ? java.time.Duration.ZERO : args.kube().syncTimeout());
        if (kubeClient != null) {
            awaitRegistriesSynced(startAt.plus(args.kube().syncTimeout()));
        }
        discovery.firstPush();
        if (kubeClient != null) {
            initStatusController();
        }
        registerMetrics();
        state.markStarted(Instant.now());
        grpcServices.setServing(true);
        recorder.completed(Component.START_FUNCTIONS, startAt, (System.nanoTime() - t1) / 1e6,
                "readiness probes=" + readiness.probeNames());
        LOG.log(Level.INFO, () -> "ready: started in " + Duration.between(recorder.createdAt(), state.readyAt()).toMillis()
                + " ms");
        return this;
    }

    /**
     * istiod's initNamespaceController: istio-ca-root-cert in every selected namespace, written
     * only by the replica holding the namespace-controller Lease. Its informer is registered
     * here, before the informers start; the election starts once they have synced.
     */
    private void initNamespaceController() {
        NamespaceController controller = new NamespaceController(kubeClient, () -> certificates.trustBundle().pem());
        certificates.addTrustBundleListener(controller::trustBundleChanged);
        namespaceControllerElection = election(io.meshpilot.kube.leaderelection.LeaderElection.NAMESPACE_CONTROLLER)
                .addDuty("namespace controller", controller::lead);
        closeables.add(namespaceControllerElection); // closed before the client it writes through
    }

    /**
     * One of istiod's elections in the istiod namespace, with istiod's timings and, with
     * PRIORITIZED_LEADER_ELECTION, the default revision preferred (istiod prioritises each
     * election this way).
     */
    private io.meshpilot.kube.leaderelection.LeaderElection election(String name) {
        return new io.meshpilot.kube.leaderelection.LeaderElection(kubeClient.apiClient(), args.namespace(), name,
                args.kube().identity(), io.meshpilot.kube.ElectionTimings.fromTtl(args.kube().leaderElectionTtl()),
                args.features().prioritizedLeaderElection()
                        ? new io.meshpilot.kube.leaderelection.RevisionPriority(args.revision(),
                                new io.meshpilot.kube.leaderelection.DefaultRevision(kubeClient.apiClient()))
                        : null);
    }

    /**
     * istiod's status controller: the leader of {@code istio-status-leader} writes the
     * Reconciled condition, observedGeneration and validation messages of the cluster's Istio
     * objects. Started once the first push exists, since it reports on the pushes.
     */
    private void initStatusController() {
        var settings = args.features().status();
        var store = configs.clusterStore();
        if (!settings.enabled() || store.isEmpty()) {
            return;
        }
        io.meshpilot.status.StatusWriter writer = new io.meshpilot.status.StatusWriter(store.get(),
                configs.schemas().all(), discovery::status, settings, statusWritesPerPass(settings));
        statusElection = election(io.meshpilot.kube.leaderelection.LeaderElection.STATUS_CONTROLLER)
                .addDuty("status writer", writer::lead);
        closeables.add(statusElection);
        LOG.log(Level.INFO, "leader election: " + statusElection.start());
    }

    /**
     * Status writes go through the one throttled client (istiod gives them a client of their
     * own): a pass may use half of what --kubernetesApiQPS allows over an interval.
     */
    private int statusWritesPerPass(io.meshpilot.features.PilotFeatures.Status settings) {
        double perInterval = args.kube().qps() * settings.updateInterval().toNanos() / 1e9;
        return (int) Math.max(1, Math.floor(perInterval / 2));
    }

    /**
     * istiod's validation controller and injection webhook patcher: the CA root into the
     * caBundle of this revision's webhook configurations, and the validating ones switched to
     * failurePolicy Fail once the webhook is seen refusing. The validating ones are patched by
     * the holder of the validation-controller Lease; the injection ones by every replica (istiod:
     * they all patch the same root in).
     */
    private void initWebhookPatchers() {
        java.util.function.Supplier<String> root = () -> certificates.trustBundle().pem();
        WebhookConfigPatcher validation = WebhookConfigPatcher.validating(kubeClient, args.namespace(), args.revision(),
                root);
        WebhookConfigPatcher injection = WebhookConfigPatcher.injection(kubeClient, args.namespace(), args.revision(),
                root);
        certificates.addTrustBundleListener(validation::caBundleChanged);
        certificates.addTrustBundleListener(injection::caBundleChanged);
        validationControllerElection = election(io.meshpilot.kube.leaderelection.LeaderElection.VALIDATION_CONTROLLER)
                .addDuty("validation controller", validation::lead);
        closeables.add(validationControllerElection);
        closeables.add(injection.lead());
    }

    /**
     * istiod's waitForCacheSync: the informers having listed is not enough, the registries must
     * also have converted what they listed (the Kubernetes registry does it on its own queue),
     * else the first push and the first proxies get services without their endpoints. Bounded
     * by the same deadline as the informers' wait: with the API server down the server starts
     * not ready, as there.
     */
    private void awaitRegistriesSynced(Instant deadline) throws InterruptedException {
        if (remoteSecrets != null) { // first: the remote clusters of the Secrets there join the registries
            SyncWaiter.await(remoteSecrets.synced(), Duration.between(Instant.now(), deadline));
        }
        SyncWaiter.await(registries.aggregate().synced(), Duration.between(Instant.now(), deadline));
    }

    /** Meters go into the registry the HTTP host's container set up (a new one per container). */
    private void registerMetrics() {
        if (hosting == Hosting.FULL) {
            RegistryGeneration.advance();
        }
        ServerMetrics.register(recorder);
        discovery.registerMetrics();
        registries.registerMetrics();
        certificates.registerMetrics();
    }

    /**
     * Readiness off, health NOT_SERVING, no new gRPC calls; then waits for running calls to
     * end. Returns true when they all ended before the deadline.
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        state.markDraining();
        grpcServices.setServing(false);
        grpcServices.activeCalls().startDraining();
        LOG.log(Level.INFO, "draining: readiness off, waiting up to " + timeout.toMillis() + " ms for "
                + grpcServices.activeCalls().active() + " gRPC call(s)");
        return grpcServices.activeCalls().awaitIdle(timeout);
    }

    /** Stops everything that started, in reverse order; safe to call more than once. */
    @Override
    public synchronized void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception | LinkageError e) {
                LOG.log(Level.WARNING, "stopping " + closeables.get(i) + " failed: " + e.getMessage());
            }
        }
        closeables.clear();
    }

    private String transportLabel() {
        return args.grpcTransport().name().toLowerCase(java.util.Locale.ROOT);
    }

    public PilotArgs args() {
        return args;
    }

    public ServerIdentity identity() {
        return new ServerIdentity(args.mode().label(), args.modeReason(), args.namespace(), args.clusterId(),
                args.domainSuffix(), transportLabel());
    }

    public StartupRecorder recorder() {
        return recorder;
    }

    public Readiness readiness() {
        return readiness;
    }

    public ServerState state() {
        return state;
    }

    public GrpcServices grpcServices() {
        return grpcServices;
    }

    public Authenticators authenticators() {
        return authenticators;
    }

    public CredentialsController credentials() {
        return credentials;
    }

    public Environment environment() {
        return environment;
    }

    /** The Kubernetes client; null in embedded mode. */
    public KubeClient kubeClient() {
        return kubeClient;
    }

    /** The mesh ConfigMap watcher: Kubernetes mode without a --meshConfig file; else null. */
    public MeshConfigMapWatcher meshConfigMap() {
        return meshConfigMap;
    }

    public MeshWatcher meshWatcher() {
        return meshWatcher;
    }

    public IstiodCertificates certificates() {
        return certificates;
    }

    public ConfigController configs() {
        return configs;
    }

    public ServiceRegistries registries() {
        return registries;
    }

    /** The remote Secrets of other clusters: Kubernetes mode with the Kubernetes registry; else null. */
    public RemoteSecretController remoteSecrets() {
        return remoteSecrets;
    }

    public DiscoveryServer discovery() {
        return discovery;
    }

    /** The sidecar injector behind {@code /inject}. */
    public io.meshpilot.inject.SidecarInjector sidecarInjector() {
        return sidecarInjector;
    }

    /** The webhooks on the webhook listener; add one before {@link #start()}. */
    public WebhookRoutes webhooks() {
        return webhooks;
    }

    Servers servers() {
        return servers;
    }
}
