package io.meshpilot.networking.authz;

import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.List;

/**
 * The AuthorizationPolicies that apply to one proxy, by action, as istiod's
 * ListAuthorizationPolicies picks them: those of the root namespace, then those of the proxy's
 * namespace, each oldest first. A policy applies when its selector's labels are a subset of
 * the proxy's (no selector: every workload of its namespace, or of the mesh for the root
 * namespace). A policy with {@code targetRef(s)} never applies to a sidecar; on a Kubernetes
 * Gateway deployment (label {@code gateway.networking.k8s.io/gateway-name}) it applies when a
 * reference names that Gateway in the policy's own namespace, and a policy without references
 * falls back to its selector (istiod's ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY, on by default).
 */
record SelectedPolicies(List<Config> custom, List<Config> deny, List<Config> allow, List<Config> audit) {
    static final String GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
    static final SelectedPolicies NONE = new SelectedPolicies(List.of(), List.of(), List.of(), List.of());

    SelectedPolicies {
        custom = List.copyOf(custom);
        deny = List.copyOf(deny);
        allow = List.copyOf(allow);
        audit = List.copyOf(audit);
    }

    boolean isEmpty() {
        return custom.isEmpty() && deny.isEmpty() && allow.isEmpty() && audit.isEmpty();
    }

    static SelectedPolicies forProxy(Proxy proxy, PushContext push) {
        List<Config> custom = new ArrayList<>();
        List<Config> deny = new ArrayList<>();
        List<Config> allow = new ArrayList<>();
        List<Config> audit = new ArrayList<>();
        List<String> namespaces = push.rootNamespace().equals(proxy.namespace()) ? List.of(push.rootNamespace())
                : List.of(push.rootNamespace(), proxy.namespace());
        for (String ns : namespaces) {
            for (Config c : push.authorizationPolicies(ns)) {
                AuthorizationPolicy ap = (AuthorizationPolicy) c.spec();
                if (!applies(ap, c.namespace(), proxy)) {
                    continue;
                }
                switch (ap.getAction()) {
                    case ALLOW -> allow.add(c);
                    case DENY -> deny.add(c);
                    case AUDIT -> audit.add(c);
                    case CUSTOM -> custom.add(c);
                    default -> { } // validation refuses other actions
                }
            }
        }
        if (custom.isEmpty() && deny.isEmpty() && allow.isEmpty() && audit.isEmpty()) {
            return NONE;
        }
        return new SelectedPolicies(custom, deny, allow, audit);
    }

    /** istiod's WorkloadPolicyMatcher.ShouldAttachPolicy for a sidecar or gateway (not a waypoint). */
    static boolean applies(AuthorizationPolicy ap, String policyNamespace, Proxy proxy) {
        List<PolicyTargetReference> refs = ap.getTargetRefsCount() > 0 ? ap.getTargetRefsList()
                : ap.hasTargetRef() ? List.of(ap.getTargetRef()) : List.of();
        String gatewayName = proxy.labels().get(GATEWAY_NAME_LABEL);
        if (gatewayName == null || refs.isEmpty()) {
            return refs.isEmpty() && selected(ap, proxy);
        }
        for (PolicyTargetReference ref : refs) {
            if (!policyNamespace.equals(proxy.namespace())
                    || !(ref.getNamespace().isEmpty() || ref.getNamespace().equals(proxy.namespace()))) {
                continue;
            }
            if (ref.getGroup().equals("gateway.networking.k8s.io") && ref.getKind().equals("Gateway")
                    && ref.getName().equals(gatewayName)) {
                return true;
            }
        }
        return false;
    }

    private static boolean selected(AuthorizationPolicy ap, Proxy proxy) {
        return !ap.hasSelector()
                || LabelSelector.subsetOf(ap.getSelector().getMatchLabelsMap(), proxy.labels());
    }
}
