package io.meshpilot.config.controller;

import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigChanges;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.ConfigRevision;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.config.file.FileConfigSource;
import io.meshpilot.config.kube.CrdConfigStore;
import io.meshpilot.config.kube.gateway.GatewayApiController;
import io.meshpilot.config.kube.ingress.IngressController;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.SyncWaiter;
import io.meshpilot.config.store.AggregateConfigStore;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStoreController;
import io.meshpilot.config.store.DurableConfigStore;
import io.meshpilot.config.store.WritableConfigStore;
import io.meshpilot.monitoring.IstioCounter;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Component 5, the config stores (istiod's initConfigController): the --configDir file
 * source (read-only, watched) and the writable store of REST writes (kept in
 * --configStateDir, loaded here, before readiness), behind the aggregate cache
 * that is the Environment's config store. Changes that need a push (see
 * {@link ConfigChanges}) go to the push handlers; the others are only counted.
 */
public final class ConfigController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ConfigController.class.getName());
    /**
     * Ours, named as Helidon named it when it was a Helidon counter (with {@code _total}), so
     * queries keep working; labels kind, event (add, update, delete) and push (true, false).
     */
    static final IstioCounter EVENTS = IstioCounter.of("meshpilot_config_events_total", List.of("kind", "event", "push"),
            "Config store events by kind, event and whether they need a push.");

    /**
     * Where config comes from.
     *
     * @param configDir      --configDir (or a mesh config {@code fs://} source): watched Istio
     *                       YAML, read-only; null for none
     * @param configStateDir --configStateDir: where objects written over REST are kept (embedded)
     * @param crds           Istio CRDs of the cluster (Kubernetes mode, or a {@code k8s://}
     *                       source): watched, and where REST writes go
     */
    public record Sources(Path configDir, Path configStateDir, boolean crds) {

        /**
         * istiod's choice of config source (initConfigController): the mesh config's
         * {@code configSources} when it lists any, else the Kubernetes CRDs when a cluster is
         * configured, with --configDir beside them when given. A source this build cannot
         * read fails start-up naming it, never silently.
         *
         * @param kubernetes whether a Kubernetes cluster is configured
         * @throws IllegalArgumentException with one line naming the unsupported source
         */
        public static Sources choose(Path configDir, Path configStateDir,
                                     List<String> meshConfigSources, boolean kubernetes) {
            if (!meshConfigSources.isEmpty()) {
                Path dir = null;
                boolean crds = false;
                for (String address : meshConfigSources) {
                    if (address.startsWith("fs://")) {
                        if (dir != null) {
                            throw new IllegalArgumentException("mesh config configSources: more than one fs:// source ("
                                    + dir + ", " + address + "); this build reads one directory");
                        }
                        dir = Path.of(address.substring("fs://".length()));
                    } else if (address.startsWith("k8s://")) {
                        if (!kubernetes) {
                            throw new IllegalArgumentException("mesh config configSources " + address
                                    + ": no Kubernetes cluster is configured (no --kubeconfig, no KUBECONFIG, not in a pod)");
                        }
                        crds = true;
                    } else {
                        throw new IllegalArgumentException("mesh config configSources " + address
                                + ": unsupported config source (this build reads fs:// directories and k8s://)");
                    }
                }
                if (configDir != null && !configDir.equals(dir)) {
                    LOG.log(Level.WARNING, "mesh config configSources decide where config comes from (as in istiod): "
                            + (dir == null ? "no directory" : dir) + " is read, --configDir " + configDir + " is not");
                }
                return new Sources(dir, configStateDir, crds);
            }
            return new Sources(configDir, configStateDir, kubernetes);
        }
    }

    private final Sources sources;
    private final Readiness readiness;
    private final Schemas schemas = Schemas.PILOT;
    private final ConfigParser parser = new ConfigParser(schemas);
    private final List<Consumer<ConfigEvent>> pushHandlers = new CopyOnWriteArrayList<>();
    private volatile WritableConfigStore writable;
    private volatile FileConfigSource files;
    private volatile AggregateConfigStore aggregate;
    private volatile boolean synced;
    private volatile boolean eventsDelivered;
    private volatile boolean closed;
    private volatile Thread lateSync;
    private final List<Runnable> syncedHandlers = new CopyOnWriteArrayList<>();
    /** Keys whose shadowing was logged; a key leaves when only one store holds it again. */
    private final Set<ConfigKey> shadowLogged = ConcurrentHashMap.newKeySet();
    static final Duration SYNC_TIMEOUT = Duration.ofSeconds(60);
    /** How long the start functions wait, by default, for the kinds found in the CRDs to be listed. */
    static final Duration CRD_FOLLOW_UP = Duration.ofSeconds(10);

    private final KubeClient kubeClient;
    private final boolean scopedByDiscoverySelectors;
    private final ConfigRevision revision;
    private volatile IngressController ingress;
    private volatile GatewayApiController gatewayApi;

    /** @param kubeClient the cluster's client when {@code sources} has CRDs; else null */
    public ConfigController(Sources sources, Readiness readiness, KubeClient kubeClient) {
        this(sources, readiness, kubeClient, false, ConfigRevision.ANY);
    }

    /**
     * @param kubeClient                 the cluster's client when {@code sources} has CRDs; else null
     * @param scopedByDiscoverySelectors ENABLE_ENHANCED_RESOURCE_SCOPING: CRD objects are served only
     *                                   from the namespaces the client's discovery filter selects
     *                                   (files from --configDir are never filtered, as istiod's)
     * @param revision                   which CRD objects are this control plane's by their
     *                                   {@code istio.io/rev} label (files are never filtered, as istiod's)
     */
    public ConfigController(Sources sources, Readiness readiness, KubeClient kubeClient,
                            boolean scopedByDiscoverySelectors, ConfigRevision revision) {
        if (sources.crds() && kubeClient == null) {
            throw new IllegalArgumentException("config from Kubernetes CRDs needs a Kubernetes client");
        }
        this.sources = sources;
        this.readiness = readiness;
        this.kubeClient = kubeClient;
        this.scopedByDiscoverySelectors = scopedByDiscoverySelectors;
        this.revision = revision;
    }

    public ConfigController(Sources sources, Readiness readiness) {
        this(sources, readiness, null);
    }

    /**
     * Opens the stores (the writable one restores what was kept) without delivering events
     * yet: handlers register first, then {@link #run} loads. Returns what the start-up log says.
     *
     * @throws java.io.IOException when --configStateDir cannot be used
     */
    public String start() throws IOException {
        List<ConfigStoreController> stores = new ArrayList<>();
        if (sources.configDir() != null) {
            // a directory that cannot be read is reported by the source and loaded once it can be,
            // as istiod's file monitor goes on without it
            files = new FileConfigSource(sources.configDir(), parser, schemas.all());
            stores.add(files);
        }
        writable = openWritable();
        for (DocumentError e : writable.errors()) {
            LOG.log(Level.WARNING, "config state skipped: " + e);
        }
        stores.add(writable);
        if (ingress != null) {
            stores.add(ingress.store()); // after the cluster's own objects: an object of that name there wins
        }
        if (gatewayApi != null) {
            stores.add(gatewayApi.store());
        }
        aggregate = new AggregateConfigStore(stores, writable);
        for (Schema s : schemas.all()) {
            aggregate.registerEventHandler(s.kind(), this::onEvent);
        }
        // an API server that was down at start syncs later: the probe asks again
        readiness.register("config-synced", () -> synced || (eventsDelivered && aggregate.hasSynced()));
        return "configDir=" + (files == null ? "(none)" : files.root()) + " writable=" + writable.describe()
                + " restored=" + schemas.all().stream().mapToInt(s -> writable.list(s.kind(), null).size()).sum()
                + " skipped=" + writable.errors().size() + " kinds=" + schemas.all().size()
                + " (stores run with the start functions, after every handler is registered)";
    }

    /**
     * Serves the Gateways and VirtualServices {@code controller} converts from Kubernetes
     * Ingresses beside the other stores (istiod's initConfigController wraps its ingress
     * controller into the config stores the same way). Before {@link #start}.
     */
    public void serveIngress(IngressController controller) {
        if (aggregate != null) {
            throw new IllegalStateException("the config stores are already open");
        }
        this.ingress = controller;
    }

    /**
     * Serves the Gateways, VirtualServices and DestinationRules {@code controller} converts from
     * the Kubernetes Gateway API beside the other stores (istiod's initConfigController adds its
     * Gateway API controller to the config stores the same way). Before {@link #start}.
     */
    public void serveGatewayApi(GatewayApiController controller) {
        if (aggregate != null) {
            throw new IllegalStateException("the config stores are already open");
        }
        this.gatewayApi = controller;
    }

    /** The Gateway API controller whose config is served, if any (its status writer runs on the leader). */
    public Optional<GatewayApiController> gatewayApi() {
        return Optional.ofNullable(gatewayApi);
    }

    /** The Ingress controller whose config is served, if any (its status writer runs on the leader). */
    public Optional<IngressController> ingress() {
        return Optional.ofNullable(ingress);
    }

    /**
     * The store REST writes go to. Embedded it keeps them in --configStateDir; with Kubernetes
     * CRDs the API server holds them, and the same store serves the cluster's config.
     */
    private WritableConfigStore openWritable() throws IOException {
        if (sources.crds()) {
            return new CrdConfigStore(kubeClient, schemas, parser,
                    scopedByDiscoverySelectors ? kubeClient.discoveryNamespaces() : null, revision);
        }
        try {
            return DurableConfigStore.open(sources.configStateDir(), parser, schemas.all());
        } catch (IOException | RuntimeException e) {
            throw new IOException("cannot use --configStateDir " + sources.configStateDir() + ": " + e.getMessage(), e);
        }
    }

    /**
     * Start function: load and start delivering events, once the registries and the
     * DiscoveryServer registered their handlers (istiod runs its controllers last, too), then
     * wait, bounded, until the initial load went through every handler.
     */
    public void run() throws InterruptedException {
        run(CRD_FOLLOW_UP);
    }

    /** As {@link #run()}, waiting at most {@code crdFollowUp} for the kinds found in the CRDs to list. */
    public void run(Duration crdFollowUp) throws InterruptedException {
        long t0 = System.nanoTime();
        aggregate.run();
        // the cluster's kinds are known once the CRDs are listed, and their objects follow: wait,
        // bounded, until that went through (the Kubernetes client already waited for the API
        // server itself; if it is down, readiness keeps asking)
        long deadline = System.nanoTime() + SYNC_TIMEOUT.toNanos();
        SyncWaiter.await(aggregate.synced(), crdFollowUp.compareTo(SYNC_TIMEOUT) < 0 ? crdFollowUp : SYNC_TIMEOUT);
        boolean delivered = aggregate.awaitEventsDelivered(Math.max(1, deadline - System.nanoTime()),
                TimeUnit.NANOSECONDS);
        eventsDelivered = delivered;
        synced = delivered && aggregate.hasSynced();
        int count = schemas.all().stream().mapToInt(s -> aggregate.list(s.kind(), null).size()).sum();
        LOG.log(synced ? Level.INFO : Level.WARNING, String.format("config stores running: configs=%d rejected=%d "
                + "synced=%s in %.1f ms", count, errors().size(), synced, (System.nanoTime() - t0) / 1e6));
        if (synced) {
            syncedHandlers.forEach(Runnable::run);
        } else {
            // an API server that was down at start: the sync completes later, and those who
            // wait for it (the ServiceEntry registry's readiness) are told then
            lateSync = Thread.ofVirtual().name("config-sync-wait").start(this::awaitLateSync);
        }
    }

    private void awaitLateSync() {
        try {
            aggregate.synced().get(); // woken by the stores' signal; the server's close interrupts it
            while (!closed) {
                if (aggregate.awaitEventsDelivered(SYNC_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    eventsDelivered = true;
                    synced = true;
                    LOG.log(Level.INFO, "config stores synced (late): configs=" + schemas.all().stream()
                            .mapToInt(s -> aggregate.list(s.kind(), null).size()).sum());
                    syncedHandlers.forEach(Runnable::run);
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            LOG.log(Level.ERROR, "config stores never synced: " + e.getCause());
        }
    }

    /** Runs {@code handler} once the initial config went through every handler (at once if it has). */
    public void onSynced(Runnable handler) {
        syncedHandlers.add(handler);
    }

    /** Whether the initial config went through every handler. */
    public boolean synced() {
        return synced;
    }

    private void onEvent(ConfigEvent e) {
        Config c = e.current() != null ? e.current() : e.old();
        logShadowing(c.key());
        boolean push = ConfigChanges.needsPush(e);
        EVENTS.increment(List.of(c.gvk().kind(), e.type().name().toLowerCase(Locale.ROOT), Boolean.toString(push)));
        LOG.log(Level.DEBUG, () -> "config event=" + e.type() + " config=" + c.key() + " push=" + push);
        if (push) {
            for (Consumer<ConfigEvent> h : pushHandlers) {
                try {
                    h.accept(e);
                } catch (RuntimeException ex) {
                    LOG.log(Level.ERROR, "push handler failed config=" + c.key(), ex);
                }
            }
        }
    }

    /** Called for every change that needs a push. */
    public void addPushHandler(Consumer<ConfigEvent> handler) {
        pushHandlers.add(handler);
    }

    public void removePushHandler(Consumer<ConfigEvent> handler) {
        pushHandlers.remove(handler);
    }

    /** The aggregate cache: what every reader uses. */
    public ConfigStoreController store() {
        return aggregate;
    }

    public Schemas schemas() {
        return schemas;
    }

    public ConfigParser parser() {
        return parser;
    }

    /** The --configDir source, or null when there is none. */
    public FileConfigSource files() {
        return files;
    }

    /** Logs when a file starts or stops hiding an object written over the API. */
    private void logShadowing(ConfigKey key) {
        if (files == null) {
            return;
        }
        boolean both = files.get(key.kind(), key.namespace(), key.name()).isPresent()
                && writable.get(key.kind(), key.namespace(), key.name()).isPresent();
        if (both && shadowLogged.add(key)) {
            LOG.log(Level.WARNING, "config " + key + " is defined by file " + files.sourceOf(key).orElse("?")
                    + " and was written over the API: the file's copy is served, the API's is hidden");
        } else if (!both && shadowLogged.remove(key)) {
            LOG.log(Level.INFO, "config " + key + " is no longer defined twice (file and API)");
        }
    }

    /**
     * What is not served, with reasons: documents of --configDir rejected, paths of it that
     * cannot be read, kept objects of --configStateDir that could not be restored, objects
     * written over the API that a file hides (both sources named), and the parts of served
     * Kubernetes Ingresses and Gateway API objects that could not be converted.
     */
    public List<DocumentError> errors() {
        List<DocumentError> state = new ArrayList<>(writable == null ? List.of() : writable.errors());
        if (ingress != null) {
            state.addAll(ingress.errors());
        }
        if (gatewayApi != null) {
            state.addAll(gatewayApi.errors());
        }
        if (files == null) {
            return state;
        }
        List<DocumentError> out = new ArrayList<>(files.errors());
        out.addAll(state);
        for (AggregateConfigStore.Shadowed s : aggregate.shadowed()) {
            Config hidden = s.hidden();
            out.add(new DocumentError(files.sourceOf(hidden.key()).orElse(""), 0, 0, hidden.gvk().kind(),
                    hidden.namespace(), hidden.name(), "", "this file defines the same object as one written over the API"
                    + " (resourceVersion " + hidden.resourceVersion() + "): the file's copy is served, the API's is hidden"
                    + " until the file no longer defines it"));
        }
        return out;
    }

    /** Warnings about config that loaded (from files): fields left out, istiod's validation warnings. */
    public List<DocumentError> warnings() {
        return files == null ? List.of() : files.warnings();
    }

    /**
     * The store of the cluster's custom resources (Kubernetes mode), whose objects have a
     * status subresource istiod writes; empty otherwise.
     */
    public Optional<WritableConfigStore> clusterStore() {
        return writable instanceof CrdConfigStore ? Optional.of(writable) : Optional.empty();
    }

    @Override
    public void close() {
        closed = true;
        Thread waiting = lateSync;
        if (waiting != null) {
            waiting.interrupt();
        }
        if (files != null) {
            files.close();
        }
        if (writable != null) {
            writable.close();
        }
        if (ingress != null) {
            ingress.close();
        }
        if (gatewayApi != null) {
            gatewayApi.close();
        }
    }
}
