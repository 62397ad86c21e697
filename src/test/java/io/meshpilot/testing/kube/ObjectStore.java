package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The stand-in's etcd: every object by resource, namespace and name, one global revision
 * counter (the resourceVersion of every object and list), and the history of changes that
 * watches replay from a resourceVersion. History older than the compacted revision is gone, as
 * after an etcd compaction: a watch from before it is answered 410 Gone.
 *
 * <p>It also does what the real server's built-in controllers would do at once: a CRD is
 * established (its kinds served) when created, a deleted CRD takes its objects with it, a
 * deleted Namespace takes its objects with it, and an object with finalizers is only marked
 * deleted until the last finalizer is removed.
 */
final class ObjectStore {
    /** Beyond this many events the oldest are compacted away, as the real watch cache is bounded. */
    private static final int HISTORY_LIMIT = 200_000;

    /** One change; {@code previous} is the object before it (null for ADDED). */
    record Event(long revision, String storageKey, String type, JsonObject object, JsonObject previous) {
    }

    /** The objects of one resource at one revision. */
    record Snapshot(long revision, List<JsonObject> items) {
    }

    private final ResourceCatalog catalog;
    /** storage key -> "namespace/name" -> object (namespace empty for cluster-scoped). */
    private final Map<String, TreeMap<String, JsonObject>> objects = new TreeMap<>();
    private final ArrayDeque<Event> history = new ArrayDeque<>();
    private final Set<Consumer<Event>> watchers = new CopyOnWriteArraySet<>();
    private long revision = 1;
    /** Cluster IPs handed out so far, from 10.96.0.10 (as a service CIDR of 10.96.0.0/12 would). */
    private int clusterIpsAllocated;
    /** Cluster IPs given or allocated so far (never freed: a test's Services are few). */
    private final Set<String> clusterIpsInUse = new HashSet<>();
    /** A watch from a resourceVersion below this one cannot be served. */
    private long oldestWatchable = 1;

    ObjectStore(ResourceCatalog catalog) {
        this.catalog = catalog;
    }

    synchronized long revision() {
        return revision;
    }

    synchronized Optional<JsonObject> get(ResourceType t, String namespace, String name) {
        return Optional.ofNullable(bucket(t).get(key(t, namespace, name))).map(JsonObject::deepCopy);
    }

    /**
     * Objects of a resource, in one namespace or (null) all, ordered by namespace and name. The
     * stored objects themselves, not copies (a stored object is never changed: every write
     * stores a new one), so callers must copy before changing one.
     */
    synchronized Snapshot list(ResourceType t, String namespace) {
        List<JsonObject> items = new ArrayList<>();
        for (JsonObject o : bucket(t).values()) {
            if (namespace == null || namespace.equals(Json.string(o, "metadata", "namespace"))) {
                items.add(o);
            }
        }
        return new Snapshot(revision, items);
    }

    synchronized JsonObject create(ResourceType t, String namespace, JsonObject body, boolean dryRun) {
        JsonObject o = body.deepCopy();
        JsonObject meta = Json.metadata(o);
        String name = Json.string(meta, "name");
        if ((name == null || name.isEmpty()) && Json.string(meta, "generateName") != null) {
            name = Json.string(meta, "generateName") + UUID.randomUUID().toString().substring(0, 5);
            meta.addProperty("name", name);
        }
        if (name == null || name.isEmpty()) {
            throw ApiError.invalid(t, "", "metadata.name: Required value: name or generateName is required");
        }
        checkNamespace(t, namespace, meta, name);
        if (bucket(t).containsKey(key(t, namespace, name))) {
            throw ApiError.alreadyExists(t, name);
        }
        if (t.namespaced()) {
            meta.addProperty("namespace", namespace);
            ResourceType namespaces = catalog.find("", "v1", "namespaces").orElseThrow();
            if (!bucket(namespaces).containsKey(key(namespaces, null, namespace))) {
                throw ApiError.notFound(namespaces, namespace);
            }
        }
        o.addProperty("apiVersion", t.apiVersion());
        o.addProperty("kind", t.kind());
        meta.addProperty("uid", UUID.randomUUID().toString());
        meta.addProperty("creationTimestamp", now());
        meta.addProperty("generation", 1);
        meta.remove("deletionTimestamp");
        allocateClusterIp(t, o, null);
        if (t.statusSubresource()) {
            // status is the controllers' to write, through the status subresource
            o.remove("status");
        }
        establish(t, o);
        if (dryRun) {
            meta.addProperty("resourceVersion", Long.toString(revision));
            return o;
        }
        commit(t, "ADDED", key(t, namespace, name), o, null);
        return o.deepCopy();
    }

    /**
     * Replaces an object (PUT, or the result of a PATCH). A resourceVersion in the body must be
     * the current one (409 otherwise). Through the main resource the status is kept; through
     * the status subresource only the status changes.
     */
    synchronized JsonObject update(ResourceType t, String namespace, String name, JsonObject body, boolean status,
                                   boolean dryRun) {
        JsonObject current = bucket(t).get(key(t, namespace, name));
        if (current == null) {
            throw ApiError.notFound(t, name);
        }
        JsonObject meta = Json.metadata(body);
        String bodyName = Json.string(meta, "name");
        if (bodyName != null && !bodyName.equals(name)) {
            throw ApiError.badRequest("the name of the object (" + bodyName + ") does not match the name on the URL ("
                    + name + ")");
        }
        checkNamespace(t, namespace, meta, name);
        String expected = Json.string(meta, "resourceVersion");
        String actual = Json.string(current, "metadata", "resourceVersion");
        if (expected != null && !expected.isEmpty() && !expected.equals(actual)) {
            throw ApiError.conflict(t, name, "the object has been modified; please apply your changes to the latest "
                    + "version and try again");
        }
        JsonObject next;
        if (status) {
            next = current.deepCopy();
            JsonElement newStatus = body.get("status");
            if (newStatus == null) {
                next.remove("status");
            } else {
                next.add("status", newStatus.deepCopy());
            }
        } else {
            next = body.deepCopy();
            if (t.statusSubresource()) {
                JsonElement oldStatus = current.get("status");
                next.remove("status");
                if (oldStatus != null) {
                    next.add("status", oldStatus.deepCopy());
                }
            }
        }
        JsonObject nextMeta = Json.metadata(next);
        JsonObject currentMeta = current.getAsJsonObject("metadata");
        for (String kept : List.of("uid", "creationTimestamp", "generation", "deletionTimestamp", "namespace")) {
            nextMeta.remove(kept);
            if (currentMeta.has(kept)) {
                nextMeta.add(kept, currentMeta.get(kept).deepCopy());
            }
        }
        nextMeta.addProperty("name", name);
        next.addProperty("apiVersion", t.apiVersion());
        next.addProperty("kind", t.kind());
        nextMeta.addProperty("resourceVersion", actual);
        allocateClusterIp(t, next, current);
        if (sameContent(current, next)) {
            return current.deepCopy();
        }
        if (specChanged(current, next)) {
            nextMeta.addProperty("generation", currentMeta.get("generation").getAsLong() + 1);
        }
        establish(t, next);
        if (dryRun) {
            return next;
        }
        if (nextMeta.has("deletionTimestamp") && Json.strings(nextMeta.get("finalizers")).isEmpty()) {
            return remove(t, key(t, namespace, name), next);
        }
        commit(t, "MODIFIED", key(t, namespace, name), next, current);
        return next.deepCopy();
    }

    /** Reads, changes and writes one object under the store's lock (PATCH). */
    synchronized JsonObject modify(ResourceType t, String namespace, String name, boolean status, boolean dryRun,
                                   UnaryOperator<JsonObject> change) {
        JsonObject current = get(t, namespace, name).orElseThrow(() -> ApiError.notFound(t, name));
        String currentVersion = Json.string(current, "metadata", "resourceVersion");
        JsonObject changed = change.apply(current);
        // a patch without a resourceVersion applies to whatever is current
        if (Json.string(changed, "metadata", "resourceVersion") == null) {
            Json.metadata(changed).addProperty("resourceVersion", currentVersion);
        }
        return update(t, namespace, name, changed, status, dryRun);
    }

    /**
     * Deletes an object (or marks it deleted while it has finalizers). The preconditions, when
     * given, must match (409 otherwise).
     */
    synchronized JsonObject delete(ResourceType t, String namespace, String name, String precondUid,
                                   String precondVersion, boolean dryRun) {
        String key = key(t, namespace, name);
        JsonObject current = bucket(t).get(key);
        if (current == null) {
            throw ApiError.notFound(t, name);
        }
        if (precondUid != null && !precondUid.equals(Json.string(current, "metadata", "uid"))) {
            throw ApiError.conflict(t, name, "Precondition failed: UID in precondition: " + precondUid
                    + ", UID in object meta: " + Json.string(current, "metadata", "uid"));
        }
        if (precondVersion != null && !precondVersion.equals(Json.string(current, "metadata", "resourceVersion"))) {
            throw ApiError.conflict(t, name, "Precondition failed: ResourceVersion in precondition: " + precondVersion
                    + ", ResourceVersion in object meta: " + Json.string(current, "metadata", "resourceVersion"));
        }
        if (dryRun) {
            return current.deepCopy();
        }
        if (!Json.strings(current.getAsJsonObject("metadata").get("finalizers")).isEmpty()) {
            if (current.getAsJsonObject("metadata").has("deletionTimestamp")) {
                return current.deepCopy();
            }
            JsonObject marked = current.deepCopy();
            Json.metadata(marked).addProperty("deletionTimestamp", now());
            commit(t, "MODIFIED", key, marked, current);
            return marked.deepCopy();
        }
        return remove(t, key, current);
    }

    private JsonObject remove(ResourceType t, String key, JsonObject last) {
        JsonObject gone = last.deepCopy();
        if (t.kind().equals("Namespace")) {
            removeNamespaceContents(Json.string(gone, "metadata", "name"));
        }
        if (t.group().equals(ResourceCatalog.CRD_GROUP) && t.kind().equals("CustomResourceDefinition")) {
            catalog.unregister(Json.string(gone, "metadata", "name")).ifPresent(this::removeAll);
        }
        JsonObject previous = bucket(t).get(key);
        bucket(t).remove(key);
        commitDeleted(t.storageKey(), gone, previous);
        return gone.deepCopy();
    }

    private void removeNamespaceContents(String namespace) {
        for (Map.Entry<String, TreeMap<String, JsonObject>> bucket : objects.entrySet()) {
            List<String> keys = bucket.getValue().keySet().stream().filter(k -> k.startsWith(namespace + "/")).toList();
            for (String k : keys) {
                JsonObject o = bucket.getValue().remove(k);
                commitDeleted(bucket.getKey(), o.deepCopy(), o);
            }
        }
    }

    private void removeAll(String storageKey) {
        TreeMap<String, JsonObject> bucket = objects.remove(storageKey);
        if (bucket != null) {
            bucket.values().forEach(o -> commitDeleted(storageKey, o.deepCopy(), o));
        }
    }

    private void commitDeleted(String storageKey, JsonObject gone, JsonObject previous) {
        revision++;
        Json.metadata(gone).addProperty("resourceVersion", Long.toString(revision));
        record(new Event(revision, storageKey, "DELETED", gone, previous));
    }

    private void commit(ResourceType t, String type, String key, JsonObject o, JsonObject previous) {
        revision++;
        Json.metadata(o).addProperty("resourceVersion", Long.toString(revision));
        bucket(t).put(key, o);
        record(new Event(revision, t.storageKey(), type, o.deepCopy(), previous));
    }

    private void record(Event e) {
        history.addLast(e);
        while (history.size() > HISTORY_LIMIT) {
            oldestWatchable = history.removeFirst().revision();
        }
        watchers.forEach(w -> w.accept(e));
    }

    /**
     * Starts a watch: under the lock, the events a watch from {@code fromRevision} must see
     * first (the current objects as ADDED when {@code fromRevision} is null, else the history
     * after it), then every later event to {@code sink} until {@link #unwatch}. 410 Gone when
     * the history after {@code fromRevision} has been compacted.
     */
    synchronized List<Event> watch(ResourceType t, Long fromRevision, Consumer<Event> sink) {
        List<Event> initial = new ArrayList<>();
        if (fromRevision == null) {
            for (JsonObject o : bucket(t).values()) {
                initial.add(new Event(revision, t.storageKey(), "ADDED", o.deepCopy(), null));
            }
        } else {
            if (fromRevision < oldestWatchable) {
                throw ApiError.expired(fromRevision, oldestWatchable);
            }
            for (Event e : history) {
                if (e.revision() > fromRevision && e.storageKey().equals(t.storageKey())) {
                    initial.add(e);
                }
            }
        }
        watchers.add(sink);
        return initial;
    }

    void unwatch(Consumer<Event> sink) {
        watchers.remove(sink);
    }

    /** Forgets all history up to now: a watch from any resourceVersion handed out so far gets 410 Gone. */
    synchronized void compact() {
        revision++;
        oldestWatchable = revision;
        history.clear();
    }

    /**
     * Numbers every object again from the first revision, as a cluster rebuilt from its
     * manifests (or an etcd restored without bumped revisions) does: the objects stay, but the
     * resourceVersions clients saw now name other revisions (mostly lower ones), and numbers
     * handed out before are handed out again for other contents. The history is gone with the
     * old numbering: a watch from below the new current revision gets 410 Gone, one from at or
     * above it is sent the changes from now on.
     */
    synchronized void resetVersions() {
        revision = 1;
        for (TreeMap<String, JsonObject> bucket : objects.values()) {
            for (Map.Entry<String, JsonObject> e : bucket.entrySet()) {
                // a copy: stored objects are never changed, lists hand them out
                JsonObject renumbered = e.getValue().deepCopy();
                revision++;
                Json.metadata(renumbered).addProperty("resourceVersion", Long.toString(revision));
                e.setValue(renumbered);
            }
        }
        history.clear();
        oldestWatchable = revision;
    }

    /** Namespaces Kubernetes creates for itself, so a fresh stand-in looks like a fresh cluster. */
    synchronized void createSystemNamespaces() {
        ResourceType namespaces = catalog.find("", "v1", "namespaces").orElseThrow();
        for (String ns : List.of("default", "kube-system", "kube-public", "kube-node-lease")) {
            if (!bucket(namespaces).containsKey(key(namespaces, null, ns))) {
                JsonObject o = new JsonObject();
                Json.metadata(o).addProperty("name", ns);
                create(namespaces, null, o, false);
            }
        }
    }

    /** What a CRD's controller and the namespace lifecycle would write into the object. */
    /**
     * The API server's own part of a Service (its REST storage, not a controller): a Service
     * of a type with a cluster IP and none given gets one allocated on create, never one another
     * Service asked for, and an update that leaves it out keeps the allocated one, as kubectl
     * apply's patches do.
     */
    private void allocateClusterIp(ResourceType t, JsonObject o, JsonObject current) {
        if (!t.group().isEmpty() || !t.kind().equals("Service") || !o.has("spec") || !o.get("spec").isJsonObject()) {
            return;
        }
        JsonObject spec = o.getAsJsonObject("spec");
        defaultTargetPorts(spec);
        String given = Json.string(spec, "clusterIP");
        if ("ExternalName".equals(Json.string(spec, "type"))) {
            return;
        }
        if (given != null && !given.isEmpty()) {
            clusterIpsInUse.add(given); // the allocator leaves out what a Service asked for
            return;
        }
        String ip;
        String kept = current == null ? null : Json.string(current, "spec", "clusterIP");
        if (kept != null && !kept.isEmpty()) {
            ip = kept;
        } else {
            do {
                int n = 10 + clusterIpsAllocated++;
                ip = "10.96." + (n / 256) + "." + (n % 256);
            } while (!clusterIpsInUse.add(ip));
        }
        spec.addProperty("clusterIP", ip);
        spec.add("clusterIPs", Json.array(List.of(ip)));
    }

    /**
     * The API server's defaulting of a Service port (SetDefaults_Service): a port without a
     * target port targets the same number.
     */
    private static void defaultTargetPorts(JsonObject spec) {
        if (!spec.has("ports") || !spec.get("ports").isJsonArray()) {
            return;
        }
        for (var p : spec.getAsJsonArray("ports")) {
            if (p.isJsonObject() && p.getAsJsonObject().has("port") && (!p.getAsJsonObject().has("targetPort")
                    || p.getAsJsonObject().get("targetPort").getAsString().matches("0?"))) {
                p.getAsJsonObject().add("targetPort", p.getAsJsonObject().get("port"));
            }
        }
    }

    private void establish(ResourceType t, JsonObject o) {
        if (t.kind().equals("Namespace") && t.group().isEmpty()) {
            Json.object(o, "status").addProperty("phase",
                    Json.metadata(o).has("deletionTimestamp") ? "Terminating" : "Active");
        }
        if (t.group().equals(ResourceCatalog.CRD_GROUP) && t.kind().equals("CustomResourceDefinition")) {
            catalog.register(o).ifPresent(why -> {
                throw ApiError.invalid(t, Json.string(o, "metadata", "name"), why);
            });
            JsonObject status = new JsonObject();
            JsonArray conditions = new JsonArray();
            for (String type : List.of("NamesAccepted", "Established")) {
                JsonObject c = new JsonObject();
                c.addProperty("type", type);
                c.addProperty("status", "True");
                c.addProperty("lastTransitionTime", now());
                c.addProperty("reason", type.equals("Established") ? "InitialNamesAccepted" : "NoConflicts");
                c.addProperty("message", type.equals("Established") ? "the initial names have been accepted"
                        : "no conflicts found");
                conditions.add(c);
            }
            status.add("conditions", conditions);
            status.add("acceptedNames", o.getAsJsonObject("spec").getAsJsonObject("names").deepCopy());
            List<String> stored = new ArrayList<>();
            for (JsonElement v : o.getAsJsonObject("spec").getAsJsonArray("versions")) {
                if (v.getAsJsonObject().has("storage") && v.getAsJsonObject().get("storage").getAsBoolean()) {
                    stored.add(Json.string(v.getAsJsonObject(), "name"));
                }
            }
            status.add("storedVersions", Json.array(stored));
            o.add("status", status);
        }
    }

    private static void checkNamespace(ResourceType t, String namespace, JsonObject meta, String name) {
        String bodyNamespace = Json.string(meta, "namespace");
        if (t.namespaced() && bodyNamespace != null && !bodyNamespace.isEmpty() && !bodyNamespace.equals(namespace)) {
            throw ApiError.badRequest("the namespace of the provided object does not match the namespace sent on the "
                    + "request");
        }
        if (!t.namespaced()) {
            meta.remove("namespace");
        }
        if (t.namespaced() && (namespace == null || namespace.isEmpty())) {
            throw ApiError.badRequest("an empty namespace may not be set when a resource name is provided: " + name);
        }
    }

    private TreeMap<String, JsonObject> bucket(ResourceType t) {
        return objects.computeIfAbsent(t.storageKey(), k -> new TreeMap<>());
    }

    private static String key(ResourceType t, String namespace, String name) {
        return (t.namespaced() ? namespace : "") + "/" + name;
    }

    private static boolean sameContent(JsonObject a, JsonObject b) {
        return a.equals(b);
    }

    /** A change outside metadata and status: what moves metadata.generation. */
    private static boolean specChanged(JsonObject before, JsonObject after) {
        JsonObject a = before.deepCopy();
        JsonObject b = after.deepCopy();
        for (JsonObject o : List.of(a, b)) {
            o.remove("metadata");
            o.remove("status");
        }
        return !a.equals(b);
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
