package io.meshpilot.registry.kube;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.openapi.models.V1EndpointSlice;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.ObjectEvents;
import io.meshpilot.kube.controllers.SyncWaiter;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.TrafficDistribution;
import io.meshpilot.model.WaypointServices;
import io.meshpilot.model.ShardKey;
import io.meshpilot.model.WorkloadInstance;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.ServiceEvent;
import io.meshpilot.registry.ServicesByHostname;
import io.meshpilot.util.LabelSelector;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Services and endpoints from a Kubernetes cluster (istiod's kube controller): Services,
 * EndpointSlices, Pods, Nodes and Namespaces through their informers.
 *
 * <p>Every informer event queues the key of what changed on the controller kit's queue
 * (istiod's controller queue), whose one thread starts only once all informers have listed:
 * then it converts everything once, in dependency order (namespaces, nodes, pods, services,
 * slices), and from there on handles the queued keys. A task reads the object's current state from the informer's cache rather than the
 * event's copy, so late or repeated events converge on the same result, and unchanged results
 * are not reported again.
 *
 * <p>Reports: an EndpointSlice change is an EDS update of its service (plus a service update
 * for headless services with non-HTTP ports, whose listeners are per endpoint); a Service change
 * records its endpoints and then is a service update (a full push scoped to it). Pods that are
 * ready become workload instances for the ServiceEntries that select them; WorkloadEntries
 * from the ServiceEntry registry join the Services whose selectors match them.
 */
public final class KubeServiceRegistry implements ServicesByHostname.Registry, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KubeServiceRegistry.class.getName());
    public static final String PROVIDER = "Kubernetes";

    /**
     * @param clusterId       --clusterID
     * @param domainSuffix    --domain
     * @param systemNamespace istiod's namespace, whose {@code topology.istio.io/network} label is the default network
     * @param features        the registry switches (PILOT_SEND_UNHEALTHY_ENDPOINTS and the cross-registry selections)
     */
    public record Options(String clusterId, String domainSuffix, String systemNamespace,
                          PilotFeatures.Registry features) {
    }

    private final Options options;
    private final KubeInformers informers;
    private final RegistryUpdates updates;
    private final Supplier<MeshConfig> mesh;
    private final Supplier<MeshNetworks> meshNetworks;
    private final ShardKey shard;
    private final List<Consumer<ServiceEvent>> serviceHandlers = new CopyOnWriteArrayList<>();
    private final List<BiConsumer<WorkloadInstance, Boolean>> workloadHandlers = new CopyOnWriteArrayList<>();
    /**
     * Never used: a failed conversion is logged and not retried (the previous state of what it
     * converted stays until the object's next event).
     */
    private static final Backoff NO_RETRY = Backoff.fixed(Duration.ofSeconds(1));
    private final ControllerQueue<Change> queue;
    private final ControllerQueue<Change>.Term term;
    /** WorkloadEntry changes not handled yet, the latest per entry. */
    private final Map<String, WorkloadEntryChange> workloadEntryChanges = new ConcurrentHashMap<>();

    // read from any thread
    private final Map<String, Service> services = new ConcurrentHashMap<>();
    private final Map<String, List<IstioEndpoint>> published = new ConcurrentHashMap<>();
    private final ServicesByHostname byHostname = new ServicesByHostname(services, published);
    private final Map<String, WorkloadInstance> podWorkloads = new ConcurrentHashMap<>();
    /** The east-west gateways each Service stands for, by hostname (only Services that are gateways). */
    private final Map<String, List<NetworkGateway>> gatewaysByService = new ConcurrentHashMap<>();
    /** The waypoint labels of each namespace that has some, to push its services when they change. */
    private final Map<String, Map<String, String>> namespaceWaypoints = new ConcurrentHashMap<>();
    private final PodIndex pods = new PodIndex();

    // event thread only
    /** Whether the initial conversion has run: before it, changes of what others derive from convert nothing again. */
    private boolean converted;
    private String defaultNetwork = "";
    private MeshNetworkRanges networkRanges = MeshNetworkRanges.NONE;
    private final Map<String, String> serviceVersions = new HashMap<>();
    private final SliceEndpointCache slices = new SliceEndpointCache();
    private final Map<String, Locality> nodeLocalities = new HashMap<>();
    private final ServiceWorkloadEntries workloadEntries = new ServiceWorkloadEntries();

    /**
     * Registers handlers on the informers (which must not have started yet, or their first
     * events are simply handled by the initial conversion) and starts the event thread.
     *
     * @param mesh         the mesh config: its trust domain and discoverySelectors (read again on
     *                     {@link #meshChanged()})
     * @param meshNetworks meshNetworks: endpoint networks by CIDR or registry (read again on
     *                     {@link #networksChanged()})
     */
    public KubeServiceRegistry(Options options, KubeInformers informers, RegistryUpdates updates,
                               Supplier<MeshConfig> mesh, Supplier<MeshNetworks> meshNetworks) {
        this.options = options;
        this.informers = informers;
        this.updates = updates;
        this.mesh = mesh;
        this.meshNetworks = meshNetworks;
        this.shard = new ShardKey(options.clusterId(), PROVIDER);
        this.queue = new ControllerQueue<>("kube-registry-" + options.clusterId(), NO_RETRY, this::handle);
        informers.namespaces().addEventHandler(handler(n -> enqueue(Kind.NAMESPACE, n.getMetadata().getName())));
        informers.discovery().addHandler((selected, deselected) -> {
            selected.forEach(ns -> enqueue(Kind.NAMESPACE_SELECTION, ns));
            deselected.forEach(ns -> enqueue(Kind.NAMESPACE_SELECTION, ns));
        });
        informers.discovery().setSelectors(DiscoverySelectors.of(mesh.get()));
        informers.nodes().addEventHandler(counted("Nodes", handler(n -> enqueue(Kind.NODE, n.getMetadata().getName()))));
        informers.pods().addEventHandler(counted("Pods", handler(p -> enqueue(Kind.POD, key(p)))));
        informers.services().addEventHandler(counted("Services", handler(s -> enqueue(Kind.SERVICE, key(s)))));
        informers.slices().addEventHandler(counted("EndpointSlice", handler(s -> enqueue(Kind.SLICE, key(s)))));
        // events queued before the initial conversion are handled again after it: each looks at
        // the current state and reports only what changed, so they cost a comparison each
        this.term = queue.start(informers.synced(), () -> runTask("initial sync", this::initialSync));
    }

    /** What changed, to be looked at again: the queue's key. */
    private record Change(Kind kind, String name) {
    }

    private enum Kind { NAMESPACE, NAMESPACE_SELECTION, NODE, POD, SERVICE, SLICE, NETWORKS, WORKLOAD_ENTRY }

    /** A WorkloadEntry's new state (deleted: its last state). */
    private record WorkloadEntryChange(WorkloadInstance workload, boolean deleted) {
    }

    /** istiod's registry event counter: {type: istiod's informer name, event: add, update or delete}. */
    static final IstioCounter REG_EVENTS = IstioCounter.of(
            "pilot_k8s_reg_events", "type", "event", "Events from k8s registry.");

    /** {@code handler}, each event counted in pilot_k8s_reg_events under {@code type} as istiod names it. */
    private static <T extends KubernetesObject> ResourceEventHandler<T> counted(String type, ResourceEventHandler<T> handler) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                REG_EVENTS.increment(type, "add");
                handler.onAdd(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                REG_EVENTS.increment(type, "update");
                handler.onUpdate(oldObj, newObj);
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                REG_EVENTS.increment(type, "delete");
                handler.onDelete(obj, finalStateUnknown);
            }
        };
    }

    /** Every kind of event means the same here: look at the object's current state. */
    private static <T extends KubernetesObject> ResourceEventHandler<T> handler(Consumer<T> changed) {
        return ObjectEvents.each(changed);
    }

    private static String key(KubernetesObject o) {
        String ns = o.getMetadata().getNamespace();
        return ns == null || ns.isEmpty() ? o.getMetadata().getName() : ns + "/" + o.getMetadata().getName();
    }

    private void enqueue(Kind kind, String name) {
        queue.add(new Change(kind, name));
    }

    private Outcome handle(Change change) {
        runTask("event", () -> {
            switch (change.kind()) {
                case NAMESPACE -> namespaceChanged(change.name());
                case NAMESPACE_SELECTION -> resyncNamespace(change.name());
                case NODE -> nodeChanged(change.name());
                case POD -> podChanged(change.name());
                case SERVICE -> serviceChanged(change.name());
                case SLICE -> sliceChanged(change.name());
                case NETWORKS -> {
                    networkRanges = MeshNetworkRanges.of(meshNetworks.get(), options.clusterId());
                    reconvertPodsAndSlices();
                    refreshAllGateways(); // meshNetworks may name other Services as gateways now
                }
                case WORKLOAD_ENTRY -> {
                    WorkloadEntryChange c = workloadEntryChanges.remove(change.name());
                    if (c != null) {
                        applyWorkloadEntry(c.workload(), c.deleted());
                    }
                }
            }
        });
        return Outcome.DONE;
    }

    /** A failing task is logged and skipped: the previous state of what it converted stays. */
    private void runTask(String what, Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "Kubernetes registry " + options.clusterId() + ": " + what + " failed", e);
        }
    }

    private void initialSync() {
        networkRanges = MeshNetworkRanges.of(meshNetworks.get(), options.clusterId());
        for (V1Namespace ns : informers.namespaces().getIndexer().list()) {
            namespaceChanged(ns.getMetadata().getName());
        }
        for (V1Node n : informers.nodes().getIndexer().list()) {
            nodeChanged(n.getMetadata().getName());
        }
        for (V1Pod p : informers.pods().getIndexer().list()) {
            podChanged(key(p));
        }
        for (V1Service s : informers.services().getIndexer().list()) {
            serviceChanged(key(s));
        }
        for (V1EndpointSlice s : informers.slices().getIndexer().list()) {
            sliceChanged(key(s));
        }
        converted = true;
        LOG.log(Level.INFO, () -> "Kubernetes registry " + options.clusterId() + " synced: " + services.size()
                + " services");
    }

    // ---- namespaces and discovery selectors --------------------------------------------

    /**
     * The mesh config changed: its discoverySelectors go to the shared filter (unchanged ones
     * change nothing), which tells this registry which namespaces joined or left.
     */
    public void meshChanged() {
        informers.discovery().setSelectors(DiscoverySelectors.of(mesh.get()));
    }

    /** meshNetworks changed: endpoints without a network label may be in another network now. */
    public void networksChanged() {
        enqueue(Kind.NETWORKS, "");
    }

    /** Every pod and slice converted again (what they derive from changed); unchanged results are not reported. */
    private void reconvertPodsAndSlices() {
        informers.pods().getIndexer().list().forEach(p -> podChanged(key(p)));
        informers.slices().getIndexer().list().forEach(s -> sliceChanged(key(s)));
    }

    /** istiod's Network() after the pod's own label: the system namespace's label, else meshNetworks. */
    private String fallbackNetwork(String ip) {
        if (!defaultNetwork.isEmpty() || ip == null) {
            return defaultNetwork;
        }
        return networkRanges.network(ip);
    }

    /**
     * The system namespace's network label, and any namespace's waypoint labels (its services
     * use the waypoint they name); selection is the filter's.
     */
    private void namespaceChanged(String name) {
        V1Namespace ns = informers.namespaces().getIndexer().getByKey(name);
        Map<String, String> l = ns == null ? null : ns.getMetadata().getLabels();
        waypointLabelsChanged(name, l);
        if (!name.equals(options.systemNamespace())) {
            return;
        }
        String network = l == null ? "" : l.getOrDefault(PodConversion.NETWORK_LABEL, "");
        if (!network.equals(defaultNetwork)) {
            defaultNetwork = network;
            if (converted) {
                reconvertPodsAndSlices(); // the default network of every endpoint without its own
            }
        }
    }

    /**
     * istiod's ambient index reports the services of a namespace whose {@code istio.io/use-waypoint}
     * (or {@code istio.io/ingress-use-waypoint}) labels changed: their waypoint changed, so each is a
     * full push naming it. Recorded for
     * every namespace (a bounded map: one entry per labelled namespace that exists).
     */
    private void waypointLabelsChanged(String namespace, Map<String, String> labels) {
        Map<String, String> now = new HashMap<>();
        if (labels != null) {
            for (String key : List.of(WaypointServices.USE_WAYPOINT, WaypointServices.USE_WAYPOINT_NAMESPACE,
                    WaypointServices.INGRESS_USE_WAYPOINT)) {
                if (labels.containsKey(key)) {
                    now.put(key, labels.get(key));
                }
            }
        }
        Map<String, String> before = now.isEmpty() ? namespaceWaypoints.remove(namespace)
                : namespaceWaypoints.put(namespace, Map.copyOf(now));
        if (!converted || now.equals(before == null ? Map.of() : before)) {
            return;
        }
        LOG.log(Level.INFO, () -> "Kubernetes registry " + options.clusterId() + ": namespace " + namespace
                + " waypoint labels " + now);
        services.values().stream().filter(s -> s.namespace().equals(namespace))
                .forEach(s -> updates.svcUpdate(shard, s.hostname(), namespace, false));
    }

    /** A namespace became (un)selected: everything in it is converted again (or removed). */
    private void resyncNamespace(String ns) {
        informers.pods().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, ns).forEach(p -> podChanged(key(p)));
        Set<String> svcKeys = new HashSet<>();
        informers.services().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, ns).forEach(s -> svcKeys.add(key(s)));
        services.values().stream().filter(s -> s.namespace().equals(ns))
                .forEach(s -> svcKeys.add(ns + "/" + s.hostname().substring(0, s.hostname().indexOf('.'))));
        svcKeys.forEach(this::serviceChanged);
        Set<String> sliceKeys = new HashSet<>();
        informers.slices().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, ns).forEach(s -> sliceKeys.add(key(s)));
        sliceKeys.addAll(slices.slicesIn(ns));
        sliceKeys.forEach(this::sliceChanged);
    }

    private boolean selected(String namespace) {
        return informers.discovery().selects(namespace);
    }

    // ---- nodes ---------------------------------------------------------------------------

    /** A node's locality changed: the endpoints of its pods are converted again. */
    private void nodeChanged(String name) {
        V1Node node = informers.nodes().getIndexer().getByKey(name);
        Locality now = node == null ? null : PodConversion.nodeLocality(node);
        Locality before = now == null ? nodeLocalities.remove(name) : nodeLocalities.put(name, now);
        if (!converted || Objects.equals(before, now)) {
            return;
        }
        Set<String> slices = new HashSet<>();
        for (V1Pod p : informers.pods().getIndexer().list()) {
            if (p.getSpec() != null && name.equals(p.getSpec().getNodeName()) && p.getStatus() != null
                    && p.getStatus().getPodIP() != null) {
                slices.addAll(slicesWithAddress(p.getMetadata().getNamespace(), p.getStatus().getPodIP()));
            }
        }
        slices.forEach(this::sliceChanged);
    }

    // ---- pods ----------------------------------------------------------------------------

    private void podChanged(String key) {
        V1Pod pod = informers.pods().getIndexer().getByKey(key);
        String ns = key.substring(0, key.indexOf('/'));
        if (pod != null && selected(ns) && pod.getStatus() != null && pod.getStatus().getPodIP() != null) {
            // a pod some slice named before the pod was seen: convert those slices again
            pods.takeWaiting(pod.getStatus().getPodIP()).forEach(this::sliceChanged);
        }
        WorkloadInstance before = podWorkloads.get(key);
        if (pod == null || !selected(ns) || !PodConversion.readyWithIp(pod)) {
            if (pods.remove(key)) {
                podWorkloads.remove(key);
                notifyWorkload(before, true);
            }
            return;
        }
        WorkloadInstance now = PodConversion.workload(pod, template(pod));
        pods.add(key, pod.getStatus().getPodIP());
        if (now.equals(before)) {
            return;
        }
        podWorkloads.put(key, now);
        if (before != null && !before.endpoint().equals(now.endpoint())) {
            // labels (or what is derived from them) changed: the endpoints built from the pod are stale
            slicesWithAddress(ns, pod.getStatus().getPodIP()).forEach(this::sliceChanged);
        }
        notifyWorkload(now, false);
    }

    private IstioEndpoint template(V1Pod pod) {
        String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        V1Node node = nodeName == null ? null : informers.nodes().getIndexer().getByKey(nodeName);
        String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
        return PodConversion.template(pod, node, mesh.get().getTrustDomain(), options.clusterId(), fallbackNetwork(ip));
    }

    private void notifyWorkload(WorkloadInstance w, boolean deleted) {
        if (w == null || !options.features().serviceEntrySelectPods()) {
            return;
        }
        for (BiConsumer<WorkloadInstance, Boolean> h : workloadHandlers) {
            try {
                h.accept(w, deleted);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "workload handler failed for pod " + w.namespace() + "/" + w.name(), e);
            }
        }
    }

    private Set<String> slicesWithAddress(String ns, String ip) {
        Set<String> out = new HashSet<>();
        for (V1EndpointSlice s : informers.slices().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, ns)) {
            if (s.getEndpoints() != null && s.getEndpoints().stream()
                    .anyMatch(e -> e.getAddresses() != null && e.getAddresses().contains(ip))) {
                out.add(key(s));
            }
        }
        return out;
    }

    // ---- services ------------------------------------------------------------------------

    private void serviceChanged(String key) {
        int slash = key.indexOf('/');
        String ns = key.substring(0, slash);
        String host = KubeServiceConversion.hostname(key.substring(slash + 1), ns, options.domainSuffix());
        V1Service svc = informers.services().getIndexer().getByKey(key);
        Service before = services.get(host);
        if (svc == null || !selected(ns)) {
            serviceVersions.remove(key);
            if (refreshGateways(host, null)) {
                updates.networkGatewaysUpdate();
            }
            if (before != null) {
                services.remove(host);
                published.remove(host);
                updates.svcUpdate(shard, host, ns, true);
                if (!before.exportTo().contains("~")) {
                    fire(new ServiceEvent(ServiceEvent.Type.DELETE, before));
                }
            }
            return;
        }
        String version = svc.getMetadata().getResourceVersion();
        if (before != null && version != null && version.equals(serviceVersions.get(key))) {
            return; // seen already (a repeated event)
        }
        serviceVersions.put(key, version);
        Service now = KubeServiceConversion.service(svc, options.domainSuffix(), options.clusterId(), PROVIDER,
                namespaceAnnotations(svc));
        services.put(host, now);
        if (refreshGateways(host, svc)) {
            updates.networkGatewaysUpdate();
        }
        // the slices were converted with what the service was before (e.g. its traffic distribution)
        for (V1EndpointSlice s : informers.slices().getIndexer().byIndex(KubeInformers.BY_SERVICE, key)) {
            convertSlice(key(s), s, host);
        }
        publish(host, ns, false);
        updates.svcUpdate(shard, host, ns, false);
        boolean hidden = now.exportTo().contains("~") && (before == null || before.exportTo().contains("~"));
        if (!now.equals(before) && !hidden) {
            fire(new ServiceEvent(before == null ? ServiceEvent.Type.ADD : ServiceEvent.Type.UPDATE, now));
        }
    }

    /**
     * istiod's Service Attributes.Type and this cluster's ClusterExternalAddresses
     * (serviceregistry/kube/conversion.go): a LoadBalancer's ingress IPs (else hostnames), then
     * {@code spec.externalIPs}.
     *
     * @param type      the Kubernetes Service type, {@code ClusterIP} when unset
     * @param addresses the external addresses, empty while a load balancer's are pending
     */
    public record External(String type, List<String> addresses) {
        public External {
            addresses = List.copyOf(addresses);
        }
    }

    /** The {@link External} view of this registry's Service {@code hostname} in {@code namespace}, if it has it. */
    public Optional<External> external(String hostname, String namespace) {
        int dot = hostname.indexOf('.');
        V1Service svc = dot < 0 ? null
                : informers.services().getIndexer().getByKey(namespace + "/" + hostname.substring(0, dot));
        if (svc == null || svc.getSpec() == null || !hostname.equals(KubeServiceConversion.hostname(
                svc.getMetadata().getName(), namespace, options.domainSuffix()))) {
            return Optional.empty();
        }
        String type = svc.getSpec().getType() == null ? "ClusterIP" : svc.getSpec().getType();
        List<String> addresses = new ArrayList<>();
        if (type.equals("LoadBalancer") && svc.getStatus() != null && svc.getStatus().getLoadBalancer() != null
                && svc.getStatus().getLoadBalancer().getIngress() != null) {
            for (var ingress : svc.getStatus().getLoadBalancer().getIngress()) {
                if (ingress.getIp() != null && !ingress.getIp().isEmpty()) {
                    addresses.add(ingress.getIp());
                } else if (ingress.getHostname() != null && !ingress.getHostname().isEmpty()) {
                    addresses.add(ingress.getHostname()); // not resolved: an ELB's addresses change
                }
            }
        }
        if (svc.getSpec().getExternalIPs() != null) {
            addresses.addAll(svc.getSpec().getExternalIPs());
        }
        return Optional.of(new External(type, addresses));
    }

    // ---- east-west gateways -------------------------------------------------------------

    /** Records the gateways a Service stands for (none when it is gone); true when they changed. */
    private boolean refreshGateways(String host, V1Service svc) {
        List<NetworkGateway> now = svc == null ? List.of()
                : ServiceGateways.of(svc, host, options.clusterId(), networkRanges.registryServiceGateways());
        List<NetworkGateway> before = now.isEmpty() ? gatewaysByService.remove(host) : gatewaysByService.put(host, now);
        if (now.equals(before == null ? List.of() : before)) {
            return false;
        }
        LOG.log(Level.INFO, "Kubernetes registry " + options.clusterId() + ": network gateways of service " + host
                + " " + now.stream().map(g -> g.network() + "=" + g.address() + ":" + g.port()).toList());
        return true;
    }

    /** Every selected Service's gateways again (meshNetworks changed); one push when any changed. */
    private void refreshAllGateways() {
        boolean changed = false;
        for (V1Service svc : informers.services().getIndexer().list()) {
            String host = KubeServiceConversion.hostname(svc.getMetadata().getName(), svc.getMetadata().getNamespace(),
                    options.domainSuffix());
            changed |= refreshGateways(host, services.containsKey(host) ? svc : null);
        }
        if (changed) {
            updates.networkGatewaysUpdate();
        }
    }

    /** The east-west gateways this cluster's Services stand for. */
    @Override
    public List<NetworkGateway> networkGateways() {
        return gatewaysByService.values().stream().flatMap(List::stream).toList();
    }

    private boolean sendUnhealthy(String serviceKey) {
        if (options.features().sendUnhealthyEndpoints()) {
            return true;
        }
        V1Service svc = informers.services().getIndexer().getByKey(serviceKey);
        if (svc == null) {
            return false;
        }
        // location-aware routing needs the health of every endpoint to know when to spill over
        return KubeServiceConversion.trafficDistribution(svc, namespaceAnnotations(svc)) != TrafficDistribution.ANY;
    }

    /** The annotations of a Service's namespace (its traffic distribution may be set there), null when unknown. */
    private Map<String, String> namespaceAnnotations(V1Service svc) {
        V1Namespace ns = informers.namespaces().getIndexer().getByKey(svc.getMetadata().getNamespace());
        return ns == null ? null : ns.getMetadata().getAnnotations();
    }

    // ---- endpoint slices -----------------------------------------------------------------

    private void sliceChanged(String key) {
        V1EndpointSlice slice = informers.slices().getIndexer().getByKey(key);
        String ns = key.substring(0, key.indexOf('/'));
        String oldHost = slices.host(key);
        String svcName = slice == null ? "" : EndpointSliceConversion.serviceName(slice);
        String host = svcName.isEmpty() || !selected(ns) ? null
                : KubeServiceConversion.hostname(svcName, ns, options.domainSuffix());
        boolean changed = false;
        if (oldHost != null && !oldHost.equals(host)) {
            changed = slices.remove(key);
            publishEndpointChange(oldHost, ns);
        }
        if (host == null) {
            pods.stopWaiting(key);
            return;
        }
        if (convertSlice(key, slice, host) || changed) {
            publishEndpointChange(host, ns);
        }
    }

    /** Converts a slice into the cache; true when its endpoints changed. */
    private boolean convertSlice(String key, V1EndpointSlice slice, String host) {
        String ns = slice.getMetadata().getNamespace();
        pods.stopWaiting(key);
        EndpointSliceConversion.Result r = EndpointSliceConversion.endpoints(slice,
                (ip, ref) -> lookupPod(ns, ip, ref), sendUnhealthy(ns + "/" + EndpointSliceConversion.serviceName(slice)));
        r.waitingForPods().forEach(ip -> pods.waitForPod(key, ip));
        if (!r.waitingForPods().isEmpty()) {
            LOG.log(Level.DEBUG, () -> "EndpointSlice " + key + " waits for the pods of " + r.waitingForPods());
        }
        return slices.put(key, host, r.endpoints());
    }

    private EndpointSliceConversion.PodLookup lookupPod(String ns, String ip, V1ObjectReference ref) {
        if (ref != null && "Pod".equals(ref.getKind())) {
            String podNs = ref.getNamespace() == null ? ns : ref.getNamespace();
            V1Pod pod = informers.pods().getIndexer().getByKey(podNs + "/" + ref.getName());
            return pod == null ? new EndpointSliceConversion.PodLookup.Missing()
                    : new EndpointSliceConversion.PodLookup.Found(template(pod));
        }
        // a manually managed slice: the pod with that IP in the namespace, if any (best guess, as istiod)
        for (String podKey : pods.podsWithIp(ip)) {
            if (podKey.startsWith(ns + "/")) {
                V1Pod pod = informers.pods().getIndexer().getByKey(podKey);
                if (pod != null) {
                    return new EndpointSliceConversion.PodLookup.Found(template(pod));
                }
            }
        }
        return new EndpointSliceConversion.PodLookup.None(PodConversion.template(null, null,
                mesh.get().getTrustDomain(), options.clusterId(), fallbackNetwork(ip)));
    }

    /**
     * Endpoints of a host changed without its service changing: an EDS update; for headless
     * services with non-HTTP ports also a service update (their listeners are per endpoint).
     */
    private void publishEndpointChange(String host, String ns) {
        Service svc = services.get(host);
        if (svc != null && svc.exportTo().contains("~")) {
            publish(host, ns, false); // visible to nobody: nothing to push (istiod's serviceNeedsPush)
            return;
        }
        boolean headlessTcp = svc != null && svc.resolution() == Resolution.PASSTHROUGH
                && svc.ports().stream().anyMatch(p -> !p.protocol().isHttp());
        publish(host, ns, !headlessTcp);
        if (headlessTcp) {
            updates.svcUpdate(shard, host, ns, false);
        }
    }

    /**
     * The endpoints of a host (slices, deduplicated by address and port; WorkloadEntries its
     * selector matches; or an ExternalName's name) to readers and to the endpoint index.
     *
     * @param push an EDS update of its own; false: recorded for a service update that follows
     */
    private void publish(String host, String ns, boolean push) {
        List<IstioEndpoint> eps = endpointsOf(host);
        if (eps.isEmpty()) {
            published.remove(host);
        } else {
            published.put(host, eps);
        }
        if (push) {
            updates.edsUpdate(shard, host, ns, eps);
        } else {
            updates.edsCacheUpdate(shard, host, ns, eps);
        }
    }

    private List<IstioEndpoint> endpointsOf(String host) {
        Service svc = services.get(host);
        V1Service k8s = svc == null ? null : informers.services().getIndexer()
                .getByKey(svc.namespace() + "/" + host.substring(0, host.indexOf('.')));
        if (k8s != null && svc.resolution() == Resolution.DNS_LB && "ExternalName".equals(k8s.getSpec().getType())) {
            return KubeServiceConversion.externalNameEndpoints(k8s, svc);
        }
        List<IstioEndpoint> out = slices.endpoints(host);
        if (k8s != null && options.features().k8sServiceSelectWorkloadEntries()) {
            out.addAll(workloadEntries.endpoints(svc, k8s));
        }
        return List.copyOf(out);
    }

    // ---- WorkloadEntries selected by Services ---------------------------------------------

    /**
     * A WorkloadEntry from the ServiceEntry registry changed (istiod's WorkloadInstanceHandler):
     * the Services in its namespace whose selectors match it, before or after, get new endpoints.
     */
    public void workloadEntryChanged(WorkloadInstance w, boolean deleted) {
        if (!options.features().k8sServiceSelectWorkloadEntries() || w.namespace().isEmpty()
                || w.endpoint().labels().isEmpty()) {
            return; // nothing can select a workload without labels
        }
        String key = w.namespace() + "/" + w.name();
        workloadEntryChanges.put(key, new WorkloadEntryChange(w, deleted));
        enqueue(Kind.WORKLOAD_ENTRY, key);
    }

    private void applyWorkloadEntry(WorkloadInstance w, boolean deleted) {
        WorkloadInstance before = workloadEntries.update(w, deleted);
        Set<String> hosts = new HashSet<>();
        for (V1Service s : informers.services().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, w.namespace())) {
            Map<String, String> selector = s.getSpec() == null ? null : s.getSpec().getSelector();
            if (selector == null || selector.isEmpty()) {
                continue;
            }
            if (LabelSelector.subsetOf(selector, w.endpoint().labels()) || (before != null
                    && LabelSelector.subsetOf(selector, before.endpoint().labels()))) {
                hosts.add(KubeServiceConversion.hostname(s.getMetadata().getName(), w.namespace(),
                        options.domainSuffix()));
            }
        }
        for (String h : hosts) {
            if (services.containsKey(h)) {
                publishEndpointChange(h, w.namespace());
            }
        }
    }

    // ---- reads ---------------------------------------------------------------------------

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public String cluster() {
        return options.clusterId();
    }

    public ShardKey shard() {
        return shard;
    }

    @Override
    public ServicesByHostname byHostname() {
        return byHostname;
    }

    /** The Namespace's labels from the informer's cache; empty when it is unknown or not selected. */
    @Override
    public Map<String, String> namespaceLabels(String namespace) {
        V1Namespace ns = selected(namespace) ? informers.namespaces().getIndexer().getByKey(namespace) : null;
        Map<String, String> labels = ns == null ? null : ns.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    /**
     * The ready pod with this IP, as a workload (istiod's pod lookup by proxy IP): the
     * identity, labels, network and locality of the proxy running there. With several pods on
     * one IP (host network), the one in {@code namespace} if any.
     */
    public Optional<WorkloadInstance> podByIp(String ip, String namespace) {
        WorkloadInstance first = null;
        for (String key : pods.podsWithIp(ip)) {
            WorkloadInstance w = podWorkloads.get(key);
            if (w != null && (first == null || w.namespace().equals(namespace))) {
                first = w;
                if (w.namespace().equals(namespace)) {
                    break;
                }
            }
        }
        return Optional.ofNullable(first);
    }

    /** Ready pods known as workloads, for ServiceEntries that select pods and /debug. */
    public List<WorkloadInstance> podWorkloads() {
        return podWorkloads.values().stream().sorted(Comparator.comparing(WorkloadInstance::namespace)
                .thenComparing(WorkloadInstance::name)).toList();
    }

    @Override
    public void appendServiceHandler(Consumer<ServiceEvent> handler) {
        serviceHandlers.add(handler);
    }

    /** Handlers of pods that became ready workloads ({@code false}) or stopped being ones ({@code true}). */
    public void appendWorkloadHandler(BiConsumer<WorkloadInstance, Boolean> handler) {
        workloadHandlers.add(handler);
    }

    private void fire(ServiceEvent e) {
        for (Consumer<ServiceEvent> h : serviceHandlers) {
            try {
                h.accept(e);
            } catch (RuntimeException ex) {
                LOG.log(Level.ERROR, "service handler failed service=" + e.service().hostname(), ex);
            }
        }
    }

    /** Every informer has listed and the registry has converted what they hold. */
    @Override
    public boolean hasSynced() {
        return queue.hasSynced();
    }

    @Override
    public CompletableFuture<Void> synced() {
        return queue.synced();
    }

    /** Waits until every event queued before this call is handled; false on timeout. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        return SyncWaiter.await(queue.barrier(), timeout);
    }

    @Override
    public void close() {
        term.close();
    }

    /**
     * istiod's Controller.Cleanup, for a cluster that left the mesh: stops the event thread,
     * then deletes every service of this cluster (its endpoint shard goes, a full push follows).
     * Services of the same hostname in other clusters keep their own shards.
     */
    public void cleanup(Duration wait) {
        term.close(wait);
        if (!gatewaysByService.isEmpty()) {
            gatewaysByService.clear();
            updates.networkGatewaysUpdate();
        }
        for (Service s : List.copyOf(services.values())) {
            services.remove(s.hostname());
            published.remove(s.hostname());
            updates.svcUpdate(shard, s.hostname(), s.namespace(), true);
        }
    }

    /** For /debug: the endpoints published per host. */
    public Map<String, List<IstioEndpoint>> endpoints() {
        return new LinkedHashMap<>(new TreeMap<>(published));
    }
}
