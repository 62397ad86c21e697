package io.meshpilot.registry.ambient;

import io.meshpilot.model.AddressInfo;
import java.util.Map;

/**
 * A Kubernetes Service as the index keeps it (istiod's model.ServiceInfo): the ztunnel Service
 * sent, and what building its workloads needs: the selector and the port names.
 *
 * @param selector  {@code spec.selector} (empty: the service selects no pod by labels)
 * @param portNames service port -> its name and named target port, for pods' named ports
 * @param waypoint  the waypoint the service uses, or null
 */
record ServiceInfo(String namespace, AddressInfo address, Map<String, String> selector,
                   Map<Integer, PortName> portNames, Waypoints.Waypoint waypoint) {
    ServiceInfo {
        selector = Map.copyOf(selector);
        portNames = Map.copyOf(portNames);
    }

    /** A service that uses no waypoint. */
    ServiceInfo(String namespace, AddressInfo address, Map<String, String> selector, Map<Integer, PortName> portNames) {
        this(namespace, address, selector, portNames, null);
    }

    /** A service port's name and its target port's name (empty when the target port is a number). */
    record PortName(String portName, String targetPortName) {
    }

    /** The key workloads list the service under: {@code namespace/hostname}. */
    String key() {
        return address.resourceName();
    }

    /** istiod's FilterSelectsNonEmpty: a non-empty selector whose labels the pod has. */
    boolean selects(Map<String, String> podLabels) {
        if (selector.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, String> e : selector.entrySet()) {
            if (!e.getValue().equals(podLabels.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
