package io.meshpilot.registry.ambient;

import java.util.List;
import java.util.Map;

/**
 * The seam for ztunnel's authorization: which converted policies ({@code istio.security.Authorization}
 * resource names, {@code namespace/name}, sorted as istiod's buildWorkloadPolicies sorts them)
 * apply to a workload with these labels in this namespace. The index fills
 * {@code Workload.authorization_policies} from it; without policies it answers none.
 */
@FunctionalInterface
public interface WorkloadPolicies {
    WorkloadPolicies NONE = (namespace, labels) -> List.of();

    List<String> policies(String namespace, Map<String, String> labels);
}
