package io.meshpilot.model;

import io.meshpilot.api.workload.Workload;
import java.util.List;
import java.util.TreeSet;

/**
 * Which workloads a waypoint serves (istiod's PushContext.WorkloadsForWaypoint, read by
 * core/waypoint.go findWaypointResources): those the ambient index bound to it, that is whose
 * {@code istio.io/use-waypoint} (own, else their namespace's) names a waypoint for
 * {@code workload} or {@code all} traffic. The index decides the binding, so a waypoint for
 * services finds none here. Read live from the index at each push of the waypoint's listeners.
 */
public final class WaypointWorkloads {
    private WaypointWorkloads() {
    }

    /**
     * The key the index files a waypoint's workloads under: {@code namespace/hostname} of the
     * waypoint's Service, as the workloads' {@code waypoint} names it.
     */
    public static String key(WaypointServices.Waypoint waypoint, String domainSuffix) {
        return waypoint.namespace() + "/" + waypoint.hostname(domainSuffix);
    }

    /**
     * The addresses of the workloads bound to the waypoint {@code proxy} is, sorted and each once;
     * none for another proxy type.
     */
    public static List<String> addresses(Proxy proxy, String domainSuffix, AmbientIndexes index) {
        return WaypointServices.Waypoint.of(proxy).map(w -> {
            TreeSet<String> out = new TreeSet<>();
            for (AddressInfo a : index.workloadsForWaypoint(key(w, domainSuffix))) {
                Workload wl = a.address().getWorkload();
                wl.getAddressesList().forEach(ip -> out.add(AddressInfo.ipText(ip.toByteArray())));
            }
            return List.copyOf(out);
        }).orElse(List.of());
    }
}
