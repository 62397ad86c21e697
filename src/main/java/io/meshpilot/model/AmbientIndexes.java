package io.meshpilot.model;

import io.meshpilot.api.workload.security.Authorization;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What ztunnel's Address type is answered from (istiod's model.AmbientIndexes): every workload
 * and service of the ambient index, and the lookups on-demand subscriptions need. Implemented by
 * the registry's ambient index; {@link #NONE} without ambient mode.
 */
public interface AmbientIndexes {
    /** No ambient index: every lookup finds nothing. */
    AmbientIndexes NONE = new AmbientIndexes() {
        @Override
        public List<AddressInfo> all() {
            return List.of();
        }

        @Override
        public List<AddressInfo> lookup(String key) {
            return List.of();
        }

        @Override
        public List<AddressInfo> workloadsOnNode(String node) {
            return List.of();
        }

        @Override
        public List<AddressInfo> workloadsForWaypoint(String waypoint) {
            return List.of();
        }
    };

    /**
     * The index's own ztunnel Authorizations (the implicit waypoint policies, with
     * PILOT_AUTO_ALLOW_WAYPOINT_POLICY), by resource name {@code namespace/name}.
     */
    default Map<String, Authorization> waypointPolicies() {
        return Map.of();
    }

    /** Every workload and service, unordered. */
    List<AddressInfo> all();

    /**
     * istiod's Lookup: a workload uid finds that workload; {@code network/IP} the workloads with
     * that address, else the service with that VIP and its workloads; {@code namespace/hostname}
     * a service and every workload it selects. Empty when nothing matches.
     */
    List<AddressInfo> lookup(String key);

    /** The workloads scheduled on {@code node}. */
    List<AddressInfo> workloadsOnNode(String node);

    /**
     * istiod's WorkloadsForWaypoint: the workloads that use the waypoint {@code waypoint}, given as
     * their {@code waypoint} field names it ({@code namespace/hostname}, or {@code network/IP}).
     */
    List<AddressInfo> workloadsForWaypoint(String waypoint);

    /** What a set of names resolves to, and the names that resolve to nothing. */
    record Resolved(List<AddressInfo> found, Set<String> missing) {
    }

    /**
     * istiod's AddressInformation: the addresses {@code keys} name (each once), and the keys that
     * name nothing; every address when {@code keys} is empty.
     */
    default Resolved resolve(Set<String> keys) {
        if (keys.isEmpty()) {
            return new Resolved(all(), Set.of());
        }
        List<AddressInfo> found = new ArrayList<>();
        Set<String> missing = new LinkedHashSet<>();
        Set<String> got = new HashSet<>();
        for (String key : keys) {
            List<AddressInfo> hits = lookup(key);
            if (hits.isEmpty()) {
                missing.add(key);
            }
            for (AddressInfo a : hits) {
                if (got.add(a.resourceName())) {
                    found.add(a);
                }
            }
        }
        return new Resolved(found, missing);
    }

    /**
     * istiod's AdditionalPodSubscriptions for an on-demand client: the workloads among what
     * {@code addresses} resolve to that belong to a service the client subscribes to, and every
     * workload on the client's node ({@code node}, its NODE_NAME; empty for none) it does not
     * subscribe to yet.
     */
    default Set<String> additionalPodSubscriptions(String node, Set<String> addresses, Set<String> subscribed) {
        Set<String> out = new HashSet<>();
        for (String key : addresses) {
            for (AddressInfo a : lookup(key)) {
                if (a.isWorkload() && a.address().getWorkload().getServicesMap().keySet().stream()
                        .anyMatch(subscribed::contains)) {
                    out.add(a.resourceName());
                }
            }
        }
        if (!node.isEmpty()) {
            for (AddressInfo a : workloadsOnNode(node)) {
                if (!subscribed.contains(a.resourceName())) {
                    out.add(a.resourceName());
                }
            }
        }
        return out;
    }
}
