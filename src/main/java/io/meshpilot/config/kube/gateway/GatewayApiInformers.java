package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesListObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiKinds.Resource;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.ObjectEvents;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The informers the Gateway API conversion reads, and what they hold as one input snapshot.
 *
 * <p>Each kind of {@link GatewayApiKinds#RESOURCES} is watched from the moment its CRD appears
 * (istiod's delayed informers): one informer per CRD name (a {@code metadata.name} field
 * selector, so only those CRDs are held, not every CRD of the cluster), decided by
 * {@link CrdVersions}; a CRD below its bundle-version minimum is ignored with istiod's warning
 * until it is upgraded; a deleted CRD stops its kind (its objects leave the inputs).
 *
 * <p>Objects are read from every namespace and filtered as istiod's informers filter them:
 * always by the discoverySelectors (independently of ENABLE_ENHANCED_RESOURCE_SCOPING, as
 * istiod sets its namespace filter on every kube client), and, all but Gateways, by revision
 * ({@link GatewayApiRevision#reads}). Namespace labels are read unfiltered (allowedRoutes selectors).
 * Secrets (istiod's field selector: no Helm releases, no service-account tokens) and ConfigMaps
 * are watched in every namespace, because the set of names the objects refer to changes with the
 * objects and the API cannot watch a changing set of names (istiod watches them all too); only
 * the referenced ones go into the snapshot, and only their changes convert again.
 */
final class GatewayApiInformers {
    private static final System.Logger LOG = System.getLogger(GatewayApiController.class.getName());
    static final String SECRET_FIELD_SELECTOR = "type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token";

    private final KubeClient client;
    private final DiscoveryNamespacesFilter namespaces;
    private final GatewayApiRevision revision;
    /** By CRD name: the informer of that one CRD. */
    private final Map<String, SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject>> crds =
            new HashMap<>();
    /** By kind: the informers of the kinds whose CRD allows it. */
    private final Map<String, SignallingInformer<DynamicKubernetesObject, DynamicKubernetesListObject>> kinds =
            new ConcurrentHashMap<>();
    /** By CRD name: the refusal last logged, so that it is logged once per change. */
    private final Map<String, String> refusals = new ConcurrentHashMap<>();
    private final SignallingInformer<V1Secret, V1SecretList> secrets;
    private final SignallingInformer<V1ConfigMap, V1ConfigMapList> configMaps;
    private final Runnable changed;
    /** Told the key of every Gateway API object added, changed (its status too) or deleted. */
    private final List<Consumer<ConfigKey>> objectListeners = new CopyOnWriteArrayList<>();
    /** {@code Secret/ns/name} and {@code ConfigMap/ns/name} the last snapshot took: only their changes matter. */
    private volatile Set<String> referenced = Set.of();

    /**
     * Registers the informers with {@code client} (they start with its informers).
     *
     * @param crdChanged told the name of a CRD that was added, changed or deleted
     * @param changed    told that an input of the conversion changed
     */
    GatewayApiInformers(KubeClient client, GatewayApiRevision revision, Consumer<String> crdChanged, Runnable changed) {
        this.client = client;
        this.namespaces = client.discoveryNamespaces();
        this.revision = revision;
        this.changed = changed;
        var crdApi = new DynamicKubernetesApi("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                client.apiClient());
        for (Resource r : GatewayApiKinds.RESOURCES) {
            String name = "apiextensions.k8s.io/v1/customresourcedefinitions/" + r.crdName();
            var informer = new SignallingInformer<>(DynamicKubernetesObject.class,
                    ResourceListerWatcher.of(name, crdApi, null, null, "metadata.name=" + r.crdName()), new Cache<>(),
                    client.watchErrorHandler(name));
            informer.addEventHandler(handler(o -> crdChanged.accept(r.crdName())));
            crds.put(r.crdName(), informer);
            client.addInformer(name, informer);
        }
        this.secrets = new SignallingInformer<>(V1Secret.class, ResourceListerWatcher.of("gateway-api Secrets",
                new GenericKubernetesApi<>(V1Secret.class, V1SecretList.class, "", "v1", "secrets", client.apiClient()),
                null, null, SECRET_FIELD_SELECTOR), new Cache<>(), client.watchErrorHandler("gateway-api Secrets"));
        this.configMaps = new SignallingInformer<>(V1ConfigMap.class, ResourceListerWatcher.all("gateway-api ConfigMaps",
                new GenericKubernetesApi<>(V1ConfigMap.class, V1ConfigMapList.class, "", "v1", "configmaps",
                        client.apiClient())), new Cache<>(), client.watchErrorHandler("gateway-api ConfigMaps"));
        secrets.addEventHandler(handler(s -> referencedChanged("Secret", s)));
        configMaps.addEventHandler(handler(c -> referencedChanged("ConfigMap", c)));
        namespaces.informer().addEventHandler(handler(n -> changed.run()));
        namespaces.addHandler((selected, deselected) -> changed.run());
        client.addInformer("gateway-api Secrets", secrets);
        client.addInformer("gateway-api ConfigMaps", configMaps);
    }

    private void referencedChanged(String kind, KubernetesObject o) {
        if (referenced.contains(kind + "/" + o.getMetadata().getNamespace() + "/" + o.getMetadata().getName())) {
            changed.run();
        }
    }

    private static <T extends KubernetesObject> ResourceEventHandler<T> handler(Consumer<T> changed) {
        return ObjectEvents.each(changed);
    }

    /** Completes once the CRDs, Secrets, ConfigMaps and Namespaces have been listed. */
    CompletableFuture<Void> baseSynced() {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        crds.values().forEach(i -> all.add(i.synced()));
        all.add(secrets.synced());
        all.add(configMaps.synced());
        all.add(SignallingInformer.syncedOf(namespaces.informer()));
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new));
    }

    /** Completes once every kind watched now has been listed. */
    CompletableFuture<Void> kindsSynced() {
        return CompletableFuture.allOf(kinds.values().stream().map(SignallingInformer::synced)
                .toArray(CompletableFuture[]::new));
    }

    /** Every CRD name there is an informer for. */
    Set<String> crdNames() {
        return crds.keySet();
    }

    /**
     * Brings the kind of CRD {@code crdName} in line with the CRD as its informer holds it: starts
     * watching it, or stops, or logs why it is ignored. On the controller's worker.
     */
    void reconcileCrd(String crdName) {
        Resource resource = GatewayApiKinds.RESOURCES.stream().filter(r -> r.crdName().equals(crdName)).findFirst()
                .orElseThrow();
        List<DynamicKubernetesObject> listed = crds.get(crdName).getIndexer().list();
        Optional<CrdVersions.Decision> decision = listed.isEmpty() ? Optional.empty()
                : CrdVersions.decide(listed.getFirst().getRaw());
        if (decision.isPresent() && decision.get().watched()) {
            refusals.remove(crdName);
            if (!kinds.containsKey(resource.kind())) {
                startKind(resource);
            }
            return;
        }
        decision.ifPresent(d -> {
            if (!d.refusal().equals(refusals.put(crdName, d.refusal()))) {
                LOG.log(Level.WARNING, d.refusal());
            }
        });
        if (decision.isEmpty()) {
            refusals.remove(crdName);
        }
        var stopped = kinds.remove(resource.kind());
        if (stopped != null) {
            LOG.log(Level.WARNING, "CRD " + crdName + (decision.isEmpty() ? " deleted" : " no longer usable")
                    + ": " + resource.kind() + " objects are no longer converted");
            client.removeInformer(resource.informerName());
            changed.run();
        }
    }

    private void startKind(Resource r) {
        var api = new DynamicKubernetesApi(r.group(), r.version(), r.plural(), client.apiClient());
        var informer = new SignallingInformer<>(DynamicKubernetesObject.class,
                ResourceListerWatcher.all(r.informerName(), api), new Cache<>(),
                client.watchErrorHandler(r.informerName()));
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(DynamicKubernetesObject obj) {
                changed.run();
                tell(r, obj);
            }

            @Override
            public void onUpdate(DynamicKubernetesObject before, DynamicKubernetesObject after) {
                // a status write (ours, or another controller's) converts to the same config
                if (!withoutStatus(before).equals(withoutStatus(after))) {
                    changed.run();
                }
                tell(r, after);
            }

            @Override
            public void onDelete(DynamicKubernetesObject obj, boolean finalStateUnknown) {
                changed.run();
                tell(r, obj);
            }
        });
        kinds.put(r.kind(), informer);
        LOG.log(Level.INFO, "CRD " + r.crdName() + " installed: watching " + r.informerName());
        client.addInformer(r.informerName(), informer);
        changed.run(); // even with no objects yet: whoever acts after a conversion learns of the kind
    }

    /** Whether the kind's CRD allows it to be read and its informer runs. */
    boolean watched(String kind) {
        return kinds.containsKey(kind);
    }

    private void tell(Resource r, DynamicKubernetesObject o) {
        ConfigKey key = new ConfigKey(r.kind(), nullToEmpty(o.getMetadata().getNamespace()), o.getMetadata().getName());
        objectListeners.forEach(l -> l.accept(key));
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    /** Tells {@code listener} the key of every Gateway API object event, status changes included. */
    void addObjectListener(Consumer<ConfigKey> listener) {
        objectListeners.add(listener);
    }

    /**
     * The object of {@code key} as its informer holds it now, status included, unfiltered; empty
     * when its kind is not watched or it does not exist.
     */
    Optional<DynamicKubernetesObject> live(ConfigKey key) {
        var informer = kinds.get(key.kind());
        return informer == null ? Optional.empty() : Optional.ofNullable(informer.getIndexer()
                .getByKey(key.namespace().isEmpty() ? key.name() : key.namespace() + "/" + key.name()));
    }

    /** The object but its status and the metadata the API server changes on every write. */
    private static JsonObject withoutStatus(DynamicKubernetesObject o) {
        JsonObject copy = o.getRaw().deepCopy();
        copy.remove("status");
        JsonElement meta = copy.get("metadata");
        if (meta != null && meta.isJsonObject()) {
            meta.getAsJsonObject().remove("resourceVersion");
            meta.getAsJsonObject().remove("managedFields");
        }
        return copy;
    }

    /** The kinds watched now, as {@code group/version/plural}. */
    List<String> watching() {
        return GatewayApiKinds.RESOURCES.stream().filter(r -> kinds.containsKey(r.kind()))
                .map(Resource::informerName).toList();
    }

    /** Every object of a watched kind this control plane reads, namespaces and (but Gateways) revision filtered. */
    List<GatewayApiObject> objects() {
        List<GatewayApiObject> out = new ArrayList<>();
        for (Resource r : GatewayApiKinds.RESOURCES) {
            var informer = kinds.get(r.kind());
            if (informer == null) {
                continue;
            }
            for (DynamicKubernetesObject o : informer.getIndexer().list()) {
                JsonObject raw = o.getRaw().deepCopy();
                // list items come without their kind and apiVersion
                raw.addProperty("kind", r.kind());
                raw.addProperty("apiVersion", r.group() + "/" + r.version());
                GatewayApiObject object = GatewayApiObject.fromJson(raw);
                if (namespaces.selects(object.namespace()) && inRevision(object)) {
                    out.add(object);
                }
            }
        }
        return out;
    }

    /**
     * istiod's buildClient: every kind but Gateway is read by revision (LabelsInRevision).
     * Gateways of every revision are converted, so that relabelling one to another revision does
     * not take its config away from the pods still connected here (istio#59959); which revision
     * owns it decides only who writes its status.
     */
    private boolean inRevision(GatewayApiObject o) {
        return o.kind().equals(GatewayApiKinds.GATEWAY) || revision.reads(o.labels());
    }

    /** The labels of every namespace (unfiltered: allowedRoutes selectors may name any). */
    Map<String, Map<String, String>> namespaceLabels() {
        Map<String, Map<String, String>> out = new HashMap<>();
        for (V1Namespace ns : namespaces.informer().getIndexer().list()) {
            var labels = ns.getMetadata().getLabels();
            out.put(ns.getMetadata().getName(), labels == null ? Map.of() : Map.copyOf(labels));
        }
        return out;
    }

    /** The labels of {@code namespace}; null when it is not known (cluster-scoped objects have none). */
    Map<String, String> namespaceLabels(String namespace) {
        V1Namespace ns = namespace.isEmpty() ? null : namespaces.informer().getIndexer().getByKey(namespace);
        if (ns == null) {
            return null;
        }
        return ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels();
    }

    /** The data of the Secrets {@code objects} refer to, by {@code namespace/name}; remembers them as the ones that matter. */
    Map<String, Map<String, byte[]>> referencedSecrets(References refs) {
        Map<String, Map<String, byte[]>> out = new HashMap<>();
        for (String key : refs.secrets()) {
            V1Secret s = secrets.getIndexer().getByKey(key);
            if (s != null && namespaces.selects(s.getMetadata().getNamespace())) {
                out.put(key, s.getData() == null ? Map.of() : Map.copyOf(s.getData()));
            }
        }
        return out;
    }

    /** The data of the ConfigMaps {@code objects} refer to, by {@code namespace/name}. */
    Map<String, Map<String, String>> referencedConfigMaps(References refs) {
        Map<String, Map<String, String>> out = new HashMap<>();
        for (String key : refs.configMaps()) {
            V1ConfigMap c = configMaps.getIndexer().getByKey(key);
            if (c != null && namespaces.selects(c.getMetadata().getNamespace())) {
                out.put(key, c.getData() == null ? Map.of() : Map.copyOf(c.getData()));
            }
        }
        return out;
    }

    /**
     * From now on only changes of these Secrets and ConfigMaps convert again. Returns whether the
     * set changed: one newly referenced may have arrived while it was not yet watched.
     */
    boolean watchReferences(References refs) {
        Set<String> keys = new HashSet<>();
        refs.secrets().forEach(k -> keys.add("Secret/" + k));
        refs.configMaps().forEach(k -> keys.add("ConfigMap/" + k));
        boolean changed = !keys.equals(referenced);
        referenced = Set.copyOf(keys);
        return changed;
    }

    void close() {
        for (Resource r : GatewayApiKinds.RESOURCES) {
            client.removeInformer("apiextensions.k8s.io/v1/customresourcedefinitions/" + r.crdName());
            if (kinds.remove(r.kind()) != null) {
                client.removeInformer(r.informerName());
            }
        }
        client.removeInformer("gateway-api Secrets");
        client.removeInformer("gateway-api ConfigMaps");
    }
}
