package io.meshpilot.registry.kube;

import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.WorkloadInstance;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * WorkloadEntries that Kubernetes Services select (istiod's workloadInstancesIndex with
 * PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES): kept per namespace, and turned into endpoints of
 * a Service whose selector matches them, on each of its ports (not UDP) at the Service's
 * target port, or the entry's port of that name. Used by the registry's event thread only.
 */
final class ServiceWorkloadEntries {
    private final Map<String, Map<String, WorkloadInstance>> byNamespace = new HashMap<>();

    /** Records (or, {@code deleted}, forgets) an entry; returns what it replaced, or null. */
    WorkloadInstance update(WorkloadInstance w, boolean deleted) {
        Map<String, WorkloadInstance> ns = byNamespace.computeIfAbsent(w.namespace(), n -> new TreeMap<>());
        WorkloadInstance before = deleted ? ns.remove(w.name()) : ns.put(w.name(), w);
        if (ns.isEmpty()) {
            byNamespace.remove(w.namespace());
        }
        return before;
    }

    /** istiod's serviceInstancesFromWorkloadInstances: only client-side load-balanced Services with a selector. */
    List<IstioEndpoint> endpoints(Service svc, V1Service k8s) {
        Map<String, WorkloadInstance> candidates = byNamespace.get(svc.namespace());
        Map<String, String> selector = k8s.getSpec() == null ? null : k8s.getSpec().getSelector();
        if (candidates == null || svc.resolution() != Resolution.CLIENT_SIDE_LB || svc.meshExternal()
                || selector == null || selector.isEmpty()) {
            return List.of();
        }
        List<IstioEndpoint> out = new ArrayList<>();
        for (WorkloadInstance w : candidates.values()) {
            if (!LabelSelector.subsetOf(selector, w.endpoint().labels())) {
                continue;
            }
            for (Port p : svc.ports()) {
                if (p.protocol() == Protocol.UDP) {
                    continue;
                }
                KubeServiceConversion.TargetPort target = KubeServiceConversion.targetPort(k8s, p);
                int port = target.number();
                Integer named = target.name().isEmpty() ? null : w.portMap().get(target.name());
                if (named != null && named > 0) {
                    port = named;
                } else if (target.explicitName()) {
                    continue; // the Service targets a port name this workload does not declare
                }
                IstioEndpoint t = w.endpoint();
                out.add(new IstioEndpoint(t.address(), port, p.name(), t.labels(), t.serviceAccount(), t.network(),
                        t.locality(), t.tlsMode(), t.lbWeight(), t.health(), t.workloadName(), t.namespace()));
            }
        }
        return out;
    }
}
