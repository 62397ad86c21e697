package io.meshpilot.registry.ambient;

import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Group;
import io.meshpilot.api.workload.security.Match;
import io.meshpilot.api.workload.security.Rules;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.api.workload.security.StringMatch;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The implicit ALLOW policy of each waypoint (istiod's PILOT_AUTO_ALLOW_WAYPOINT_POLICY;
 * pilot/pkg/serviceregistry/ambient/policies.go implicitWaypointPolicy and workloads.go
 * implicitWaypointPolicies): {@code <namespace>/istio_allow_waypoint_<namespace>_<name>} allows
 * the identities of the waypoint's pods, and every workload that uses the waypoint (or whose
 * services do) names it, so that, with no other ALLOW policy, traffic that skips the waypoint
 * is denied. A waypoint whose pods are unknown has none.
 */
final class ImplicitWaypointPolicies {
    private ImplicitWaypointPolicies() {
    }

    /** The policy's name; "" when the waypoint has no known identity. The '_' keeps it apart from Kubernetes names. */
    static String name(Waypoints.Waypoint w) {
        return w.serviceAccounts().isEmpty() || w.name().isEmpty() ? ""
                : "istio_allow_waypoint_" + w.namespace() + "_" + w.name();
    }

    /**
     * The policies of {@code waypoints} by resource name ({@code namespace/name}).
     *
     * @param trustDomain the mesh's trust domain, as the waypoints' SPIFFE identities carry it
     */
    static Map<String, Authorization> of(Collection<Waypoints.Waypoint> waypoints, String trustDomain) {
        Map<String, Authorization> out = new TreeMap<>();
        for (Waypoints.Waypoint w : waypoints) {
            String name = name(w);
            if (name.isEmpty()) {
                continue;
            }
            Match.Builder principals = Match.newBuilder();
            for (String sa : w.serviceAccounts()) {
                principals.addPrincipals(StringMatch.newBuilder()
                        .setExact(trustDomain + "/ns/" + w.namespace() + "/sa/" + sa));
            }
            // the scope is not used for selection: workloads name the policy themselves
            out.put(w.namespace() + "/" + name, Authorization.newBuilder().setName(name).setNamespace(w.namespace())
                    .setScope(Scope.WORKLOAD_SELECTOR).setAction(Action.ALLOW)
                    .addGroups(Group.newBuilder().addRules(Rules.newBuilder().addMatches(principals))).build());
        }
        return out;
    }

    /**
     * The implicit policies a workload (pod, WorkloadEntry or inline endpoint) names, after its
     * selected policies: those of its services' waypoints other than its own, then its own; only
     * its own when no service has another; none without PILOT_AUTO_ALLOW_WAYPOINT_POLICY.
     *
     * @param own      the waypoint the workload uses, or null
     * @param services the services that select it
     */
    static List<String> forWorkload(AmbientContext ctx, Waypoints.Waypoint own, Iterable<ServiceInfo> services) {
        if (!ctx.allowFromWaypoint()) {
            return List.of();
        }
        Map<String, Waypoints.Waypoint> others = new TreeMap<>();
        for (ServiceInfo s : services) {
            Waypoints.Waypoint w = s.waypoint();
            if (w != null && !w.name().isEmpty() && (own == null || !own.key().equals(w.key()))) {
                others.put(w.key(), w);
            }
        }
        List<Waypoints.Waypoint> named = new ArrayList<>(others.values());
        if (own != null) {
            named.add(own);
        }
        List<String> out = new ArrayList<>();
        for (Waypoints.Waypoint w : named) {
            String name = name(w);
            if (!name.isEmpty()) {
                out.add(w.namespace() + "/" + name);
            }
        }
        return out;
    }
}
