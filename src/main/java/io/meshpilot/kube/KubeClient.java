package io.meshpilot.kube;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.credentials.TokenFileAuthentication;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.io.IOException;
import java.io.Reader;
import java.lang.System.Logger.Level;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.InformerController;
import io.meshpilot.kube.controllers.SignallingInformer;
import io.meshpilot.kube.controllers.SyncWaiter;

/**
 * The Kubernetes client (istiod's kube.Client): one API client, throttled by
 * --kubernetesApiQPS/--kubernetesApiBurst, and the informers built on it. Components
 * register informers while the server is built (typed ones through {@link #informers()},
 * others through {@link #addInformer}); {@link #runAndWait} starts them with the start
 * functions and waits, bounded, until each has listed once. The informers relist by
 * themselves when a watch breaks or its resourceVersion is gone (410), and from the current
 * state when that version lies ahead of the API server ({@link ResourceListerWatcher}).
 */
public final class KubeClient implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KubeClient.class.getName());

    private final ApiClient apiClient;
    private final String description;
    private final ExecutorService executor;
    private final NamedInformerFactory factory;
    /** Informers registered by name, outside the factory (dynamic kinds), in order of registration. */
    private final Map<String, SignallingInformer<?, ?>> named = new LinkedHashMap<>();
    private final Map<String, Future<?>> namedStarted = new LinkedHashMap<>();
    /** The controllers of {@link #watchConfigMap}, by informer name: stopped with their informer. */
    private final Map<String, AutoCloseable> controllers = new LinkedHashMap<>();
    /** A watched ConfigMap's handler that throws is called again after this. */
    private static final Backoff CONFIG_MAP_RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30));
    private boolean started;
    private boolean closed;
    private DiscoveryNamespacesFilter discoveryNamespaces;
    /** Empty for the local cluster; " of cluster X" for a remote one, after its informers' names in logs. */
    private final String clusterLabel;

    private KubeClient(ApiClient apiClient, String description, String clusterLabel) {
        this.clusterLabel = clusterLabel;
        this.apiClient = apiClient;
        this.description = description;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon()
                .name("kube-informer-" + n.incrementAndGet()).unstarted(r));
        this.factory = new NamedInformerFactory(apiClient, executor);
    }

    /**
     * Connects as {@code options} say. Nothing is sent to the API server yet.
     *
     * @throws IOException naming the kubeconfig or in-cluster file that cannot be used, and why
     */
    public static KubeClient create(KubeClientOptions options) throws IOException {
        LenientJson.install(); // an object this client cannot fully read must not stop its whole informer
        ApiClient client;
        try {
            ClientBuilder builder;
            if (options.kubeconfig() != null) {
                KubeConfig config;
                try (Reader r = Files.newBufferedReader(options.kubeconfig(), StandardCharsets.UTF_8)) {
                    config = KubeConfig.loadKubeConfig(r);
                }
                if (config == null || config.getServer() == null) {
                    throw new IOException("kubeconfig " + options.kubeconfig() + " names no cluster server (current-context "
                            + (config == null ? "none" : config.getCurrentContext()) + ")");
                }
                config.setFile(options.kubeconfig().toAbsolutePath().toFile()); // relative certificate paths
                builder = ClientBuilder.kubeconfig(config);
            } else if (options.inCluster() != null) {
                builder = inCluster(options.inCluster());
            } else {
                builder = ClientBuilder.cluster();
            }
            client = build(builder);
        } catch (IOException e) {
            throw new IOException((options.kubeconfig() == null ? "in-cluster config" : "kubeconfig "
                    + options.kubeconfig()) + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IOException((options.kubeconfig() == null ? "in-cluster config" : "kubeconfig "
                    + options.kubeconfig()) + " cannot be used: " + e, e);
        }
        return throttled(client, options.qps(), options.burst(), options.describe(), "");
    }

    /**
     * A client for a kubeconfig that is not a file (a remote cluster's, from a Secret), already
     * parsed and checked. Nothing is sent to the API server yet.
     *
     * @param clusterId the remote cluster's ID, named in its informers' log lines
     * @param source    what the kubeconfig is, for logs and errors (e.g. the Secret and key)
     * @throws IOException when the client cannot be built from it, naming {@code source}
     */
    public static KubeClient create(KubeConfig config, String clusterId, String source, double qps, int burst)
            throws IOException {
        LenientJson.install();
        ApiClient client;
        try {
            client = build(ClientBuilder.kubeconfig(config));
        } catch (IOException | RuntimeException e) {
            throw new IOException(source + " cannot be used: " + e.getMessage(), e);
        }
        return throttled(client, qps, burst, source + " qps=" + qps + " burst=" + burst, " of cluster " + clusterId);
    }

    private static ApiClient build(ClientBuilder builder) throws IOException {
        // watches stay open for minutes with nothing to read; the informers time them out themselves
        return builder.setReadTimeout(Duration.ZERO).build();
    }

    private static KubeClient throttled(ApiClient client, double qps, int burst, String describe, String clusterLabel) {
        client.setHttpClient(client.getHttpClient().newBuilder()
                .addInterceptor(new RequestRateLimiter(qps, burst))
                .build());
        return new KubeClient(client, client.getBasePath() + " (" + describe + ")", clusterLabel);
    }

    /** client-java's ClientBuilder.cluster(), from {@code config} instead of fixed paths and the process environment. */
    private static ClientBuilder inCluster(InClusterConfig config) throws IOException {
        for (Path file : List.of(config.tokenFile(), config.caFile())) {
            if (!Files.isReadable(file)) {
                throw new IOException("service-account file " + file + " is missing or unreadable (not in a pod with a "
                        + "mounted service account? MESHPILOT_SERVICE_ACCOUNT_DIR names another directory)");
            }
        }
        return new ClientBuilder()
                .setBasePath(config.url())
                .setCertificateAuthority(Files.readAllBytes(config.caFile()))
                // re-read as the kubelet rotates the bound token
                .setAuthentication(new TokenFileAuthentication(
                        config.tokenFile().toString()));
    }

    /** The throttled API client: for requests and for informers built outside {@link #informers()}. */
    public ApiClient apiClient() {
        return apiClient;
    }

    /** The factory of typed informers (Service, EndpointSlice, Pod, ...): one informer per type. */
    public SharedInformerFactory informers() {
        return factory;
    }

    /**
     * The one discovery namespace filter of this client (istiod sets it on its kube client):
     * the service registry and the CRD config store read the same selection. Created, with
     * its Namespace informer, on first use; selects every namespace until selectors are set.
     */
    public synchronized DiscoveryNamespacesFilter discoveryNamespaces() {
        if (discoveryNamespaces == null) {
            discoveryNamespaces = DiscoveryNamespacesFilter.register(apiClient, factory, watchErrorHandler("Namespace"));
        }
        return discoveryNamespaces;
    }

    /**
     * Registers an informer the factory cannot hold (several of one Java type, like dynamic
     * objects of different kinds). Started with the others, or at once when they already run.
     *
     * @param name what readiness and logs call it, e.g. {@code networking.istio.io/v1/virtualservices}
     */
    public void addInformer(String name, SignallingInformer<?, ?> informer) {
        Stopping replaced;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("Kubernetes client closed");
            }
            SignallingInformer<?, ?> old = named.put(name, informer);
            replaced = old != null && old != informer ? new Stopping(old, namedStarted.remove(name)) : null;
            if (started) {
                startNamed();
            }
        }
        if (replaced != null) {
            replaced.stop();
        }
    }

    /**
     * An informer over the objects of one core/v1 kind that have one name (a field selector on
     * {@code metadata.name}): the mesh ConfigMap, {@code cacerts}, every namespace's
     * {@code istio-ca-root-cert}. Not registered: the caller adds its handler, then
     * {@link #addInformer}s it under {@code name}.
     *
     * @param namespace the namespace, or null for the object of that name in every namespace
     */
    public <T extends KubernetesObject, L extends KubernetesListObject>
    SignallingInformer<T, L> namedObjectInformer(String name, Class<T> type, Class<L> listType, String plural,
                                                 String namespace, String objectName) {
        var api = new GenericKubernetesApi<>(type, listType, "", "v1", plural, apiClient);
        return new SignallingInformer<>(type,
                ResourceListerWatcher.of(name, api, namespace, null, "metadata.name=" + objectName), new Cache<>(),
                watchErrorHandler(name));
    }

    /**
     * Watches the data of one ConfigMap (the mesh config, the injector settings): {@code onData}
     * gets its data once listed and after every change (a burst of changes is one call with the
     * latest data), and an empty map once it is deleted (with {@code deleted} true), on a
     * controller thread of its own. The informer is registered under {@code "configmap <ns>/<name>"}
     * and runs with this client's informers; {@link #removeInformer} with that name stops both.
     */
    public String watchConfigMap(String namespace, String name, BiConsumer<Map<String, String>, Boolean> onData) {
        String informerName = "configmap " + namespace + "/" + name;
        var informer = namedObjectInformer(informerName, V1ConfigMap.class, V1ConfigMapList.class, "configmaps",
                namespace, name);
        InformerController<V1ConfigMap> controller = InformerController.start(informerName, informer,
                CONFIG_MAP_RETRY, (key, cm) -> {
                    onData.accept(cm == null || cm.getData() == null ? Map.of() : cm.getData(), cm == null);
                    return Outcome.DONE;
                });
        AutoCloseable replaced;
        synchronized (this) {
            replaced = controllers.put(informerName, controller);
        }
        closeQuietly(replaced);
        addInformer(informerName, informer);
        return informerName;
    }

    /** Stops and forgets an informer registered with {@link #addInformer}. */
    public void removeInformer(String name) {
        Stopping removed;
        AutoCloseable controller;
        synchronized (this) {
            controller = controllers.remove(name);
            SignallingInformer<?, ?> old = named.remove(name);
            removed = old == null ? null : new Stopping(old, namedStarted.remove(name));
        }
        closeQuietly(controller);
        if (removed != null) {
            removed.stop();
        }
    }

    private static void closeQuietly(AutoCloseable controller) {
        if (controller == null) {
            return;
        }
        try {
            controller.close();
        } catch (Exception e) {
            LOG.log(Level.WARNING, "closing a controller failed: " + e);
        }
    }

    /**
     * An informer on its way out. Stopped without holding this client's lock: stopping waits
     * for the informer's handler threads, and a handler may be registering an informer.
     */
    private record Stopping(SharedInformer<?> informer, Future<?> running) {
        void stop() {
            informer.stop();
            if (running != null) {
                running.cancel(true); // an informer's loop waits for deltas until interrupted
            }
        }
    }

    /** Starts every informer registered so far (and later ones as they are registered). */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("Kubernetes client closed");
        }
        started = true;
        factory.startAllRegisteredInformers();
        startNamed();
    }

    private void startNamed() {
        named.forEach((name, informer) -> {
            if (!namedStarted.containsKey(name)) {
                namedStarted.put(name, executor.submit(informer::run));
            }
        });
    }

    /**
     * istiod's kubeClient.RunAndWait: starts the informers and waits until each has listed
     * once, or {@code timeout}. Returns the names of those that have not (empty: all synced).
     */
    public List<String> runAndWait(Duration timeout) throws InterruptedException {
        start();
        List<String> pending = SyncWaiter.await(syncSignals(), timeout);
        if (!pending.isEmpty()) {
            LOG.log(Level.WARNING, "Kubernetes informers not synced after " + timeout.toMillis() + " ms: " + pending
                    + " (they keep retrying; readiness waits for them)");
        }
        return pending;
    }

    /**
     * Each informer registered so far, by name, with the signal of its sync; for a watched
     * ConfigMap, once its controller has also handed the first data over (istiod waits for the
     * handlers to process the initial list, so the first push sees the cluster's mesh config).
     */
    public synchronized Map<String, CompletableFuture<Void>> syncSignals() {
        Map<String, CompletableFuture<Void>> out = new LinkedHashMap<>();
        factory.named().forEach((name, informer) -> out.put(name, informer.synced()));
        named.forEach((name, informer) -> out.put(name, controllers.get(name) instanceof InformerController<?> c
                ? CompletableFuture.allOf(informer.synced(), c.synced()) : informer.synced()));
        return out;
    }

    /** The informers that have not listed once yet, by name; empty when all have. */
    public List<String> notSynced() {
        List<String> out = new ArrayList<>();
        syncSignals().forEach((name, synced) -> {
            if (!synced.isDone()) {
                out.add(name);
            }
        });
        return out;
    }

    /** Whether every informer registered so far has listed once. */
    public boolean hasSynced() {
        return notSynced().isEmpty();
    }

    /**
     * What an informer does with a failed list or watch (pass it to the factory's
     * {@code sharedIndexInformerFor(..., exceptionHandler)} or to an informer's constructor):
     * one WARNING line naming the informer and the cause, when the cause changes; the informer itself retries with backoff. A 410 Gone (expired
     * resourceVersion) is routine: the informer relists, logged at DEBUG.
     */
    public <T> BiConsumer<Class<T>, Throwable> watchErrorHandler(String name) {
        return (type, error) -> watchErrors.report(name + clusterLabel, error);
    }

    private final WatchErrors watchErrors = new WatchErrors();

    /** The API server and how it is reached, for logs. */
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        List<Stopping> stopping = new ArrayList<>();
        List<AutoCloseable> closing = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            named.forEach((name, informer) -> stopping.add(new Stopping(informer, namedStarted.remove(name))));
            named.clear();
            closing.addAll(controllers.values());
            controllers.clear();
        }
        closing.forEach(KubeClient::closeQuietly);
        stopping.forEach(Stopping::stop);
        factory.stopAllRegisteredInformers(false);
        executor.shutdownNow();
        // watches hold OkHttp connections; end them so no thread waits on a socket after close
        apiClient.getHttpClient().dispatcher().cancelAll();
        apiClient.getHttpClient().connectionPool().evictAll();
    }

    /**
     * The factory, with the names of its informers for readiness (its map is keyed by Java
     * type), whose informers signal their sync.
     */
    private static final class NamedInformerFactory extends SharedInformerFactory {
        NamedInformerFactory(ApiClient client, ExecutorService executor) {
            super(client, executor, false);
        }

        /**
         * The informer of {@code type}, made on first call (a later call gets the same one: a
         * second informer of one type would never be started by the factory).
         */
        @Override
        @SuppressWarnings("unchecked")
        public synchronized <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T>
        sharedIndexInformerFor(ListerWatcher<T, L> listerWatcher, Class<T> type, long resyncPeriodMillis,
                               BiConsumer<Class<T>, Throwable> errors) {
            return informers.computeIfAbsent(type, t -> new SignallingInformer<>(type, listerWatcher, new Cache<>(), errors));
        }

        synchronized Map<String, SignallingInformer<?, ?>> named() {
            Map<String, SignallingInformer<?, ?>> out = new LinkedHashMap<>();
            for (Map.Entry<Type, SharedIndexInformer> e : informers.entrySet()) {
                Type t = e.getKey();
                if (!(e.getValue() instanceof SignallingInformer<?, ?> informer)) {
                    // every informer must signal its sync, or start-up and readiness would not wait for it
                    throw new IllegalStateException("informer of " + t.getTypeName() + " does not signal its sync");
                }
                out.put(t instanceof Class<?> c ? c.getSimpleName() : t.getTypeName(), informer);
            }
            return out;
        }
    }
}
