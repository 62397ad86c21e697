package io.meshpilot.registry.ambient;

import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.model.AmbientIndexes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ambient index's state (istiod's ambient index: its workloads and services collections
 * and their indexes): workloads by uid, services by {@code namespace/hostname}, and the lookups
 * ztunnel's on-demand names need (by {@code network/IP}, by service, by node). Written by the
 * controller's one thread, one object at a time; read by pushes from any thread. A put reports
 * whether the resource changed, so the controller tells the push path only the keys that did.
 */
public final class AmbientIndex implements AmbientIndexes {
    private final Map<String, AddressInfo> workloads = new ConcurrentHashMap<>();
    private final Map<String, ServiceInfo> services = new ConcurrentHashMap<>();
    /** namespace -> its services by key: a pod is built against its namespace's services only. */
    private final Map<String, Map<String, ServiceInfo>> servicesByNamespace = new ConcurrentHashMap<>();
    /** {@code network/IP} -> workload uids (host-network pods share their node's IP). */
    private final Map<String, Set<String>> workloadsByAddress = new ConcurrentHashMap<>();
    /** {@code network/IP} -> service keys. */
    private final Map<String, Set<String>> servicesByAddress = new ConcurrentHashMap<>();
    /** service key -> the uids of the workloads that list it. */
    private final Map<String, Set<String>> workloadsByService = new ConcurrentHashMap<>();
    /** node -> the uids of its workloads. */
    private final Map<String, Set<String>> workloadsByNode = new ConcurrentHashMap<>();
    /** waypoint ({@link #waypointKey}) -> the uids of the workloads that use it (istiod's ByOwningWaypointHostname/IP). */
    private final Map<String, Set<String>> workloadsByWaypoint = new ConcurrentHashMap<>();
    /**
     * The waypoints whose workloads changed since the controller last {@link #drainWaypointsChanged drained}
     * them: the old and the new waypoint of each changed workload, so a detach pushes the waypoint too.
     * Written and drained by the controller's one thread.
     */
    private final Set<String> waypointsChanged = new HashSet<>();

    /** The implicit waypoint policies; replaced whole. */
    private volatile Map<String, Authorization> waypointPolicies = Map.of();

    @Override
    public Map<String, Authorization> waypointPolicies() {
        return waypointPolicies;
    }

    /** Replaces the implicit waypoint policies; the names of those added, changed or removed. */
    Set<String> putWaypointPolicies(Map<String, Authorization> policies) {
        Map<String, Authorization> old = waypointPolicies;
        Set<String> changed = new TreeSet<>();
        policies.forEach((k, v) -> {
            if (!v.equals(old.get(k))) {
                changed.add(k);
            }
        });
        old.keySet().stream().filter(k -> !policies.containsKey(k)).forEach(changed::add);
        waypointPolicies = Map.copyOf(policies);
        return changed;
    }

    /** Records a workload; false when it is the one already held. */
    boolean putWorkload(AddressInfo w) {
        AddressInfo old = workloads.put(w.resourceName(), w);
        if (old != null && old.address().equals(w.address())) {
            return false;
        }
        if (old != null) {
            unindexWorkload(old);
        }
        indexWorkload(w);
        return true;
    }

    /** The waypoints whose workloads changed since the last call, and forgets them. */
    Set<String> drainWaypointsChanged() {
        Set<String> out = Set.copyOf(waypointsChanged);
        waypointsChanged.clear();
        return out;
    }

    /** Forgets a workload; false when it was not held. */
    boolean removeWorkload(String uid) {
        AddressInfo old = workloads.remove(uid);
        if (old == null) {
            return false;
        }
        unindexWorkload(old);
        return true;
    }

    /** Records a service; false when it is the one already held. */
    boolean putService(ServiceInfo s) {
        ServiceInfo old = services.put(s.key(), s);
        if (old != null && old.equals(s)) {
            return false;
        }
        if (old != null) {
            old.address().aliases().forEach(a -> remove(servicesByAddress, a, old.key()));
        }
        s.address().aliases().forEach(a -> add(servicesByAddress, a, s.key()));
        servicesByNamespace.computeIfAbsent(s.namespace(), n -> new ConcurrentHashMap<>()).put(s.key(), s);
        return !(old != null && old.address().address().equals(s.address().address()));
    }

    /** Forgets a service; false when it was not held. */
    boolean removeService(String key) {
        ServiceInfo old = services.remove(key);
        if (old == null) {
            return false;
        }
        old.address().aliases().forEach(a -> remove(servicesByAddress, a, key));
        servicesByNamespace.computeIfPresent(old.namespace(), (n, m) -> {
            m.remove(key);
            return m.isEmpty() ? null : m;
        });
        return true;
    }

    /** The service held under {@code namespace/hostname}, or null. */
    ServiceInfo service(String key) {
        return services.get(key);
    }

    /** The services of one namespace. */
    Collection<ServiceInfo> servicesIn(String namespace) {
        Map<String, ServiceInfo> m = servicesByNamespace.get(namespace);
        return m == null ? List.of() : m.values();
    }

    Collection<ServiceInfo> services() {
        return services.values();
    }

    /** How many workloads and services are held (for the start-up log and /debug). */
    int workloadCount() {
        return workloads.size();
    }

    int serviceCount() {
        return services.size();
    }

    @Override
    public List<AddressInfo> all() {
        List<AddressInfo> out = new ArrayList<>(workloads.size() + services.size());
        out.addAll(workloads.values());
        services.values().forEach(s -> out.add(s.address()));
        return out;
    }

    @Override
    public List<AddressInfo> lookup(String key) {
        AddressInfo w = workloads.get(key);
        if (w != null) {
            return List.of(w);
        }
        if (key.indexOf('/') < 0) {
            return List.of();
        }
        List<AddressInfo> byIp = resolve(workloadsByAddress.get(key), workloads);
        if (!byIp.isEmpty()) {
            return byIp;
        }
        ServiceInfo svc = services.get(key);
        if (svc == null) {
            Set<String> keys = servicesByAddress.get(key);
            svc = keys == null || keys.isEmpty() ? null : services.get(keys.iterator().next());
        }
        if (svc == null) {
            return List.of();
        }
        List<AddressInfo> out = new ArrayList<>();
        out.add(svc.address());
        out.addAll(resolve(workloadsByService.get(svc.key()), workloads));
        return out;
    }

    @Override
    public List<AddressInfo> workloadsOnNode(String node) {
        return resolve(workloadsByNode.get(node), workloads);
    }

    @Override
    public List<AddressInfo> workloadsForWaypoint(String waypoint) {
        return resolve(workloadsByWaypoint.get(waypoint), workloads);
    }

    /**
     * The key a workload's waypoint is indexed by: {@code namespace/hostname} for a waypoint
     * given by hostname, {@code network/IP} for one given by address; empty for none.
     */
    static String waypointKey(Workload w) {
        if (!w.hasWaypoint()) {
            return "";
        }
        GatewayAddress gw = w.getWaypoint();
        if (gw.hasHostname()) {
            return gw.getHostname().getNamespace() + "/" + gw.getHostname().getHostname();
        }
        return gw.getAddress().getNetwork() + "/" + AddressInfo.ipText(gw.getAddress().getAddress().toByteArray());
    }

    private static List<AddressInfo> resolve(Set<String> keys, Map<String, AddressInfo> from) {
        if (keys == null) {
            return List.of();
        }
        return keys.stream().map(from::get).filter(Objects::nonNull).toList();
    }

    private void indexWorkload(AddressInfo w) {
        String uid = w.resourceName();
        w.aliases().forEach(a -> add(workloadsByAddress, a, uid));
        w.address().getWorkload().getServicesMap().keySet().forEach(s -> add(workloadsByService, s, uid));
        add(workloadsByNode, w.address().getWorkload().getNode(), uid);
        String waypoint = waypointKey(w.address().getWorkload());
        if (!waypoint.isEmpty()) {
            add(workloadsByWaypoint, waypoint, uid);
            waypointsChanged.add(waypoint);
        }
    }

    private void unindexWorkload(AddressInfo w) {
        String uid = w.resourceName();
        w.aliases().forEach(a -> remove(workloadsByAddress, a, uid));
        w.address().getWorkload().getServicesMap().keySet().forEach(s -> remove(workloadsByService, s, uid));
        remove(workloadsByNode, w.address().getWorkload().getNode(), uid);
        String waypoint = waypointKey(w.address().getWorkload());
        if (!waypoint.isEmpty()) {
            remove(workloadsByWaypoint, waypoint, uid);
            waypointsChanged.add(waypoint);
        }
    }

    private static void add(Map<String, Set<String>> index, String key, String value) {
        index.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(value);
    }

    private static void remove(Map<String, Set<String>> index, String key, String value) {
        index.computeIfPresent(key, (k, set) -> {
            set.remove(value);
            return set.isEmpty() ? null : set;
        });
    }
}
