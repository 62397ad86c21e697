package io.meshpilot.networking.telemetry;

import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.api.type.v1beta1.WorkloadSelector;
import io.meshpilot.model.Proxy;
import io.meshpilot.util.LabelSelector;
import java.util.List;

/**
 * istiod's WorkloadPolicyMatcher.ShouldAttachPolicy for the selector/targetRefs of a Telemetry
 * or WasmPlugin on a sidecar or gateway (no waypoints): with targetRefs, the policy attaches to
 * a Kubernetes Gateway deployment (label {@code gateway.networking.k8s.io/gateway-name}) of
 * its own namespace that a reference names; without, its selector's labels must be a subset
 * of the proxy's.
 */
public final class PolicyAttachment {
    static final String GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

    private PolicyAttachment() {
    }

    public static boolean attaches(WorkloadSelector selector, List<PolicyTargetReference> refs,
                                   String policyNamespace, Proxy proxy) {
        if (!refs.isEmpty()) {
            String gatewayName = proxy.labels().get(GATEWAY_NAME_LABEL);
            if (gatewayName == null || !policyNamespace.equals(proxy.namespace())) {
                return false;
            }
            for (PolicyTargetReference ref : refs) {
                if ((ref.getNamespace().isEmpty() || ref.getNamespace().equals(proxy.namespace()))
                        && ref.getGroup().equals("gateway.networking.k8s.io") && ref.getKind().equals("Gateway")
                        && ref.getName().equals(gatewayName)) {
                    return true;
                }
            }
            return false;
        }
        return LabelSelector.subsetOf(selector.getMatchLabelsMap(), proxy.labels());
    }

    /** A policy's targetRefs, the single targetRef counting as one. */
    public static List<PolicyTargetReference> refs(List<PolicyTargetReference> targetRefs,
                                                   PolicyTargetReference targetRef, boolean hasTargetRef) {
        return !targetRefs.isEmpty() ? targetRefs : hasTargetRef ? List.of(targetRef) : List.of();
    }
}
