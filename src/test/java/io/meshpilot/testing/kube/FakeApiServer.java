package io.meshpilot.testing.kube;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.meshpilot.config.schema.Schemas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * A Kubernetes API server stand-in for tests and {@code bin/kube-sandbox}: the real REST
 * protocol over real HTTP on loopback, enough for kubectl (1.27-1.33) and the official Java
 * client's informers. Objects live in memory ({@link ObjectStore}); the server can be stopped
 * and restarted on the same port keeping them, and its history compacted so that old
 * resourceVersions expire (410 Gone).
 *
 * <p>Served: discovery ({@code /api}, {@code /apis}, per group version), {@code /version},
 * {@code /openapi/v3} (enough for kubectl's server-side field validation check), the built-in
 * kinds MeshPilot reads (Namespace, Service, Endpoints, EndpointSlice, Pod, Node, ConfigMap,
 * Secret, ServiceAccount, Deployment, RBAC, PodDisruptionBudget, HorizontalPodAutoscaler and a few more) and every kind of a created
 * CustomResourceDefinition. Per resource: get, list (resourceVersion, label and field
 * selectors, limit/continue; 504 "Too large resource version" from a version ahead of it), watch (from a resourceVersion, bookmarks, 410 Expired,
 * timeoutSeconds), create (409 AlreadyExists), update with optimistic concurrency (409
 * Conflict), the status subresource, patch (merge, JSON, strategic merge as kubectl sends it,
 * server-side apply without managed fields: what a field manager applied before and no longer applies
 * is removed), delete (preconditions, finalizers) and delete
 * collection. TokenReviews and SubjectAccessReviews are answered as the test configures them ({@link #tokens()},
 * {@link #accessReviews()}).
 * Services get a cluster IP allocated (from 10.96.0.10) when they have none, as the API
 * server's own Service storage does. Request bodies may be JSON, YAML or, for the built-in
 * kinds kubectl's generators send that way ({@code kubectl create namespace}), protobuf; answers
 * are always JSON. Not served: protobuf answers, tables (kubectl prints its default columns), admission
 * webhook calls (a test may play them through {@link #admission}),
 * schema validation or pruning of custom resources, managed fields, RBAC and authentication
 * (every request is allowed).
 *
 * <p>Why not fabric8's {@code kubernetes-server-mock} 8.0.0 in CRUD mode: it was tried first.
 * Its CRUD dispatcher keeps no history, so a watch cannot start from a resourceVersion, and it
 * sends no bookmarks and never 410 Gone; it serves no discovery and no OpenAPI, so kubectl cannot
 * use it; its state lives in the dispatcher of one mock web server, so a restart on the same
 * port keeping the objects is not something it offers. Adding those means replacing its watch,
 * discovery and lifecycle, leaving only its object map and patch handling, while pulling in
 * Jackson 3, Vert.x 5 and its own model classes beside the official client's. This server is
 * the smaller thing to own.
 */
public final class FakeApiServer implements AutoCloseable {
    private final ResourceCatalog catalog = new ResourceCatalog();
    private final ObjectStore store = new ObjectStore(catalog);
    private final WatchStreams watches = new WatchStreams(store);
    private final ApiHandler handler = new ApiHandler(catalog, store, watches);
    /** The bound port, kept across {@link #stop()} for {@link #restart()}. */
    private int port;
    private HttpServer server;
    private ExecutorService executor;
    /** The HTTPS listener of {@link #serveTls}, if asked for: the same objects, until {@link #close()}. */
    private HttpsServer tlsServer;
    private ExecutorService tlsExecutor;

    private FakeApiServer() {
        store.createSystemNamespaces();
    }

    /**
     * The admission step of creates and updates (POST and PUT; not patches), for a test that
     * plays the API server's webhook calls: this server calls no webhook itself.
     */
    @FunctionalInterface
    public interface Admission {
        /**
         * @param operation CREATE or UPDATE
         * @param resource  the plural, as the request's resource names it
         * @return null to admit the object, else the refusal's message (answered 400 BadRequest)
         */
        String review(String operation, String group, String version, String resource, String namespace,
                      JsonObject object, boolean dryRun);
    }

    /** Sets the admission step (null: every object is admitted, the default). */
    public void admission(Admission admission) {
        handler.admission(admission);
    }

    /**
     * Runs {@code hook} after each create, update, patch or delete is stored and before its
     * answer is sent (null: none): a test's way to have the object change again while its writer
     * still waits for the answer, as when a second writer races it.
     */
    public void beforeWriteAnswer(Runnable hook) {
        handler.beforeWriteAnswer(hook);
    }

    /** Starts on a free loopback port. */
    public static FakeApiServer start() {
        return start(0);
    }

    /** Starts on this loopback port (0: a free one). */
    public static FakeApiServer start(int port) {
        FakeApiServer s = new FakeApiServer();
        s.bind(port);
        return s;
    }

    private synchronized void bind(int bindPort) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), bindPort), 128);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1:" + bindPort, e);
        }
        executor = Executors.newVirtualThreadPerTaskExecutor();
        server.setExecutor(executor);
        server.createContext("/", handler);
        server.start();
        port = server.getAddress().getPort();
    }

    /**
     * Also serves the same API over HTTPS on a free loopback port, with {@code context}'s
     * certificate: what an in-cluster client (KUBERNETES_SERVICE_HOST/PORT, the service
     * account's ca.crt) needs, as it speaks HTTPS only. Returns the port; kubectl keeps the plain
     * listener. Not kept across {@link #stop()}/{@link #restart()}; ends with {@link #close()}.
     */
    public synchronized int serveTls(SSLContext context) {
        if (tlsServer != null) {
            throw new IllegalStateException("already serving TLS on " + tlsServer.getAddress().getPort());
        }
        try {
            tlsServer = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1 for TLS", e);
        }
        tlsServer.setHttpsConfigurator(new HttpsConfigurator(context));
        tlsExecutor = Executors.newVirtualThreadPerTaskExecutor();
        tlsServer.setExecutor(tlsExecutor);
        tlsServer.createContext("/", handler);
        tlsServer.start();
        return tlsServer.getAddress().getPort();
    }

    /** {@code http://127.0.0.1:<port>}. */
    public URI url() {
        return URI.create("http://127.0.0.1:" + port());
    }

    public synchronized int port() {
        return port;
    }

    /**
     * Writes {@code dir/kubeconfig}: one cluster at {@link #url()} over plain HTTP (kubectl and
     * the Java client both accept it), no credentials, namespace {@code default}.
     */
    public Path writeKubeconfig(Path dir) {
        String name = "meshpilot-standin";
        String yaml = """
                apiVersion: v1
                kind: Config
                clusters:
                - name: %1$s
                  cluster:
                    server: %2$s
                contexts:
                - name: %1$s
                  context:
                    cluster: %1$s
                    user: %1$s
                    namespace: default
                current-context: %1$s
                users:
                - name: %1$s
                  user: {}
                """.formatted(name, url());
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve("kubeconfig");
            Files.writeString(file, yaml);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Creates (or replaces) CustomResourceDefinitions given as YAML; their kinds are served at once. */
    public void installCrds(String yaml) {
        apply(yaml);
    }

    /** Creates the CRDs of every Pilot kind ({@link Schemas#PILOT}) in every version istiod serves. */
    public void installIstioCrds() {
        for (JsonObject crd : istioCrds()) {
            applyObject(crd);
        }
    }

    /** Istio's CRDs as {@link #installIstioCrds()} creates them. */
    public static List<JsonObject> istioCrds() {
        return IstioCrds.all();
    }

    /**
     * Creates or replaces every object of a YAML stream, as {@code kubectl apply} would end up
     * (namespaced objects without a namespace go to {@code default}). A {@code status} in the
     * YAML is then written through the status subresource, as the controllers of a real
     * cluster would (Pods' IPs, for instance). Returns the stored objects.
     */
    public List<JsonObject> apply(String yaml) {
        List<JsonObject> out = new ArrayList<>();
        for (JsonObject doc : Json.yamlDocuments(yaml)) {
            out.add(applyObject(doc));
        }
        return out;
    }

    /** {@link #apply(String)} for one object already parsed (faster for thousands of objects). */
    public JsonObject apply(JsonObject object) {
        return applyObject(object);
    }

    private JsonObject applyObject(JsonObject doc) {
        ResourceType t = typeOf(doc);
        String name = Json.string(doc, "metadata", "name");
        String namespace = namespaceOf(t, doc);
        JsonObject stored;
        if (store.get(t, namespace, name).isPresent()) {
            JsonObject body = doc.deepCopy();
            Json.metadata(body).remove("resourceVersion");
            stored = store.update(t, namespace, name, body, false, false);
        } else {
            stored = store.create(t, namespace, doc, false);
        }
        if (t.statusSubresource() && doc.has("status") && !t.kind().equals("CustomResourceDefinition")) {
            JsonObject withStatus = stored.deepCopy();
            withStatus.add("status", doc.get("status").deepCopy());
            Json.metadata(withStatus).remove("resourceVersion");
            stored = store.update(t, namespace, name, withStatus, true, false);
        }
        return ApiHandler.served(t, stored);
    }

    /** Deletes every object of a YAML stream that exists (missing ones are ignored, as {@code --ignore-not-found}). */
    public void delete(String yaml) {
        for (JsonObject doc : Json.yamlDocuments(yaml)) {
            ResourceType t = typeOf(doc);
            String name = Json.string(doc, "metadata", "name");
            String namespace = namespaceOf(t, doc);
            if (store.get(t, namespace, name).isPresent()) {
                store.delete(t, namespace, name, null, null, false);
            }
        }
    }

    /** Deletes one object; false when it did not exist. */
    public boolean delete(String apiVersion, String kind, String namespace, String name) {
        ResourceType t = type(apiVersion, kind);
        if (store.get(t, t.namespaced() ? namespace : null, name).isEmpty()) {
            return false;
        }
        store.delete(t, t.namespaced() ? namespace : null, name, null, null, false);
        return true;
    }

    /** One object as the API serves it in {@code apiVersion}, if it exists. */
    public Optional<JsonObject> get(String apiVersion, String kind, String namespace, String name) {
        ResourceType t = type(apiVersion, kind);
        return store.get(t, t.namespaced() ? namespace : null, name).map(o -> ApiHandler.served(t, o));
    }

    /** Objects of a kind, in one namespace or (null) all. */
    public List<JsonObject> list(String apiVersion, String kind, String namespace) {
        ResourceType t = type(apiVersion, kind);
        return store.list(t, namespace).items().stream().map(o -> ApiHandler.served(t, o)).toList();
    }

    /** The current resourceVersion (of the last change). */
    public long resourceVersion() {
        return store.revision();
    }

    /**
     * Expires every resourceVersion handed out so far, as an etcd compaction does, and ends the
     * open watches: clients that watch again from a version they saw get 410 Gone and must
     * list again.
     */
    public void compact() {
        store.compact();
        watches.closeAll();
    }

    /** Ends every open watch stream, keeping the history: clients watch again from where they were. */
    public void closeWatches() {
        watches.closeAll();
    }

    /** Open watch streams right now. */
    public int openWatches() {
        return watches.openCount();
    }

    /** How often watches that allow bookmarks get one (default 2 s; the real server's is about a minute). */
    public void bookmarkInterval(Duration interval) {
        watches.bookmarkInterval(interval);
    }

    /**
     * The requests answered so far, as {@code METHOD path?query -> code}, oldest first (the last
     * 10,000); a watch is listed when it ends.
     */
    public List<String> requestLog() {
        return handler.requestLog();
    }

    /**
     * Refuses every write of {@code resource} (plural, e.g. configmaps) in {@code namespace}
     * with 403 Forbidden, as RBAC does where the caller has no role (OpenShift's kube-system).
     */
    public void forbidWrites(String resource, String namespace) {
        handler.forbidWrites(resource, namespace);
    }

    /** What TokenReviews ({@code POST /apis/authentication.k8s.io/v1/tokenreviews}) answer about tokens. */
    public TokenReviews tokens() {
        return handler.tokenReviews();
    }

    /**
     * What SubjectAccessReviews ({@code POST /apis/authorization.k8s.io/v1/subjectaccessreviews})
     * answer: nothing is allowed until granted.
     */
    public SubjectAccessReviews accessReviews() {
        return handler.accessReviews();
    }

    /**
     * Stops as a shut-down server does: every watch stream is ended properly first, then the
     * listener and the connections close. The objects are kept for {@link #restart()}.
     */
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        watches.closeAll();
        // let the streams write their last chunk before the connections close (bounded)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (watches.openCount() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        server.stop(0);
        executor.shutdownNow();
        server = null;
    }

    /**
     * Stops as a killed process would: connections are dropped with their watch streams
     * unfinished (no last chunk), nothing is said to the clients. The objects are kept for
     * {@link #restart()}, as etcd keeps them when the API server dies.
     */
    public synchronized void kill() {
        if (server == null) {
            return;
        }
        server.stop(0);
        executor.shutdownNow();
        server = null;
    }

    /** Listens again on the same port, serving the objects it had. */
    public synchronized void restart() {
        if (server != null) {
            throw new IllegalStateException("the API server stand-in is running");
        }
        bind(port());
    }

    /**
     * Stops, then comes back as a cluster rebuilt from its manifests (or restored from an etcd
     * backup without bumped revisions) does: the same objects, numbered again from the first
     * resourceVersion, so the versions clients saw before now name other, mostly lower, ones
     * (issue 29: {@code reviews} went from 10923 to 54). Clients that order resourceVersions
     * take every later change for an old one.
     */
    public synchronized void restartWithResetVersions() {
        stop();
        store.resetVersions();
        restart();
    }

    public synchronized boolean running() {
        return server != null;
    }

    @Override
    public void close() {
        stop();
        synchronized (this) {
            if (tlsServer != null) {
                tlsServer.stop(0);
                tlsExecutor.shutdownNow();
                tlsServer = null;
            }
        }
    }

    private ResourceType typeOf(JsonObject doc) {
        String apiVersion = Json.string(doc, "apiVersion");
        String kind = Json.string(doc, "kind");
        if (apiVersion == null || kind == null) {
            throw new IllegalArgumentException("an object needs apiVersion and kind: " + doc);
        }
        return type(apiVersion, kind);
    }

    private ResourceType type(String apiVersion, String kind) {
        return catalog.forKind(apiVersion, kind).orElseThrow(() -> new IllegalArgumentException(
                "the API server stand-in serves no " + kind + " in " + apiVersion
                        + " (install its CRD first)"));
    }

    private static String namespaceOf(ResourceType t, JsonObject doc) {
        if (!t.namespaced()) {
            return null;
        }
        String ns = Json.string(doc, "metadata", "namespace");
        return ns == null || ns.isEmpty() ? "default" : ns;
    }
}
