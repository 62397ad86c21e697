package io.meshpilot.networking.authz;

import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.WorkloadPolicyMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * The AuthorizationPolicies that apply to one proxy (or one waypoint chain), by action, as
 * istiod's ListAuthorizationPolicies picks them: those of the root namespace, then those of the
 * proxy's namespace (then of the chain's service), each oldest first, kept when
 * {@link WorkloadPolicyMatcher} attaches them: by selector on a sidecar (no selector: every
 * workload of its namespace, or of the mesh for the root namespace), by targetRefs naming its
 * Gateway on a Kubernetes Gateway deployment (or by selector without targetRefs), and on a
 * waypoint only by targetRefs (its Gateway, the chain's Service or ServiceEntry, the
 * {@code istio-waypoint} class).
 */
record SelectedPolicies(List<Config> custom, List<Config> deny, List<Config> allow, List<Config> audit) {
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
        return matching(WorkloadPolicyMatcher.forProxy(proxy, push.rootNamespace()), push);
    }

    /** The policies that attach by {@code matcher}, from the namespaces it looks in. */
    static SelectedPolicies matching(WorkloadPolicyMatcher matcher, PushContext push) {
        List<Config> custom = new ArrayList<>();
        List<Config> deny = new ArrayList<>();
        List<Config> allow = new ArrayList<>();
        List<Config> audit = new ArrayList<>();
        for (String ns : matcher.lookupNamespaces()) {
            for (Config c : push.authorizationPolicies(ns)) {
                AuthorizationPolicy ap = (AuthorizationPolicy) c.spec();
                if (!matcher.attaches(c.namespace(), ap.hasSelector() ? ap.getSelector() : null,
                        WorkloadPolicyMatcher.targetRefs(ap.getTargetRefsList(), ap.getTargetRef(), ap.hasTargetRef()))) {
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
}
