package io.meshpilot.registry.ambient;

import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Service;
import io.meshpilot.model.AddressInfo;
import java.util.Map;

/**
 * A service as the index keeps it (istiod's model.ServiceInfo): the ztunnel Service sent, and
 * what building its workloads needs: where it came from, the selector and the port names.
 *
 * @param source    a Kubernetes Service or a ServiceEntry: their named ports resolve differently
 * @param selector  {@code spec.selector} or a ServiceEntry's {@code workloadSelector.labels}
 *                  (empty: the service selects no workload by labels)
 * @param portNames service port -> its name and named target port, for workloads' named ports
 * @param waypoint  the waypoint the service uses, or null
 */
record ServiceInfo(Source source, String namespace, AddressInfo address, Map<String, String> selector,
                   Map<Integer, PortName> portNames, Waypoints.Waypoint waypoint) {
    ServiceInfo {
        selector = Map.copyOf(selector);
        portNames = Map.copyOf(portNames);
    }

    /** A service that uses no waypoint. */
    ServiceInfo(Source source, String namespace, AddressInfo address, Map<String, String> selector,
                Map<Integer, PortName> portNames) {
        this(source, namespace, address, selector, portNames, null);
    }

    /** istiod's ServiceInfo.Source kind. */
    enum Source { SERVICE, SERVICE_ENTRY }

    /** A service port's name and its target port's name (empty when the target port is a number). */
    record PortName(String portName, String targetPortName) {
    }

    /** This service with its ztunnel Service replaced (istiod's setCanonical). */
    ServiceInfo withService(Service service) {
        return new ServiceInfo(source, namespace, AddressInfo.of(Address.newBuilder().setService(service).build()),
                selector, portNames, waypoint);
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
