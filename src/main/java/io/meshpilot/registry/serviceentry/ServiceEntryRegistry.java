package io.meshpilot.registry.serviceentry;


import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.ServiceInstance;
import io.meshpilot.model.ShardKey;
import io.meshpilot.model.WorkloadInstance;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.ServiceEvent;
import io.meshpilot.registry.ServiceRegistry;
import io.meshpilot.util.LabelSelector;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Services from ServiceEntries, with endpoints from inline entries or from the WorkloadEntries
 * their selectors match (istiod's serviceentry controller). Selection works both ways: a new
 * WorkloadEntry joins the ServiceEntries that select it, a new ServiceEntry picks up existing
 * WorkloadEntries. Both lookups go through label indexes, so one WorkloadEntry change costs
 * the same however many ServiceEntries exist. Endpoint-only changes are reported as EDS
 * updates; changes to the services themselves as service updates (full pushes).
 *
 * <p>Changes are applied from the current store state, not the event payload, so events
 * that arrive late or twice converge on the same result.
 */
public final class ServiceEntryRegistry implements ServiceRegistry {
    private static final System.Logger LOG = System.getLogger(ServiceEntryRegistry.class.getName());
    public static final String PROVIDER = "External";
    private static final Comparator<Service> OLDEST_FIRST = Comparator.comparing(Service::creationTime)
            .thenComparing(Service::namespace).thenComparing(s -> s.configKey().name());

    private record HostNs(String hostname, String namespace) {
    }

    private record LabelPair(String namespace, String key, String value) {
    }

    private final ConfigStore store;
    private final RegistryUpdates updates;
    private final Supplier<String> trustDomain;
    private final String cluster;
    private final ShardKey shard;
    private final Object lock = new Object();
    private final List<Consumer<ServiceEvent>> handlers = new CopyOnWriteArrayList<>();
    private final List<BiConsumer<WorkloadInstance, Boolean>> workloadHandlers = new CopyOnWriteArrayList<>();

    // written under lock; the concurrent maps below are what readers see
    private final Map<ConfigKey, Config> entries = new HashMap<>();
    private final Map<ConfigKey, List<Service>> servicesByEntry = new HashMap<>();
    private final Map<ConfigKey, Map<String, List<IstioEndpoint>>> endpointsByEntry = new HashMap<>();
    private final SelectorIndex selectors = new SelectorIndex();
    private final Map<ConfigKey, WorkloadInstance> workloads = new HashMap<>();
    // Sorted by key: selection walks candidates in key order on every WorkloadEntry change,
    // and copying a hashed set into a TreeSet there was the largest single cost of a change.
    private final Map<LabelPair, SortedSet<ConfigKey>> workloadsByLabel = new HashMap<>();
    private final Map<String, SortedSet<ConfigKey>> workloadsByNamespace = new HashMap<>();
    /** Which ServiceEntries define a hostname: keeps per-host work independent of the total. */
    private final Map<String, Set<ConfigKey>> entriesByHost = new HashMap<>();
    private final AddressAllocator addresses = new AddressAllocator();

    private final Map<String, List<Service>> servicesByHost = new ConcurrentHashMap<>();
    private final Map<HostNs, List<IstioEndpoint>> endpoints = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> synced = new CompletableFuture<>();

    public ServiceEntryRegistry(ConfigStore store, RegistryUpdates updates, Supplier<String> trustDomain, String cluster) {
        this.store = store;
        this.updates = updates;
        this.trustDomain = trustDomain;
        this.cluster = cluster;
        this.shard = new ShardKey(cluster, PROVIDER);
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public String cluster() {
        return cluster;
    }

    public ShardKey shard() {
        return shard;
    }

    // ---- events -------------------------------------------------------------------------

    /** A ServiceEntry, WorkloadEntry or WorkloadGroup changed. */
    public void onConfigEvent(ConfigEvent event) {
        Config c = event.current() != null ? event.current() : event.old();
        switch (c.gvk().kind()) {
            case "ServiceEntry" -> entryChanged(c.key());
            case "WorkloadEntry" -> workloadChanged(c.key());
            default -> LOG.log(Level.DEBUG, () -> "ignored " + c.key()
                    + " (WorkloadGroups only matter for auto-registration, which comes with xDS)");
        }
    }

    private Optional<Config> current(ConfigKey key) {
        return store.get(key.kind(), key.namespace(), key.name());
    }

    private void entryChanged(ConfigKey key) {
        List<ServiceEvent> events = new ArrayList<>();
        synchronized (lock) {
            Config cur = current(key).orElse(null);
            List<Service> before = servicesByEntry.getOrDefault(key, List.of());
            List<Service> after = cur == null ? List.of() : ServiceEntryConversion.services(cur, PROVIDER, cluster);
            if (cur == null) {
                entries.remove(key);
                servicesByEntry.remove(key);
                selectors.remove(key);
            } else {
                entries.put(key, cur);
                servicesByEntry.put(key, after);
                ServiceEntry se = (ServiceEntry) cur.spec();
                if (se.hasWorkloadSelector()) {
                    selectors.put(key, se.getWorkloadSelector().getLabelsMap());
                } else {
                    selectors.remove(key);
                }
            }
            boolean servicesChanged = !before.equals(after);
            Set<String> hosts = new HashSet<>();
            before.forEach(s -> hosts.add(s.hostname()));
            after.forEach(s -> hosts.add(s.hostname()));
            before.forEach(s -> {
                Set<ConfigKey> keys = entriesByHost.get(s.hostname());
                if (keys != null) {
                    keys.remove(key);
                    if (keys.isEmpty()) {
                        entriesByHost.remove(s.hostname());
                    }
                }
            });
            after.forEach(s -> entriesByHost.computeIfAbsent(s.hostname(), h -> new HashSet<>()).add(key));
            if (servicesChanged) {
                for (String h : hosts) {
                    reindexHost(h);
                }
            }
            recomputeEndpoints(key, cur, after);
            for (String h : hosts) {
                publishEndpoints(h, key.namespace(), servicesChanged);
            }
            if (servicesChanged) {
                Map<String, Service> old = byHost(before);
                Map<String, Service> now = byHost(after);
                for (String h : hosts) {
                    if (old.containsKey(h) && now.containsKey(h) && old.get(h).equals(now.get(h))) {
                        continue;
                    }
                    // the host may live on through another ServiceEntry: then it changed, not vanished
                    boolean hostGone = !servicesByHost.containsKey(h);
                    boolean hostNew = !old.containsKey(h) && servicesByHost.get(h).size() == 1;
                    ServiceEvent.Type type = hostGone ? ServiceEvent.Type.DELETE
                            : hostNew ? ServiceEvent.Type.ADD : ServiceEvent.Type.UPDATE;
                    boolean gone = type == ServiceEvent.Type.DELETE && !hostInNamespace(h, key.namespace());
                    updates.svcUpdate(shard, h, key.namespace(), gone);
                    events.add(new ServiceEvent(type, type == ServiceEvent.Type.DELETE ? old.get(h)
                            : servicesByHost.get(h).get(0)));
                }
            }
            warnDangling(key, cur);
        }
        fire(events);
    }

    private void workloadChanged(ConfigKey key) {
        synchronized (lock) {
            Config cur = current(key).orElse(null);
            WorkloadInstance before = workloads.get(key);
            WorkloadInstance after = cur == null ? null : ServiceEntryConversion.workload(cur.name(), cur.namespace(),
                    (WorkloadEntry) cur.spec(), cur.annotations(), trustDomain.get());
            workloadUpdated(key, before, after);
            if (before != null || after != null) {
                for (BiConsumer<WorkloadInstance, Boolean> h : workloadHandlers) {
                    h.accept(after != null ? after : before, after == null);
                }
            }
        }
    }

    /**
     * A Kubernetes pod became a ready workload, changed, or stopped being one (istiod's
     * WorkloadInstanceHandler, PILOT_ENABLE_SERVICEENTRY_SELECT_PODS): ServiceEntries in its
     * namespace whose workloadSelector matches it get it as an endpoint, like a WorkloadEntry.
     */
    public void podChanged(WorkloadInstance pod, boolean deleted) {
        ConfigKey key = new ConfigKey("Pod", pod.namespace(), pod.name());
        synchronized (lock) {
            WorkloadInstance before = workloads.get(key);
            workloadUpdated(key, before, deleted ? null : pod);
        }
    }

    /**
     * Handlers of WorkloadEntry changes (a Kubernetes registry's Services select them):
     * called with the entry and whether it was deleted, under this registry's lock, so they
     * must only hand the change on.
     */
    public void appendWorkloadHandler(BiConsumer<WorkloadInstance, Boolean> handler) {
        workloadHandlers.add(handler);
    }

    private void workloadUpdated(ConfigKey key, WorkloadInstance before, WorkloadInstance after) {
        if (before != null) {
            unindexWorkload(key, before);
        }
        if (after != null) {
            workloads.put(key, after);
            indexWorkload(key, after);
        } else {
            workloads.remove(key);
        }
        Set<ConfigKey> affected = new HashSet<>();
        if (before != null) {
            affected.addAll(selectors.matching(key.namespace(), before.endpoint().labels()));
        }
        if (after != null) {
            affected.addAll(selectors.matching(key.namespace(), after.endpoint().labels()));
        }
        for (ConfigKey se : affected) {
            Config entry = entries.get(se);
            if (entry == null) {
                continue;
            }
            Map<String, List<IstioEndpoint>> old = endpointsByEntry.getOrDefault(se, Map.of());
            recomputeEndpoints(se, entry, servicesByEntry.getOrDefault(se, List.of()));
            Map<String, List<IstioEndpoint>> now = endpointsByEntry.getOrDefault(se, Map.of());
            for (String h : now.keySet()) {
                if (!now.get(h).equals(old.get(h))) {
                    publishEndpoints(h, se.namespace(), false);
                }
            }
        }
        if (affected.isEmpty() && after != null) {
            LOG.log(Level.DEBUG, () -> key + " is selected by no ServiceEntry");
        }
    }

    // ---- state (under lock) ------------------------------------------------------------------

    private void recomputeEndpoints(ConfigKey key, Config entry, List<Service> services) {
        if (entry == null) {
            endpointsByEntry.remove(key);
            return;
        }
        ServiceEntry se = (ServiceEntry) entry.spec();
        List<WorkloadInstance> selected = new ArrayList<>();
        if (se.hasWorkloadSelector()) {
            selected.addAll(selectWorkloads(key.namespace(), se.getWorkloadSelector().getLabelsMap()));
        } else {
            for (int i = 0; i < se.getEndpointsCount(); i++) {
                selected.add(ServiceEntryConversion.workload(key.name() + "/endpoints[" + i + "]", key.namespace(),
                        se.getEndpoints(i), entry.annotations(), trustDomain.get()));
            }
        }
        Map<String, List<IstioEndpoint>> byHost = new LinkedHashMap<>();
        for (Service s : services) {
            byHost.put(s.hostname(), ServiceEntryConversion.endpoints(s, se, selected));
        }
        endpointsByEntry.put(key, byHost);
    }

    private List<WorkloadInstance> selectWorkloads(String namespace, Map<String, String> selector) {
        SortedSet<ConfigKey> candidates;
        if (selector.isEmpty()) {
            candidates = workloadsByNamespace.getOrDefault(namespace, Collections.emptySortedSet());
        } else {
            String k = selector.keySet().stream().min(String::compareTo).orElseThrow();
            candidates = workloadsByLabel.getOrDefault(new LabelPair(namespace, k, selector.get(k)),
                    Collections.emptySortedSet());
        }
        List<WorkloadInstance> out = new ArrayList<>();
        for (ConfigKey c : candidates) { // already in key order
            WorkloadInstance w = workloads.get(c);
            if (w != null && LabelSelector.subsetOf(selector, w.endpoint().labels())) {
                out.add(w);
            }
        }
        return out;
    }

    private void indexWorkload(ConfigKey key, WorkloadInstance w) {
        workloadsByNamespace.computeIfAbsent(key.namespace(), n -> new TreeSet<>()).add(key);
        w.endpoint().labels().forEach((k, v) ->
                workloadsByLabel.computeIfAbsent(new LabelPair(key.namespace(), k, v), p -> new TreeSet<>()).add(key));
    }

    private void unindexWorkload(ConfigKey key, WorkloadInstance w) {
        Set<ConfigKey> ns = workloadsByNamespace.get(key.namespace());
        if (ns != null) {
            ns.remove(key);
        }
        w.endpoint().labels().forEach((k, v) -> {
            Set<ConfigKey> s = workloadsByLabel.get(new LabelPair(key.namespace(), k, v));
            if (s != null) {
                s.remove(key);
            }
        });
    }

    /** The endpoints of a host in a namespace: every ServiceEntry there defining it, in key order. */
    private void publishEndpoints(String hostname, String namespace, boolean serviceChangeFollows) {
        List<IstioEndpoint> merged = new ArrayList<>();
        for (ConfigKey se : new TreeSet<>(entriesByHost.getOrDefault(hostname, Set.of()))) {
            if (se.namespace().equals(namespace)) {
                merged.addAll(endpointsByEntry.getOrDefault(se, Map.of()).getOrDefault(hostname, List.of()));
            }
        }
        HostNs hn = new HostNs(hostname, namespace);
        if (merged.isEmpty()) {
            endpoints.remove(hn);
        } else {
            endpoints.put(hn, List.copyOf(merged));
        }
        if (serviceChangeFollows) {
            updates.edsCacheUpdate(shard, hostname, namespace, merged);
        } else if (dnsResolved(hostname, namespace)) {
            // DNS services carry their endpoints in the cluster (STRICT_DNS), not in EDS:
            // istiod pushes those changes fully
            updates.edsCacheUpdate(shard, hostname, namespace, merged);
            updates.svcUpdate(shard, hostname, namespace, false);
        } else {
            updates.edsUpdate(shard, hostname, namespace, merged);
        }
    }

    private boolean dnsResolved(String hostname, String namespace) {
        for (Service svc : servicesByHost.getOrDefault(hostname, List.of())) {
            if (svc.namespace().equals(namespace)) {
                return svc.resolution() == Resolution.DNS_LB
                        || svc.resolution() == Resolution.DNS_ROUND_ROBIN_LB;
            }
        }
        return false;
    }

    /** Rebuilds one host's service list (oldest first) and its automatic address. */
    private void reindexHost(String hostname) {
        List<Service> all = new ArrayList<>();
        for (ConfigKey se : entriesByHost.getOrDefault(hostname, Set.of())) {
            for (Service svc : servicesByEntry.getOrDefault(se, List.of())) {
                if (svc.hostname().equals(hostname)) {
                    all.add(svc);
                }
            }
        }
        if (all.isEmpty()) {
            servicesByHost.remove(hostname);
            addresses.release(hostname);
            return;
        }
        all.sort(OLDEST_FIRST);
        String ip = null;
        if (AddressAllocator.needsAddress(all.get(0))) {
            ip = addresses.assign(hostname);
        } else {
            addresses.release(hostname);
        }
        List<Service> withAddress = new ArrayList<>();
        for (Service svc : all) {
            withAddress.add(ip != null && AddressAllocator.needsAddress(svc) ? svc.withAutoAllocatedIpv4(ip) : svc);
        }
        servicesByHost.put(hostname, List.copyOf(withAddress));
    }

    /**
     * Dangling references are warnings, as in istiod's analysis, never errors. During the
     * initial load entries often arrive before their workloads, so only once synced.
     */
    private void warnDangling(ConfigKey key, Config entry) {
        if (entry == null || !synced.isDone()) {
            return;
        }
        ServiceEntry se = (ServiceEntry) entry.spec();
        boolean noEndpoints = endpointsByEntry.getOrDefault(key, Map.of()).values().stream().allMatch(List::isEmpty);
        if (se.hasWorkloadSelector() && noEndpoints) {
            LOG.log(Level.WARNING, "ServiceEntry " + key + " selects no WorkloadEntry in namespace " + key.namespace()
                    + " (selector " + se.getWorkloadSelector().getLabelsMap() + "): it has no endpoints yet");
        } else if (se.getResolution() == ServiceEntry.Resolution.STATIC && noEndpoints) {
            LOG.log(Level.WARNING, "ServiceEntry " + key + " has STATIC resolution but no endpoints");
        }
    }

    private boolean hostInNamespace(String hostname, String namespace) {
        for (ConfigKey se : entriesByHost.getOrDefault(hostname, Set.of())) {
            if (se.namespace().equals(namespace)) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, Service> byHost(List<Service> services) {
        Map<String, Service> m = new HashMap<>();
        services.forEach(s -> m.put(s.hostname(), s));
        return m;
    }

    private void fire(List<ServiceEvent> events) {
        for (ServiceEvent e : events) {
            for (Consumer<ServiceEvent> h : handlers) {
                try {
                    h.accept(e);
                } catch (RuntimeException ex) {
                    LOG.log(Level.ERROR, "service handler failed service=" + e.service().hostname(), ex);
                }
            }
        }
    }

    // ---- reads ----------------------------------------------------------------------------

    @Override
    public List<Service> services() {
        List<Service> out = new ArrayList<>();
        servicesByHost.values().forEach(out::addAll);
        out.sort(Service.BY_HOST);
        return out;
    }

    /** The service of a host; with several ServiceEntries for it, the oldest wins (as istiod). */
    @Override
    public Optional<Service> service(String hostname) {
        List<Service> list = servicesByHost.get(hostname);
        return list == null || list.isEmpty() ? Optional.empty() : Optional.of(list.get(0));
    }

    @Override
    public List<ServiceInstance> instances(Service service, int port, Map<String, String> labels) {
        return ServiceInstance.select(service, port, labels,
                endpoints.getOrDefault(new HostNs(service.hostname(), service.namespace()), List.of()));
    }

    /** Workload instances known from WorkloadEntries and selectable pods (for /debug). */
    public List<WorkloadInstance> workloads() {
        synchronized (lock) {
            return workloads.values().stream().sorted(Comparator.comparing(WorkloadInstance::namespace)
                    .thenComparing(WorkloadInstance::name)).toList();
        }
    }

    @Override
    public void appendServiceHandler(Consumer<ServiceEvent> handler) {
        handlers.add(handler);
    }

    public void markSynced() {
        synced.complete(null);
    }


    @Override
    public CompletableFuture<Void> synced() {
        return synced;
    }
}
