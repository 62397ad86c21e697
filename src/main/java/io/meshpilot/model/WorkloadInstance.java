package io.meshpilot.model;

import java.util.Map;

/**
 * A workload that services may select (istiod's model.WorkloadInstance): a WorkloadEntry
 * here, a pod with the Kubernetes registry later.
 *
 * @param endpoint the workload's endpoint template (address, labels, identity, locality...)
 * @param portMap  service port name to workload port (WorkloadEntry.ports)
 */
public record WorkloadInstance(String name, String namespace, String kind, IstioEndpoint endpoint,
                               Map<String, Integer> portMap) {
    public WorkloadInstance {
        portMap = portMap == null ? Map.of() : Map.copyOf(portMap);
    }
}
