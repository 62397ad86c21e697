package io.meshpilot.registry.ambient;

import io.meshpilot.api.workload.GatewayAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The waypoints the index binds services and workloads to (istiod's Waypoint collection, built
 * from Gateways of class {@code istio-waypoint} once they have an address). The index reads the
 * {@code istio.io/use-waypoint} labels; what a named waypoint is comes from here.
 */
@FunctionalInterface
public interface Waypoints {
    /** No waypoint exists: every {@code istio.io/use-waypoint} is left unbound, as istiod leaves a waypoint that is not ready. */
    Waypoints NONE = (namespace, name) -> Optional.empty();

    String USE_WAYPOINT = "istio.io/use-waypoint";
    String USE_WAYPOINT_NAMESPACE = "istio.io/use-waypoint-namespace";

    /**
     * A ready waypoint.
     *
     * @param namespace       its Gateway's namespace ("" when the seam does not know it)
     * @param name            its Gateway's name
     * @param address         where ztunnel sends traffic for it (hostname or IP, and its HBONE port)
     * @param trafficType     its {@code istio.io/waypoint-for}: service (the default), workload, all or none
     * @param serviceAccounts the service accounts of its pods, sorted (istiod's Waypoint.ServiceAccounts)
     */
    record Waypoint(String namespace, String name, GatewayAddress address, String trafficType,
                    List<String> serviceAccounts) {
        public Waypoint {
            serviceAccounts = List.copyOf(serviceAccounts);
        }

        /** A waypoint known only by its address (no identities: no implicit policy). */
        public Waypoint(GatewayAddress address, String trafficType) {
            this("", "", address, trafficType, List.of());
        }

        /** {@code namespace/name}, istiod's ResourceName. */
        String key() {
            return namespace + "/" + name;
        }

        boolean forServices() {
            return trafficType.equals("service") || trafficType.equals("all");
        }

        boolean forWorkloads() {
            return trafficType.equals("workload") || trafficType.equals("all");
        }
    }

    /** The ready waypoint {@code namespace/name}, if there is one. */
    Optional<Waypoint> find(String namespace, String name);

    /** Every ready waypoint (for their implicit policies); none unless the seam can list them. */
    default List<Waypoint> all() {
        return List.of();
    }

    /** A named waypoint, or "none" opted out. */
    record Use(String namespace, String name) {
        static final Use NONE = new Use("", "none");

        boolean none() {
            return this == NONE;
        }

        /**
         * istiod's GetUseWaypoint: {@code istio.io/use-waypoint} ("none" opts out), in
         * {@code istio.io/use-waypoint-namespace} or {@code defaultNamespace}; null when unlabelled.
         */
        static Use of(Map<String, String> labels, String defaultNamespace) {
            String name = labels.get(USE_WAYPOINT);
            if (name == null) {
                return null;
            }
            return name.equals("none") ? NONE : new Use(labels.getOrDefault(USE_WAYPOINT_NAMESPACE, defaultNamespace), name);
        }
    }

    /**
     * istiod's fetchWaypointForTarget: the object's own label, else its namespace's; a label
     * naming a waypoint that is not ready binds nothing (the namespace's is not tried).
     */
    default Optional<Waypoint> forTarget(Map<String, String> labels, String namespace,
                                         Map<String, String> namespaceLabels) {
        Use own = Use.of(labels, namespace);
        if (own != null) {
            return own.none() ? Optional.empty() : find(own.namespace(), own.name());
        }
        Use inherited = Use.of(namespaceLabels, namespace);
        return inherited == null || inherited.none() ? Optional.empty() : find(inherited.namespace(), inherited.name());
    }
}
