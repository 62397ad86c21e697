package io.meshpilot.config.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.openapi.models.V1Preconditions;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.kubernetes.client.util.generic.options.DeleteOptions;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.ConfigRevision;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.config.store.EventDispatcher;
import io.meshpilot.config.store.WritableConfigStore;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Istio config from the cluster's custom resources (istiod's crdclient): every Pilot kind
 * whose CRD is installed is listed and watched through the Kubernetes client, in the one
 * version istiod reads (the first of the kind's versions the CRD serves, so an object is
 * never served twice through two versions). Objects are validated as files are: an invalid
 * object is reported (namespace/name, field path, reason), not served, and the version of it
 * that was valid before keeps being served. A kind whose CRD is missing is skipped with one
 * log line and watched from the moment its CRD appears.
 *
 * <p>With a discovery namespace filter (istiod's ENABLE_ENHANCED_RESOURCE_SCOPING), objects
 * of namespaces {@code meshConfig.discoverySelectors} do not select are watched but not
 * served: a namespace that becomes selected adds its objects, one that is deselected removes
 * them, each with its config event.
 *
 * <p>With a revision ({@link ConfigRevision}), objects labelled {@code istio.io/rev} for
 * another revision are watched but not served: relabelling one serves or withdraws it with its
 * config event, as istiod's informer filter turns it into an add or a delete.
 *
 * <p>It runs on the controller kit, as istiod's crdclient puts its informers' events through a
 * queue: each informer event (of a CRD or of an object) queues its key
 * ({@code kind/namespace/name}), and one worker reconciles the keys one at a time, reading the
 * object as the informer's cache holds it then (a burst of changes is one reconcile of the
 * latest state). It has synced once every key of the CRDs' first list and of each watched
 * kind's first list has been reconciled.
 *
 * <p>Every change is applied, whatever its resourceVersion: resourceVersions are opaque
 * (only equality means anything, and only within one history; after an etcd restore or a
 * cluster rebuild the API server hands out lower numbers, and numbers it handed out before).
 * A reconcile that finds exactly what is served (a relist, the watch event of a write of ours)
 * changes nothing.
 *
 * <p>It is also the store of REST writes in Kubernetes mode: creates, updates and deletes go
 * to the API server with the caller's resourceVersion as precondition, and the API server's
 * answer (409, 404, 422) is the answer. A write that succeeded is served at once with the
 * API server's answer, unless the watch brought an event for the object meanwhile (see
 * {@link #written}).
 */
public final class CrdConfigStore implements WritableConfigStore {
    private static final System.Logger LOG = System.getLogger(CrdConfigStore.class.getName());
    static final String CRD_INFORMER = "apiextensions.k8s.io/v1/customresourcedefinitions";
    /** The kind of the queue's keys of CRDs ({@code CustomResourceDefinition//<plural>.<group>}). */
    private static final String CRD_KIND = "CustomResourceDefinition";
    /** Retries of a write whose caller gave no resourceVersion, when another writer got in between. */
    private static final int UNCONDITIONAL_RETRIES = 5;

    private final KubeClient client;
    private final Schemas schemas;
    private final ConfigParser parser;
    /** Which namespaces' objects are served; null: every namespace's. */
    private final DiscoveryNamespacesFilter namespaces;
    /** Which objects are this control plane's by their {@code istio.io/rev} label. */
    private final ConfigRevision revision;
    private final EventDispatcher events = new EventDispatcher("kubernetes");
    private final KindInformer crds;
    /** Keys of changed CRDs and objects, reconciled on its worker (the informer threads only queue). */
    private final ControllerQueue<ConfigKey> queue;
    private final ControllerQueue<ConfigKey>.Term term;
    /** Watched kinds by kind name. */
    private final Map<String, KindInformer> kinds = new ConcurrentHashMap<>();
    /** Served configs: kind -> namespace/name -> config. */
    private final Map<String, Map<String, Config>> served = new ConcurrentHashMap<>();
    /** Objects not served as they are now (the last good version may be), with why. */
    private final Map<ConfigKey, Rejected> rejected = new ConcurrentHashMap<>();
    private volatile boolean missingLogged;
    private volatile boolean closed;

    /** REST writes on their way to the API server (see {@link #written}); guarded by this store's lock. */
    private final List<PendingWrite> pendingWrites = new ArrayList<>();

    private record Rejected(String resourceVersion, List<DocumentError> errors) {
    }

    /** A write on its way to the API server, and whether the watch brought an event for its key meanwhile. */
    private static final class PendingWrite {
        final ConfigKey key;
        boolean watchSawKey;

        PendingWrite(ConfigKey key) {
            this.key = key;
        }
    }

    /**
     * Registers the CRD informer with {@code client}; the kinds' informers follow as their CRDs
     * are seen. Nothing is requested before the client's informers start.
     */
    public CrdConfigStore(KubeClient client, Schemas schemas, ConfigParser parser) {
        this(client, schemas, parser, null);
    }

    /**
     * As {@link #CrdConfigStore(KubeClient, Schemas, ConfigParser)}, serving only objects of the
     * namespaces {@code namespaces} selects ({@code null}: every namespace's).
     */
    public CrdConfigStore(KubeClient client, Schemas schemas, ConfigParser parser, DiscoveryNamespacesFilter namespaces) {
        this(client, schemas, parser, namespaces, ConfigRevision.ANY);
    }

    /**
     * As {@link #CrdConfigStore(KubeClient, Schemas, ConfigParser, DiscoveryNamespacesFilter)},
     * serving only the objects {@code revision} selects by their {@code istio.io/rev} label.
     */
    public CrdConfigStore(KubeClient client, Schemas schemas, ConfigParser parser, DiscoveryNamespacesFilter namespaces,
                          ConfigRevision revision) {
        this.client = client;
        this.revision = revision;
        this.schemas = schemas;
        this.parser = parser;
        this.namespaces = namespaces;
        if (namespaces != null) {
            namespaces.addHandler(this::membershipChanged);
        }
        this.crds = new KindInformer(client.apiClient(), "apiextensions.k8s.io", "v1", "customresourcedefinitions",
                client.watchErrorHandler(CRD_INFORMER));
        // reconciles ask for no retry (a bad object is reported and waits for its next change):
        // the backoff is for one that throws
        this.queue = new ControllerQueue<>("kube-config-store", Backoff.fixed(Duration.ofSeconds(1)), this::reconcile);
        // the term's sync marker follows every CRD key of the first list, queued from the cache
        this.term = queue.start(crds.informer.synced(), () -> crds.queueAll(CRD_KIND, queue));
        crds.queueChanges(CRD_KIND, false, key -> { }, queue);
        client.addInformer(CRD_INFORMER, crds.informer);
    }

    // ---- CRDs -> informers of kinds

    private Optional<Schema> schemaOf(JsonObject spec) {
        String group = string(spec, "group");
        JsonObject names = spec.has("names") && spec.get("names").isJsonObject() ? spec.getAsJsonObject("names") : null;
        String plural = names == null ? "" : string(names, "plural");
        return schemas.all().stream().filter(s -> s.group().equals(group) && s.plural().equals(plural)).findFirst();
    }

    /** The version istiod reads: the kind's preferred version if served, else the next one served. */
    private static Optional<String> versionToWatch(Schema schema, JsonObject spec) {
        List<String> served = new ArrayList<>();
        if (spec.has("versions") && spec.get("versions").isJsonArray()) {
            for (JsonElement v : spec.getAsJsonArray("versions")) {
                if (v.isJsonObject() && !"false".equals(string(v.getAsJsonObject(), "served"))) {
                    served.add(string(v.getAsJsonObject(), "name"));
                }
            }
        }
        return schema.versions().stream().filter(served::contains).findFirst();
    }

    /** Brings one key up to date with the informers' caches: a CRD's kind watched or not, an object served or not. */
    private Outcome reconcile(ConfigKey key) {
        if (key.kind().equals(CRD_KIND)) {
            DynamicKubernetesObject crd = crds.get(key);
            if (crd == null) {
                crdRemoved(key.name());
            } else {
                crdChanged(crd);
            }
            return Outcome.DONE;
        }
        KindInformer k = kinds.get(key.kind());
        Schema s = schemas.forKind(key.kind()).orElse(null);
        if (k != null && s != null) {
            objectReconciled(s, k, key, k.get(key));
        }
        return Outcome.DONE; // a kind no longer watched: its objects went with its informer
    }

    /**
     * Starts, replaces or stops the informer of the kind a CRD defines. Informers are started
     * and stopped outside this store's lock, which the REST writes take too.
     */
    private void crdChanged(DynamicKubernetesObject crd) {
        JsonObject spec = crd.getRaw().has("spec") && crd.getRaw().get("spec").isJsonObject()
                ? crd.getRaw().getAsJsonObject("spec") : new JsonObject();
        Optional<Schema> schema = schemaOf(spec);
        if (schema.isEmpty()) {
            return; // not a Pilot kind
        }
        Schema s = schema.get();
        Optional<String> version = versionToWatch(s, spec);
        KindInformer stopped;
        KindInformer k = null;
        synchronized (this) {
            if (closed) {
                return;
            }
            KindInformer current = kinds.get(s.kind());
            if (version.isPresent() && current != null && current.version.equals(version.get())) {
                return;
            }
            stopped = stopKind(s);
            if (version.isEmpty()) {
                LOG.log(Level.WARNING, "CRD " + KubeObjects.name(crd) + " serves none of " + s.group() + " " + s.kind()
                        + "'s versions " + s.versions() + ": kind skipped");
            } else {
                k = new KindInformer(client.apiClient(), s.group(), version.get(), s.plural(),
                        client.watchErrorHandler(s.group() + "/" + version.get() + "/" + s.plural()));
                k.queueChanges(s.kind(), true, this::watchEvent, queue);
                kinds.put(s.kind(), k);
                if (missingLogged) {
                    LOG.log(Level.INFO, "CRD for " + s.kind() + " installed: watching " + k.name());
                }
            }
        }
        if (stopped != null) {
            client.removeInformer(stopped.name());
        }
        if (k != null) {
            client.addInformer(k.name(), k.informer);
        }
    }

    /** The CRD named {@code crdName} ({@code <plural>.<group>}, as the API server requires) is gone. */
    private void crdRemoved(String crdName) {
        Optional<Schema> schema = schemas.all().stream()
                .filter(s -> (s.plural() + "." + s.group()).equals(crdName)).findFirst();
        if (schema.isEmpty()) {
            return;
        }
        KindInformer stopped;
        synchronized (this) {
            if (closed) {
                return;
            }
            LOG.log(Level.WARNING, "CRD for " + schema.get().kind() + " deleted: its objects are no longer served");
            stopped = stopKind(schema.get());
        }
        if (stopped != null) {
            client.removeInformer(stopped.name());
        }
    }

    /**
     * Forgets a kind (called with the lock held); its objects are gone with it, as when the CRD
     * is deleted. Returns its informer for the caller to stop once the lock is released.
     */
    private KindInformer stopKind(Schema s) {
        KindInformer old = kinds.remove(s.kind());
        if (old == null) {
            return null;
        }
        Map<String, Config> objects = served.remove(s.kind());
        if (objects != null) {
            objects.values().forEach(c -> events.submit(new ConfigEvent(ConfigEvent.Type.DELETE, c, c)));
        }
        rejected.keySet().removeIf(key -> key.kind().equals(s.kind()));
        return old;
    }

    /** Logs, once the CRDs are known, each Pilot kind whose CRD is not installed. */
    private void logMissingKinds() {
        if (missingLogged || !queue.hasSynced()) {
            return;
        }
        synchronized (this) {
            if (missingLogged) {
                return;
            }
            missingLogged = true;
            for (Schema s : schemas.all()) {
                if (!kinds.containsKey(s.kind())) {
                    LOG.log(Level.INFO, "CRD " + s.plural() + "." + s.group() + " is not installed: " + s.kind()
                            + " skipped until it is");
                }
            }
        }
    }

    // ---- objects -> served configs and events

    private Map<String, Config> of(String kind) {
        return served.computeIfAbsent(kind, k -> new ConcurrentHashMap<>());
    }

    private static String id(String namespace, String name) {
        return namespace + "/" + name;
    }

    private String source(KindInformer k) {
        return "kubernetes " + k.name();
    }

    /**
     * Serves {@code object}, the object of {@code key} as informer {@code k} holds it now, or
     * stops serving the key when it holds none, its namespace is not selected or it is labelled
     * for another revision (not reported: istiod's informers never see such objects); an
     * invalid object is reported and the last good version of it stays served.
     */
    private synchronized void objectReconciled(Schema s, KindInformer k, ConfigKey key, DynamicKubernetesObject object) {
        if (closed || kinds.get(s.kind()) != k) {
            return; // an informer replaced meanwhile
        }
        if (object == null || !selected(key.namespace()) || !revision.selects(KubeObjects.labels(object))) {
            unserve(key);
            return;
        }
        String rv = KubeObjects.resourceVersion(object);
        Config cur = of(s.kind()).get(id(key.namespace(), key.name()));
        KubeObjects.Read read = KubeObjects.read(parser, source(k), object);
        if (!read.valid()) {
            Rejected now = new Rejected(rv, read.errors());
            if (!now.equals(rejected.put(key, now))) { // a relist brings the same rejection again
                for (DocumentError e : read.errors()) {
                    LOG.log(Level.WARNING, "config rejected (resourceVersion " + rv + "): " + e + (cur == null
                            ? "; not served" : "; resourceVersion " + cur.resourceVersion() + " of it is still served"));
                }
            }
            return;
        }
        if (rejected.remove(key) != null) {
            LOG.log(Level.INFO, "config " + key + " valid again (resourceVersion " + rv + "): served");
        }
        if (!read.config().equals(cur)) { // equal: served already (a relist, or the watch event of a write of ours)
            serve(read.config());
        }
    }

    /** Serves {@code c} (called with this store's lock held) and queues its event. */
    private void serve(Config c) {
        Config old = of(c.gvk().kind()).put(id(c.namespace(), c.name()), c);
        events.submit(old == null ? new ConfigEvent(ConfigEvent.Type.ADD, null, c)
                : new ConfigEvent(ConfigEvent.Type.UPDATE, old, c));
    }

    /** Stops serving an object (called with the lock held), with a DELETE event if it was served. */
    private void unserve(ConfigKey key) {
        rejected.remove(key);
        Config old = of(key.kind()).remove(id(key.namespace(), key.name()));
        if (old != null) {
            events.submit(new ConfigEvent(ConfigEvent.Type.DELETE, old, old));
        }
    }

    // ---- discovery namespaces

    private boolean selected(String namespace) {
        return namespaces == null || namespaces.selects(namespace);
    }

    /**
     * Namespaces joined or left the selection (labels or discoverySelectors changed): the
     * informers' objects there are queued, and their reconciles serve or withdraw them. The
     * informers kept watching them, so nothing is requested from the API server. Without
     * selectors now, every object is looked at again: namespaces not listed yet count as
     * selected then.
     */
    private void membershipChanged(Set<String> selectedNow, Set<String> deselected) {
        boolean all = namespaces.rule().selectsAll();
        kinds.forEach((kind, k) -> {
            for (DynamicKubernetesObject o : k.objects()) {
                String ns = KubeObjects.namespace(o);
                if (all || deselected.contains(ns) || selectedNow.contains(ns)) {
                    queue.add(new ConfigKey(kind, ns, KubeObjects.name(o)));
                }
            }
        });
    }

    // ---- reads

    @Override
    public Collection<Schema> schemas() {
        return schemas.all();
    }

    @Override
    public Optional<Config> get(String kind, String namespace, String name) {
        return Optional.ofNullable(of(kind).get(id(namespace, name)));
    }

    @Override
    public List<Config> list(String kind, String namespace) {
        return ConfigStore.listed(of(kind).values(), namespace);
    }

    // ---- writes: the API server decides

    private KindInformer watched(ConfigKey key) {
        if (schemas.forKind(key.kind()).isEmpty()) {
            throw new ConfigStoreException.ReadOnly(key, "kind " + key.kind() + " is not held by this store");
        }
        KindInformer k = kinds.get(key.kind());
        if (k == null) {
            throw new ConfigStoreException.ReadOnly(key, "the CRD of " + key.kind() + " is not installed in the cluster");
        }
        return k;
    }

    private void validate(Config c) {
        Schema s = schemas.forKind(c.gvk().kind()).orElseThrow(
                () -> new ConfigStoreException.ReadOnly(c.key(), "kind " + c.gvk().kind() + " is not held by this store"));
        Validation v = new Validation();
        s.validator().validate(c, v);
        ValidationResult r = v.result();
        if (!r.valid()) {
            throw new ConfigStoreException.Invalid(c.key(), r);
        }
    }

    /**
     * Sends a write and serves the API server's answer at once, unless the watch brought an
     * event for the key while the write was on its way.
     *
     * <p>resourceVersions cannot say whether the answer or what the watch brought is newer, so
     * neither is compared with the other. Instead: the watch delivers the key's changes in the
     * order the API server made them, this write among them (or a relist brings what replaced
     * it). If no event for the key came while the write was on its way, the answer is served,
     * and whatever the watch delivers later is applied over it: that may be a change made just
     * before the write, which the watch then follows with the write itself, so an older version
     * can be served for a moment, but the last one delivered is the API server's. If an event
     * came meanwhile (this write's, a later change, a delete), the answer is not served: the
     * watch brings the written version or what replaced it. Either way what is served ends as
     * what the API server holds. A reported rejection is left for the watch to clear (the
     * write's own event does), as only the watch knows whether it came after the write.
     */
    private Config written(KindInformer k, ConfigKey key, Supplier<DynamicKubernetesObject> write) {
        PendingWrite pending = new PendingWrite(key);
        synchronized (this) {
            pendingWrites.add(pending);
        }
        try {
            DynamicKubernetesObject stored = write.get();
            KubeObjects.Read read = KubeObjects.read(parser, source(k), stored);
            if (!read.valid()) { // the API server changed it into something we do not serve (a mutating webhook)
                throw new ConfigStoreException.Invalid(key, new ValidationResult(read.errors().stream()
                        .map(e -> new ValidationResult.Issue(e.path(), e.reason())).toList(), List.of()));
            }
            synchronized (this) {
                // an object of a namespace the discoverySelectors do not select is stored, not served;
                // nor is one of another revision, nor one of a kind whose informer was replaced or
                // stopped meanwhile
                if (!pending.watchSawKey && kinds.get(key.kind()) == k && selected(key.namespace())
                        && revision.selects(read.config().labels())
                        && !read.config().equals(get(key.kind(), key.namespace(), key.name()).orElse(null))) {
                    serve(read.config());
                }
            }
            return read.config();
        } finally {
            synchronized (this) {
                pendingWrites.remove(pending);
            }
        }
    }

    /**
     * Notes, for the writes on their way, that the watch brought an event for {@code key}: on
     * the informer's thread as the event arrives, before its key is queued.
     */
    private synchronized void watchEvent(ConfigKey key) {
        for (PendingWrite w : pendingWrites) {
            if (w.key.equals(key)) {
                w.watchSawKey = true;
            }
        }
    }

    @Override
    public Config create(Config config) {
        validate(config);
        KindInformer k = watched(config.key());
        return written(k, config.key(), () -> {
            KubernetesApiResponse<DynamicKubernetesObject> r;
            try {
                r = k.api.create(KubeObjects.toObject(config.withResourceVersion(""), k.version));
            } catch (RuntimeException e) {
                throw ApiAnswers.unreachable(config.key(), e);
            }
            ApiAnswers.check(config.key(), r, "");
            return r.getObject();
        });
    }

    @Override
    public Config update(Config config) {
        validate(config);
        KindInformer k = watched(config.key());
        if (!config.resourceVersion().isEmpty()) {
            return put(k, config);
        }
        // no resourceVersion: "whatever is current" (custom resources need one on update)
        for (int attempt = 1; ; attempt++) {
            String current = currentResourceVersion(k, config.key());
            try {
                return put(k, config.withResourceVersion(current));
            } catch (ConfigStoreException.Conflict e) {
                if (attempt >= UNCONDITIONAL_RETRIES) {
                    throw e;
                }
            }
        }
    }

    private Config put(KindInformer k, Config config) {
        return written(k, config.key(), () -> {
            KubernetesApiResponse<DynamicKubernetesObject> r;
            try {
                r = k.api.update(KubeObjects.toObject(config, k.version));
            } catch (RuntimeException e) {
                throw ApiAnswers.unreachable(config.key(), e);
            }
            try {
                ApiAnswers.check(config.key(), r, config.resourceVersion());
            } catch (ConfigStoreException.Conflict e) {
                // name the version the caller should read: the one served
                throw new ConfigStoreException.Conflict(config.key(), config.resourceVersion(),
                        get(config.key().kind(), config.namespace(), config.name()).map(Config::resourceVersion)
                                .orElse("unknown") + "; " + e.current());
            }
            return r.getObject();
        });
    }

    /** The object's resourceVersion as the API server has it now. */
    private String currentResourceVersion(KindInformer k, ConfigKey key) {
        return KubeObjects.resourceVersion(getFromApiServer(k, key));
    }

    /** The object as the API server answers a GET now (not the informer's possibly lagging copy). */
    private DynamicKubernetesObject getFromApiServer(KindInformer k, ConfigKey key) {
        KubernetesApiResponse<DynamicKubernetesObject> r;
        try {
            r = k.api.get(key.namespace(), key.name());
        } catch (RuntimeException e) {
            throw ApiAnswers.unreachable(key, e);
        }
        ApiAnswers.check(key, r, "");
        return r.getObject();
    }

    /**
     * Replaces the status through the status subresource (a PUT: the client library's own
     * status update sends a patch in a media type the API server refuses).
     */
    @Override
    public Config updateStatus(Config config) {
        KindInformer k = watched(config.key());
        DynamicKubernetesObject object = KubeObjects.toObject(config, k.version);
        try {
            object.getRaw().add("status", JsonParser.parseString(
                    JsonFormat.printer().print(config.status())));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e); // a Struct always prints
        }
        if (config.resourceVersion().isEmpty()) {
            object.getRaw().getAsJsonObject("metadata").addProperty("resourceVersion",
                    currentResourceVersion(k, config.key()));
        }
        return written(k, config.key(), () -> {
            Object stored;
            try {
                stored = new CustomObjectsApi(client.apiClient())
                        .replaceNamespacedCustomObjectStatus(k.group, k.version, config.namespace(), k.plural,
                                config.name(), object.getRaw())
                        .execute();
            } catch (ApiException e) {
                throw ApiAnswers.failure(config.key(), e, config.resourceVersion());
            } catch (RuntimeException e) {
                throw ApiAnswers.unreachable(config.key(), e);
            }
            return new DynamicKubernetesObject(client.apiClient().getJSON().getGson().toJsonTree(stored).getAsJsonObject());
        });
    }

    @Override
    public Config patch(String kind, String namespace, String name, UnaryOperator<Config> change) {
        ConfigKey key = new ConfigKey(kind, namespace, name);
        KindInformer k = watched(key);
        Config cur = get(kind, namespace, name).orElseThrow(() -> new ConfigStoreException.NotFound(key));
        for (int attempt = 1; ; attempt++) {
            try {
                return update(change.apply(cur).withResourceVersion(cur.resourceVersion()));
            } catch (ConfigStoreException.Conflict e) {
                if (attempt >= UNCONDITIONAL_RETRIES) {
                    throw e;
                }
                cur = fetch(k, key); // someone wrote in between: read again (the watch may lag) and reapply
            }
        }
    }

    /** The object as the API server has it now. */
    private Config fetch(KindInformer k, ConfigKey key) {
        KubeObjects.Read read = KubeObjects.read(parser, source(k), getFromApiServer(k, key));
        if (!read.valid()) {
            throw new ConfigStoreException.Invalid(key, new ValidationResult(read.errors().stream()
                    .map(e -> new ValidationResult.Issue(e.path(), e.reason())).toList(), List.of()));
        }
        return read.config();
    }

    @Override
    public void delete(String kind, String namespace, String name, String resourceVersion) {
        ConfigKey key = new ConfigKey(kind, namespace, name);
        KindInformer k = watched(key);
        DeleteOptions options = new DeleteOptions();
        if (resourceVersion != null && !resourceVersion.isEmpty()) {
            options.setPreconditions(new V1Preconditions().resourceVersion(resourceVersion));
        }
        KubernetesApiResponse<DynamicKubernetesObject> r;
        try {
            r = k.api.delete(namespace, name, options);
        } catch (RuntimeException e) {
            throw ApiAnswers.unreachable(key, e);
        }
        ApiAnswers.check(key, r, resourceVersion == null ? "" : resourceVersion);
        // served until the watch says it is gone: a delete is not undone by an older event then
    }

    // ---- lifecycle

    @Override
    public void registerEventHandler(String kind, Consumer<ConfigEvent> handler) {
        events.register(kind, handler);
    }

    /** Starts delivering events; the informers run with the Kubernetes client's. */
    @Override
    public void run() {
        events.start();
    }

    /** Every key of the CRDs' first list and of each watched kind's first list has been reconciled. */
    @Override
    public boolean hasSynced() {
        if (!queue.hasSynced()) {
            return false;
        }
        logMissingKinds();
        for (KindInformer k : kinds.values()) {
            CompletableFuture<Void> reconciled = k.firstListReconciled();
            if (!reconciled.isDone() || reconciled.isCompletedExceptionally()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Completes once {@link #hasSynced} would answer true: the CRDs' first list reconciled
     * (which registers the informers of their kinds), then the first list of each of those kinds.
     */
    @Override
    public CompletableFuture<Void> synced() {
        return queue.synced().thenCompose(crdsReconciled -> {
            List<CompletableFuture<Void>> kindsReconciled;
            synchronized (this) {
                kindsReconciled = kinds.values().stream().map(KindInformer::firstListReconciled).toList();
            }
            return CompletableFuture.allOf(kindsReconciled.toArray(CompletableFuture[]::new));
        }).thenRun(this::logMissingKinds);
    }

    @Override
    public boolean awaitEventsDelivered(long timeout, TimeUnit unit) throws InterruptedException {
        return events.drain(timeout, unit);
    }

    /** The kinds watched now, as {@code group/version/plural}. */
    public List<String> watching() {
        return kinds.values().stream().map(KindInformer::name).sorted().toList();
    }

    @Override
    public String describe() {
        return "kubernetes API server " + client.describe();
    }

    /** Objects in the cluster that are not served as they are, with why (the last good version may be). */
    @Override
    public List<DocumentError> errors() {
        List<DocumentError> out = new ArrayList<>();
        rejected.values().forEach(r -> out.addAll(r.errors()));
        out.sort(Comparator.comparing(DocumentError::toString));
        return out;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        term.close(); // no reconcile runs after this, nor starts an informer
        List<KindInformer> stopping;
        synchronized (this) {
            stopping = List.copyOf(kinds.values());
            kinds.clear();
        }
        stopping.forEach(k -> client.removeInformer(k.name()));
        client.removeInformer(CRD_INFORMER);
        events.close();
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

}
