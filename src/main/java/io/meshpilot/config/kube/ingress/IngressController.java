package io.meshpilot.config.kube.ingress;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1IngressClass;
import io.kubernetes.client.openapi.models.V1IngressClassList;
import io.kubernetes.client.openapi.models.V1IngressList;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceList;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.ConvertedConfigStore;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * istiod's ingress controller (pilot/pkg/config/kube/ingress): watches Ingresses,
 * IngressClasses and the Services their backends name, and keeps the Gateways and
 * VirtualServices converted from the Ingresses it serves ({@link IngressClassSelection}) in
 * its store (a {@link ConvertedConfigStore}). The conversion spans Ingresses (one VirtualService per host of
 * all of them), so every change queues the one key {@value #ALL} and the whole set is converted
 * again; a burst of changes is one conversion. What cannot be converted (a backend Service
 * that does not exist, a named port it lacks, a TLS section without a Secret) is logged once
 * per Ingress when it appears and when it is gone, and listed by {@link #errors()}; the rest
 * of that Ingress and every other one is served.
 */
public final class IngressController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(IngressController.class.getName());
    private static final String ALL = "ingresses";
    /** Where the errors come from, as the CRD store names its sources. */
    private static final String SOURCE = "kubernetes networking.k8s.io/v1/ingresses";
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));

    private final DiscoveryNamespacesFilter namespaces;
    private final SignallingInformer<V1Ingress, V1IngressList> ingresses;
    private final SignallingInformer<V1IngressClass, V1IngressClassList> classes;
    private final SharedIndexInformer<V1Service> services;
    private final SharedIndexInformer<V1Pod> pods;
    private final SharedIndexInformer<V1Node> nodes;
    private final Supplier<MeshConfig> mesh;
    private final IngressConversion conversion;
    private final MemoryConfigStore converted;
    private final ConvertedConfigStore store;
    private final ControllerQueue<String> queue = new ControllerQueue<>("ingress-controller", RETRY, key -> convert());
    private final List<Runnable> convertedHandlers = new CopyOnWriteArrayList<>();
    private volatile Map<String, List<String>> problems = Map.of();
    /** {@code namespace/name} of the Services a served Ingress names: only their changes convert again. */
    private volatile Set<String> watchedServices = Set.of();
    /** {@code namespace/name} of the Ingresses served at the last conversion. */
    private volatile Set<String> served = Set.of();
    private ControllerQueue<String>.Term term;

    /**
     * Registers the informers with {@code client} (they start with the client's informers).
     *
     * @param mesh             the current mesh config (ingressControllerMode, ingressClass, ingressSelector, ingressService)
     * @param ingressNamespace K8S_INGRESS_NS: where the Gateways are put and the ingress Service is looked for
     */
    public IngressController(KubeClient client, Supplier<MeshConfig> mesh, String ingressNamespace, String domainSuffix) {
        this.namespaces = client.discoveryNamespaces();
        this.mesh = mesh;
        this.conversion = new IngressConversion(ingressNamespace, domainSuffix);
        this.converted = new MemoryConfigStore("ingress", List.of(Schemas.PILOT.forKind("Gateway").orElseThrow(),
                Schemas.PILOT.forKind("VirtualService").orElseThrow()), false);
        this.store = new ConvertedConfigStore(converted, "converted from Kubernetes Ingresses: change the Ingress instead",
                this::start, this::synced, this::errors);
        this.ingresses = informer(client, "networking.k8s.io/v1/ingresses", V1Ingress.class, V1IngressList.class,
                "ingresses");
        this.classes = informer(client, "networking.k8s.io/v1/ingressclasses", V1IngressClass.class,
                V1IngressClassList.class, "ingressclasses");
        // the registry's informers (the factory holds one per type)
        this.services = coreInformer(client, "Service", V1Service.class, V1ServiceList.class, "services");
        this.pods = coreInformer(client, "Pod", V1Pod.class, V1PodList.class, "pods");
        this.nodes = coreInformer(client, "Node", V1Node.class, V1NodeList.class, "nodes");
        // an Ingress whose status alone changed (the status writer's own writes) converts to the same config
        ingresses.addEventHandler(new ObjectChanges<>((before, after) -> !Objects.equals(before.getSpec(), after.getSpec())
                || !Objects.equals(before.getMetadata().getAnnotations(), after.getMetadata().getAnnotations()),
                i -> queue.add(ALL)));
        classes.addEventHandler(new ObjectChanges<>(c -> queue.add(ALL)));
        services.addEventHandler(new ObjectChanges<>(s -> {
            if (watchedServices.contains(key(s.getMetadata().getNamespace(), s.getMetadata().getName()))) {
                queue.add(ALL);
            }
        }));
        namespaces.addHandler((selected, deselected) -> queue.add(ALL));
        client.addInformer("networking.k8s.io/v1/ingresses", ingresses);
        client.addInformer("networking.k8s.io/v1/ingressclasses", classes);
    }

    private static <T extends KubernetesObject, L extends KubernetesListObject> SignallingInformer<T, L> informer(
            KubeClient client, String name, Class<T> type, Class<L> listType, String plural) {
        var api = new GenericKubernetesApi<>(type, listType, "networking.k8s.io", "v1", plural, client.apiClient());
        return new SignallingInformer<>(type, ResourceListerWatcher.all(name, api), new Cache<>(),
                client.watchErrorHandler(name));
    }

    private static <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T> coreInformer(
            KubeClient client, String name, Class<T> type, Class<L> listType, String plural) {
        var api = new GenericKubernetesApi<>(type, listType, "", "v1", plural, client.apiClient());
        return client.informers().sharedIndexInformerFor(ResourceListerWatcher.all(name, api), type, 0,
                client.watchErrorHandler(name));
    }

    /** The read-only store of the converted config, for the aggregate cache. */
    public ConvertedConfigStore store() {
        return store;
    }

    /** The mesh config changed: its ingress settings may select other Ingresses or gateways. */
    public void meshChanged() {
        queue.add(ALL);
    }

    /** Runs {@code handler} on the controller's thread after each conversion (the status writer queues its keys). */
    public void onConverted(Runnable handler) {
        convertedHandlers.add(handler);
    }

    /** The Ingresses served at the last conversion, as {@code namespace/name}. */
    Set<String> served() {
        return served;
    }

    /** The Ingress informer, for the status writer. */
    SignallingInformer<V1Ingress, V1IngressList> ingresses() {
        return ingresses;
    }

    MeshConfig mesh() {
        return mesh.get();
    }

    String ingressNamespace() {
        return conversion.ingressNamespace();
    }

    SharedIndexInformer<V1Service> services() {
        return services;
    }

    SharedIndexInformer<V1Pod> pods() {
        return pods;
    }

    SharedIndexInformer<V1Node> nodes() {
        return nodes;
    }

    /** What the last conversion could not serve, per Ingress and reason, as the config errors list them. */
    public List<DocumentError> errors() {
        List<DocumentError> out = new ArrayList<>();
        problems.forEach((ingress, reasons) -> {
            int slash = ingress.indexOf('/');
            for (String reason : reasons) {
                out.add(new DocumentError(SOURCE, 0, 0, "Ingress", ingress.substring(0, slash),
                        ingress.substring(slash + 1), "", reason));
            }
        });
        return out;
    }

    synchronized void start() {
        if (term == null) {
            term = queue.start(CompletableFuture.allOf(ingresses.synced(), classes.synced(),
                    SignallingInformer.syncedOf(services)), this::convert);
        }
    }

    /** Completes once the informers' first lists were converted. */
    CompletableFuture<Void> synced() {
        return queue.synced();
    }

    private Outcome convert() {
        MeshConfig meshConfig = mesh.get();
        List<V1Ingress> selected = new ArrayList<>();
        for (V1Ingress i : ingresses.getIndexer().list()) {
            String className = i.getSpec() == null ? null : i.getSpec().getIngressClassName();
            V1IngressClass ingressClass = className == null ? null : classes.getIndexer().getByKey(className);
            if (i.getSpec() != null && namespaces.selects(i.getMetadata().getNamespace())
                    && IngressClassSelection.serves(meshConfig, i, ingressClass)) {
                selected.add(i);
            }
        }
        IngressConversion.Result result = conversion.convert(selected, meshConfig, this::servicePorts);
        Set<String> names = new HashSet<>();
        for (V1Ingress i : selected) {
            forEachBackend(i, b -> names.add(key(i.getMetadata().getNamespace(), b)));
        }
        names.add(key(conversion.ingressNamespace(), meshConfig.getIngressService()));
        watchedServices = Set.copyOf(names);
        replaceConverted(result);
        report(result.problems());
        served = selected.stream().map(i -> key(i.getMetadata().getNamespace(), i.getMetadata().getName()))
                .collect(Collectors.toUnmodifiableSet());
        convertedHandlers.forEach(Runnable::run);
        return Outcome.DONE;
    }

    /** Puts the new objects (no event for an unchanged one) and removes the ones no longer converted. */
    private void replaceConverted(IngressConversion.Result result) {
        Set<ConfigKey> keep = new HashSet<>();
        for (Config c : result.gateways()) {
            keep.add(converted.put(c).key());
        }
        for (Config c : result.virtualServices()) {
            keep.add(converted.put(c).key());
        }
        for (String kind : List.of("Gateway", "VirtualService")) {
            for (Config c : converted.list(kind, null)) {
                if (!keep.contains(c.key())) {
                    converted.remove(c.key());
                }
            }
        }
    }

    private void report(Map<String, List<String>> now) {
        Map<String, List<String>> before = problems;
        now.forEach((ingress, what) -> {
            if (!what.equals(before.get(ingress))) {
                LOG.log(Level.WARNING, "ingress " + ingress + " not fully served: " + String.join("; ", what));
            }
        });
        before.keySet().stream().filter(k -> !now.containsKey(k)).forEach(ingress ->
                LOG.log(Level.INFO, "ingress " + ingress + " served in full again"));
        problems = Map.copyOf(now);
    }

    private Optional<Map<String, Integer>> servicePorts(String namespace, String name) {
        V1Service s = services.getIndexer().getByKey(key(namespace, name));
        if (s == null) {
            return Optional.empty();
        }
        Map<String, Integer> ports = new HashMap<>();
        if (s.getSpec() != null && s.getSpec().getPorts() != null) {
            for (V1ServicePort p : s.getSpec().getPorts()) {
                if (p.getName() != null) {
                    ports.put(p.getName(), p.getPort());
                }
            }
        }
        return Optional.of(ports);
    }

    private static void forEachBackend(V1Ingress ingress, Consumer<String> serviceName) {
        if (ingress.getSpec().getRules() == null) {
            return;
        }
        for (var rule : ingress.getSpec().getRules()) {
            if (rule.getHttp() != null) {
                for (var path : rule.getHttp().getPaths()) {
                    if (path.getBackend() != null && path.getBackend().getService() != null) {
                        serviceName.accept(path.getBackend().getService().getName());
                    }
                }
            }
        }
    }

    static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    @Override
    public synchronized void close() {
        if (term != null) {
            term.close();
        }
        converted.close();
    }
}
