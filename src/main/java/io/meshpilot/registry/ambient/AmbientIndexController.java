package io.meshpilot.registry.ambient;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.config.store.ConfigStoreController;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Keeps the {@link AmbientIndex} of one cluster from the Kubernetes registry's informers
 * (istiod's ambient index over its krt collections), one object at a time: a pod event builds
 * that pod's workload; a service event builds the service and the workloads of its namespace
 * (their services map); a namespace event its services and pods (waypoint labels, traffic
 * distribution), and for the system namespace everything (the network); a node event the pods
 * on it (locality); a mesh config change everything (trust domain). ServiceEntries and
 * WorkloadEntries come from the config store ({@link #watchConfig}): an entry's event builds
 * that entry, and a ServiceEntry's also the workloads of its namespace. Only what changed is
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
     * @param kubernetesServicesSelectEntries PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: a Service's selector
     *                                        selects WorkloadEntries too
     * @param allowFromWaypoint PILOT_AUTO_ALLOW_WAYPOINT_POLICY: each waypoint's implicit ALLOW policy
     */
    public record Options(String clusterId, String domainSuffix, String systemNamespace,
                          boolean kubernetesServicesSelectEntries, boolean allowFromWaypoint) {
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
    /** ServiceEntries and WorkloadEntries; none until {@link #watchConfig}. */
    private volatile ConfigStore config;
    // the rest is the controller thread's own
    private final ServiceEntryHosts entryHosts = new ServiceEntryHosts();
    /** hostname -> the index keys of its services a ServiceEntry holds (not a Kubernetes Service). */
    private final Map<String, Set<String>> entryServiceKeys = new HashMap<>();
    /** ServiceEntry {@code namespace/name} -> the uids of its inline endpoints' workloads. */
    private final Map<String, Set<String>> inlineWorkloads = new HashMap<>();
    /** The WorkloadEntries ({@code namespace/name}) that are workloads. */
    private final Set<String> workloadEntries = new HashSet<>();

    private enum Kind { POD, SERVICE, NAMESPACE, NODE, GATEWAYS, SERVICE_ENTRY, WORKLOAD_ENTRY, ALL }

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

    /**
     * Reads ServiceEntries and WorkloadEntries from the store, following its events (where the
     * ServiceEntry registry is told of them); everything is built again with them.
     */
    public void watchConfig(ConfigStoreController store) {
        this.config = store;
        store.registerEventHandler(SERVICE_ENTRY, configEvents(Kind.SERVICE_ENTRY));
        store.registerEventHandler(WORKLOAD_ENTRY, configEvents(Kind.WORKLOAD_ENTRY));
        enqueue(Kind.ALL, "");
    }

    private static final String SERVICE_ENTRY = "ServiceEntry";
    private static final String WORKLOAD_ENTRY = "WorkloadEntry";

    private Consumer<ConfigEvent> configEvents(Kind kind) {
        return e -> {
            Config c = e.current() != null ? e.current() : e.old();
            enqueue(kind, c.namespace() + "/" + c.name());
        };
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
                case SERVICE_ENTRY -> serviceEntry(change.name(), ctx, changed);
                case WORKLOAD_ENTRY -> workloadEntry(change.name(), ctx, changed);
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
            updates.addressesUpdate(changed, index.drainWaypointsChanged());
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
        workloadsIn(key.substring(0, key.indexOf('/')), ctx, changed); // they list the services selecting them
    }

    private void namespace(String name, AmbientContext ctx, Set<String> changed) {
        if (name.equals(options.systemNamespace())) {
            all(ctx, changed); // its network label is every workload's and service's network
            return;
        }
        Set<String> keys = new HashSet<>();
        informers.services().getIndexer().byIndex(KubeInformers.BY_NAMESPACE, name).forEach(s -> keys.add(key(s)));
        index.servicesIn(name).stream().filter(s -> s.source() == ServiceInfo.Source.SERVICE)
                .forEach(s -> keys.add(name + "/" + s.address().address().getService().getName()));
        for (String k : keys) {
            serviceOnly(k, ctx, changed);
        }
        entriesIn(name).forEach(k -> serviceEntryOnly(k, ctx, changed));
        workloadsIn(name, ctx, changed);
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
        String host = indexKey.substring(slash + 1);
        if (entryHosts.has(host)) {
            hold(host, ctx, changed); // a ServiceEntry of this hostname yields to the Service, or takes over from it
        }
    }

    /** A ServiceEntry event: its services, its endpoints, and the workloads of its namespace (it may select them). */
    private void serviceEntry(String key, AmbientContext ctx, Set<String> changed) {
        serviceEntryOnly(key, ctx, changed);
        workloadsIn(key.substring(0, key.indexOf('/')), ctx, changed);
    }

    /** A ServiceEntry's services and inline endpoints built again, without its namespace's other workloads. */
    private void serviceEntryOnly(String key, AmbientContext ctx, Set<String> changed) {
        Config se = entry(SERVICE_ENTRY, key);
        List<ServiceInfo> built = se == null ? List.of() : ServiceEntryAddresses.build(se, ctx);
        for (String host : entryHosts.put(key, se == null ? null : se.creationTimestamp(), built)) {
            hold(host, ctx, changed);
        }
        inlineEndpoints(key, ctx, changed); // also when it has no host left
    }

    /**
     * The services of one hostname the ServiceEntries hold, put into the index, those they lost
     * removed; the endpoints of the entries naming it built again (they list what their entry holds).
     */
    private void hold(String host, AmbientContext ctx, Set<String> changed) {
        Map<String, ServiceInfo> winners = entryHosts.winners(host, k -> {
            ServiceInfo held = index.service(k);
            return held != null && held.source() == ServiceInfo.Source.SERVICE;
        });
        for (String k : entryServiceKeys.getOrDefault(host, Set.of())) {
            ServiceInfo held = index.service(k);
            if (!winners.containsKey(k) && held != null && held.source() == ServiceInfo.Source.SERVICE_ENTRY
                    && index.removeService(k)) {
                changed.add(k);
            }
        }
        if (winners.isEmpty()) {
            entryServiceKeys.remove(host);
        } else {
            entryServiceKeys.put(host, new HashSet<>(winners.keySet()));
        }
        winners.forEach((k, s) -> {
            if (index.putService(s)) {
                changed.add(k);
            }
        });
        entryHosts.entries(host).forEach(e -> inlineEndpoints(e, ctx, changed));
    }

    /** A ServiceEntry's inline endpoints as workloads, listing the entry's services the index holds. */
    private void inlineEndpoints(String key, AmbientContext ctx, Set<String> changed) {
        Config se = entry(SERVICE_ENTRY, key);
        List<ServiceInfo> held = new ArrayList<>();
        if (se != null) {
            for (String host : ((ServiceEntry) se.spec()).getHostsList()) {
                ServiceInfo s = index.service(se.namespace() + "/" + host);
                if (s != null && s.source() == ServiceInfo.Source.SERVICE_ENTRY
                        && s.address().address().getService().getName().equals(se.name())) {
                    held.add(s);
                }
            }
        }
        List<AddressInfo> built = se == null ? List.of() : WorkloadEntryWorkloads.inline(se, ctx, held);
        Set<String> uids = new HashSet<>();
        for (AddressInfo w : built) {
            uids.add(w.resourceName());
            if (index.putWorkload(w)) {
                changed.add(w.resourceName());
            }
        }
        for (String gone : inlineWorkloads.getOrDefault(key, Set.of())) {
            if (!uids.contains(gone) && index.removeWorkload(gone)) {
                changed.add(gone);
            }
        }
        if (uids.isEmpty()) {
            inlineWorkloads.remove(key);
        } else {
            inlineWorkloads.put(key, uids);
        }
    }

    private void workloadEntry(String key, AmbientContext ctx, Set<String> changed) {
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String uid = WorkloadEntryWorkloads.uid(options.clusterId(), namespace, key.substring(slash + 1));
        Config we = entry(WORKLOAD_ENTRY, key);
        AddressInfo built = we == null ? null : WorkloadEntryWorkloads.build(we, ctx, index.servicesIn(namespace),
                options.kubernetesServicesSelectEntries());
        if (built == null) {
            workloadEntries.remove(key);
        } else {
            workloadEntries.add(key);
        }
        if (built == null ? index.removeWorkload(uid) : index.putWorkload(built)) {
            changed.add(uid);
        }
    }

    /** The entry of this kind and key in the store, or null when it is gone or its namespace is not discovered. */
    private Config entry(String kind, String key) {
        ConfigStore store = config;
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        if (store == null || !informers.discovery().selects(namespace)) {
            return null;
        }
        return store.get(kind, namespace, key.substring(slash + 1)).orElse(null);
    }

    /** The keys of the entries of a kind in one namespace (null: every namespace) the store holds. */
    private Set<String> entryKeys(String kind, String namespace) {
        Set<String> out = new HashSet<>();
        ConfigStore store = config;
        if (store != null) {
            store.list(kind, namespace).forEach(c -> out.add(c.namespace() + "/" + c.name()));
        }
        return out;
    }

    /** ServiceEntries of one namespace: in the store or held (a gone one is removed). */
    private Set<String> entriesIn(String namespace) {
        Set<String> keys = entryKeys(SERVICE_ENTRY, namespace);
        entryHosts.entries().stream().filter(k -> k.startsWith(namespace + "/")).forEach(keys::add);
        return keys;
    }

    /** The pods and WorkloadEntries of one namespace built again (the services selecting them changed). */
    private void workloadsIn(String namespace, AmbientContext ctx, Set<String> changed) {
        podsIn(namespace, ctx, changed);
        Set<String> keys = entryKeys(WORKLOAD_ENTRY, namespace);
        workloadEntries.stream().filter(k -> k.startsWith(namespace + "/")).forEach(keys::add);
        keys.forEach(k -> workloadEntry(k, ctx, changed));
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
        index.services().stream().filter(s -> s.source() == ServiceInfo.Source.SERVICE)
                .forEach(s -> services.add(s.namespace() + "/" + s.address().address().getService().getName()));
        services.forEach(k -> serviceOnly(k, ctx, changed));
        Set<String> serviceEntries = entryKeys(SERVICE_ENTRY, null);
        serviceEntries.addAll(entryHosts.entries());
        serviceEntries.addAll(inlineWorkloads.keySet());
        serviceEntries.forEach(k -> serviceEntryOnly(k, ctx, changed));
        Set<String> entries = entryKeys(WORKLOAD_ENTRY, null);
        entries.addAll(workloadEntries);
        entries.forEach(k -> workloadEntry(k, ctx, changed));
        Set<String> pods = new HashSet<>();
        informers.pods().getIndexer().list().forEach(p -> pods.add(key(p)));
        index.all().stream().filter(AddressInfo::isWorkload).map(w -> w.address().getWorkload())
                .filter(w -> w.getUid().equals(PodWorkloads.uid(options.clusterId(), w.getNamespace(), w.getName())))
                .forEach(w -> pods.add(w.getNamespace() + "/" + w.getName()));
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
