package io.meshpilot.registry.ambient;

import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.config.Config;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which Authorizations a workload names in its {@code Workload.authorization_policies}
 * (istiod's buildWorkloadPolicies, pilot/pkg/serviceregistry/ambient/workloads.go). Policies of
 * GLOBAL and NAMESPACE scope are not listed: ztunnel applies them by their scope. Listed are the
 * AuthorizationPolicies with a selector that matches the workload's labels, of its namespace or
 * the root namespace (sorted), then the PeerAuthentication-derived ones
 * ({@link PeerAuthenticationConversion#effectivePolicies}). Names are {@code namespace/name}.
 */
public final class WorkloadPolicySelection {
    private WorkloadPolicySelection() {
    }

    /** The policy names for a workload of {@code namespace} with {@code labels}. */
    public static List<String> forWorkload(ZtunnelPolicies policies, String namespace, Map<String, String> labels) {
        String root = policies.rootNamespace();
        List<String> out = new ArrayList<>();
        policies.selectors().forEach((key, selector) -> {
            String policyNamespace = key.substring(0, key.indexOf('/'));
            if ((policyNamespace.equals(root) || policyNamespace.equals(namespace))
                    && LabelSelector.subsetOf(selector, labels)) {
                out.add(key);
            }
        });
        out.sort(null);
        out.addAll(PeerAuthenticationConversion.effectivePolicies(root, applicablePeerAuthentications(policies,
                namespace, labels)));
        return List.copyOf(out);
    }

    /**
     * istiod's fetchPeerAuthentications: the workload's namespace's policies without a selector
     * or with one that matches it, and the root namespace's without a selector.
     */
    private static List<Config> applicablePeerAuthentications(ZtunnelPolicies policies, String namespace,
                                                              Map<String, String> labels) {
        List<Config> out = new ArrayList<>();
        for (Config c : policies.peerAuthenticationsOf(namespace)) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            if (!pa.hasSelector() || LabelSelector.subsetOf(pa.getSelector().getMatchLabelsMap(), labels)) {
                out.add(c);
            }
        }
        if (!namespace.equals(policies.rootNamespace())) {
            for (Config c : policies.peerAuthenticationsOf(policies.rootNamespace())) {
                if (!((PeerAuthentication) c.spec()).hasSelector()) {
                    out.add(c);
                }
            }
        }
        return out;
    }
}
