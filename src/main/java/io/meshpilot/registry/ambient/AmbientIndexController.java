package io.meshpilot.registry.ambient;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.ObjectEvents;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.kube.KubeInformers;
import io.meshpilot.registry.kube.PodConversion;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Keeps the {@link AmbientIndex} of one cluster from the Kubernetes registry's informers
 * (istiod's ambient index over its krt collections), one object at a time: a pod event builds
 * that pod's workload; a service event builds the service and the workloads of its namespace
 * (their services map); a namespace event its services and pods (waypoint labels, traffic
 * distribution), and for the system namespace everything (the network); a node event the pods
 * on it (locality); a mesh config change everything (trust domain). Only what changed is
 * reported, as the Address keys a push sends ({@link RegistryUpdates#addressesUpdate}).
 * Namespaces the discovery selectors leave out are left out.
 */
public final class AmbientIndexController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AmbientIndexController.class.getName());
    /** A failed build is logged, and the object's previous state stays until its next event. */
    private static final Backoff NO_RETRY = Backoff.fixed(Duration.ofSeconds(1));

    /**
     * @param clusterId       --clusterID
     * @param domainSuffix    --domain
     * @param systemNamespace istiod's namespace: its {@code topology.istio.io/network} label is the network
     * @param allowFromWaypoint PILOT_AUTO_ALLOW_WAYPOINT_POLICY: each waypoint's implicit ALLOW policy
     */
    public record Options(String clusterId, String domainSuffix, String systemNamespace, boolean allowFromWaypoint) {
        /** Without the implicit waypoint policies. */
        public Options(String clusterId, String domainSuffix, String systemNamespace) {
            this(clusterId, domainSuffix, systemNamespace, false);
        }
    }

    private final Options options;
    private final KubeInformers informers;
    private final RegistryUpdates updates;
    private final Supplier<MeshConfig> mesh;
    private final AmbientIndex index = new AmbientIndex();
    private final ControllerQueue<Change> queue;
    private final ControllerQueue<Change>.Term term;
    /** The waypoints of the Gateways, else of their Services (ServiceWaypoints), unless a caller plugs in others. */
    private volatile Waypoints waypoints;
    private final GatewayWaypoints gatewayWaypoints;
    /** The Gateways last reported; read on the controller's thread. */
    private volatile List<GatewayApiObject> gateways = List.of();
    /** Keys of the waypoint Services seen: their change or removal rebinds services anywhere. */
    private final Set<String> waypointServices = ConcurrentHashMap.newKeySet();
    private volatile WorkloadPolicies policies = WorkloadPolicies.NONE;
    /** Keys of the waypoints' pods seen: their coming or going changes the waypoints' identities. */
    private final Set<String> waypointPods = ConcurrentHashMap.newKeySet();
    /** Set on the controller's thread when the waypoints or their pods may have changed. */
    private boolean waypointsTouched;

    private enum Kind { POD, SERVICE, NAMESPACE, NODE, GATEWAYS, ALL }

    private record Change(Kind kind, String name) {
    }

    /** Registers on the informers (before they start) and starts the controller's thread. */
    public AmbientIndexController(Options options, KubeInformers informers, RegistryUpdates updates,
                                  Supplier<MeshConfig> mesh) {
        this.options = options;
        this.informers = informers;
        this.updates = updates;
        this.mesh = mesh;
        ServiceWaypoints managed = new ServiceWaypoints(informers.services(), informers.pods(), options.domainSuffix());
        this.gatewayWaypoints = new GatewayWaypoints(managed, managed::serviceAccounts);
        this.waypoints = gatewayWaypoints;
        this.queue = new ControllerQueue<>("ambient-index-" + options.clusterId(), NO_RETRY, this::handle);
        informers.pods().addEventHandler(ObjectEvents.each(p -> enqueue(Kind.POD, key(p))));
        informers.services().addEventHandler(ObjectEvents.each(s -> enqueue(Kind.SERVICE, key(s))));
        informers.namespaces().addEventHandler(ObjectEvents.each(n -> enqueue(Kind.NAMESPACE, n.getMetadata().getName())));
        informers.nodes().addEventHandler(ObjectEvents.each(n -> enqueue(Kind.NODE, n.getMetadata().getName())));
        informers.discovery().addHandler((selected, deselected) -> {
            selected.forEach(ns -> enqueue(Kind.NAMESPACE, ns));
            deselected.forEach(ns -> enqueue(Kind.NAMESPACE, ns));
        });
        this.term = queue.start(informers.synced(), () -> enqueue(Kind.ALL, ""));
    }

    /** What ztunnels are answered from. */
    public AmbientIndex index() {
        return index;
    }

    /** The waypoints {@code istio.io/use-waypoint} labels resolve to; everything is built again with them. */
    public void useWaypoints(Waypoints found) {
        this.waypoints = found;
        enqueue(Kind.ALL, "");
    }

    /**
     * The Gateways now (istiod reads its waypoints from them): one whose status has an address is
     * a waypoint; when the waypoints change, everything is built again.
     */
    public void gatewaysChanged(List<GatewayApiObject> gateways) {
        this.gateways = List.copyOf(gateways);
        enqueue(Kind.GATEWAYS, "");
    }

    /** The seam for workloads' {@code authorization_policies}; everything is built again with it. */
    public void usePolicies(WorkloadPolicies found) {
        this.policies = found;
        enqueue(Kind.ALL, "");
    }

    /** The mesh config changed (its trust domain is on every workload). */
    public void meshChanged() {
        enqueue(Kind.ALL, "");
    }

    /** Completes once the initial build is done. */
    public CompletableFuture<Void> synced() {
        return queue.synced();
    }

    public boolean hasSynced() {
        return queue.hasSynced();
    }

    private void enqueue(Kind kind, String name) {
        queue.add(new Change(kind, name));
    }

    private Outcome handle(Change change) {
        Set<String> changed = new HashSet<>();
        try {
            AmbientContext ctx = context();
            switch (change.kind()) {
                case POD -> pod(change.name(), ctx, changed);
                case SERVICE -> service(change.name(), ctx, changed);
                case NAMESPACE -> namespace(change.name(), ctx, changed);
                case NODE -> node(change.name(), ctx, changed);
                case GATEWAYS -> {
                    if (gatewayWaypoints.update(gateways, ctx.network())) {
                        all(ctx, changed); // istio.io/use-waypoint anywhere may name a waypoint that came or went
                    }
                }
                case ALL -> all(ctx, changed);
            }
            if (waypointsTouched && options.allowFromWaypoint()) {
                waypointPolicies(ctx, changed);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "ambient index " + options.clusterId() + ": " + change.kind() + " " + change.name()
                    + " failed: " + e);
            LOG.log(Level.DEBUG, "ambient index failure", e);
        } finally {
            waypointsTouched = false;
        }
        if (!changed.isEmpty()) {
            updates.addressesUpdate(changed);
        }
        return Outcome.DONE;
    }

    /**
     * The implicit waypoint policies again; when one appears or goes, the workloads are built
     * again (they name it), and ztunnels get the Authorizations that changed.
     */
    private void waypointPolicies(AmbientContext ctx, Set<String> changed) {
        String trustDomain = mesh.get().getTrustDomain().isEmpty() ? "cluster.local" : mesh.get().getTrustDomain();
        Set<String> before = Set.copyOf(index.waypointPolicies().keySet());
        Set<String> updated = index.putWaypointPolicies(ImplicitWaypointPolicies.of(waypoints.all(), trustDomain));
        if (updated.isEmpty()) {
            return;
        }
        if (!before.equals(index.waypointPolicies().keySet())) {
            all(ctx, changed);
        }
        updates.ambientPoliciesUpdate(updated);
    }

    private AmbientContext context() {
        V1Namespace system = informers.namespaces().getIndexer().getByKey(options.systemNamespace());
        Map<String, String> systemLabels = system == null || system.getMetadata().getLabels() == null ? Map.of()
                : system.getMetadata().getLabels();
        return new AmbientContext(options.clusterId(), options.domainSuffix(),
                systemLabels.getOrDefault(PodConversion.NETWORK_LABEL, ""),
                AmbientContext.sentTrustDomain(mesh.get().getTrustDomain()),
                informers.namespaces().getIndexer()::getByKey, informers.nodes().getIndexer()::getByKey,
                waypoints, policies, options.allowFromWaypoint());
    }

    private void pod(String key, AmbientContext ctx, Set<String> changed) {
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String uid = PodWorkloads.uid(options.clusterId(), namespace, key.substring(slash + 1));
        V1Pod pod = informers.pods().getIndexer().getByKey(key);
        boolean waypointInstance = pod != null && pod.getMetadata().getLabels() != null
                && pod.getMetadata().getLabels().containsKey(ServiceWaypoints.GATEWAY_NAME);
        waypointsTouched |= waypointInstance ? waypointPods.add(key) : waypointPods.remove(key);
        AddressInfo built = pod == null || !informers.discovery().selects(namespace) ? null
                : PodWorkloads.build(pod, ctx, index.servicesIn(namespace));
        if (built == null ? index.removeWorkload(uid) : index.putWorkload(built)) {
            changed.add(uid);
        }
    }

    private void service(String key, AmbientContext ctx, Set<String> changed) {
        V1Service svc = informers.services().getIndexer().getByKey(key);
        boolean waypoint = svc != null && ServiceWaypoints.isWaypoint(svc);
        boolean wasWaypoint = waypoint ? !waypointServices.add(key) : waypointServices.remove(key);
        if (waypoint || wasWaypoint) {
            all(ctx, changed); // a waypoint appeared, changed or went: istio.io/use-waypoint anywhere may name it
            return;
        }
        serviceOnly(key, ctx, changed);
        podsIn(key.substring(0, key.indexOf('/')), ctx, changed); // the workloads list the services selecting them
    }

    private void namespace(String name, AmbientContext ctx, Set<String> changed) {
        if (name.equals(options.systemNamespace())) {
            all(ctx, changed); // its network label is every workload's and service's network
            return;
        }
        Set<String> keys = new HashSet<>();
        informers.services().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, name).forEach(s -> keys.add(key(s)));
        index.servicesIn(name).forEach(s -> keys.add(name + "/" + s.address().address().getService().getName()));
        for (String k : keys) {
            serviceOnly(k, ctx, changed);
        }
        podsIn(name, ctx, changed);
    }

    /** A service built again without its namespace's pods (the caller builds them once after). */
    private void serviceOnly(String key, AmbientContext ctx, Set<String> changed) {
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String indexKey = namespace + "/" + key.substring(slash + 1) + "." + namespace + ".svc." + options.domainSuffix();
        V1Service svc = informers.services().getIndexer().getByKey(key);
        ServiceInfo built = svc == null || !informers.discovery().selects(namespace) ? null
                : KubeServiceAddresses.build(svc, ctx);
        if (built == null ? index.removeService(indexKey) : index.putService(built)) {
            changed.add(indexKey);
        }
    }

    private void podsIn(String namespace, AmbientContext ctx, Set<String> changed) {
        Set<String> keys = new HashSet<>();
        // a pod gone from the informer was removed by its own delete event
        informers.pods().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, namespace).forEach(p -> keys.add(key(p)));
        keys.forEach(k -> pod(k, ctx, changed));
    }

    private void node(String name, AmbientContext ctx, Set<String> changed) {
        for (V1Pod p : informers.pods().getIndexer().list()) {
            if (p.getSpec() != null && name.equals(p.getSpec().getNodeName())) {
                pod(key(p), ctx, changed);
            }
        }
    }

    /** Services first: workloads are built against them. What is gone from the informers is removed. */
    private void all(AmbientContext ctx, Set<String> changed) {
        waypointsTouched = true;
        Set<String> services = new HashSet<>();
        informers.services().getIndexer().list().forEach(s -> services.add(key(s)));
        index.services().forEach(s -> services.add(s.namespace() + "/" + s.address().address().getService().getName()));
        services.forEach(k -> serviceOnly(k, ctx, changed));
        Set<String> pods = new HashSet<>();
        informers.pods().getIndexer().list().forEach(p -> pods.add(key(p)));
        index.all().stream().filter(AddressInfo::isWorkload)
                .forEach(w -> pods.add(w.address().getWorkload().getNamespace() + "/" + w.address().getWorkload().getName()));
        pods.forEach(k -> pod(k, ctx, changed));
        LOG.log(Level.DEBUG, () -> "ambient index " + options.clusterId() + ": " + index.workloadCount()
                + " workloads, " + index.serviceCount() + " services");
    }

    private static String key(KubernetesObject o) {
        return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
    }

    @Override
    public void close() {
        term.close();
    }
}
