package io.meshpilot.model;

import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.api.type.v1beta1.WorkloadSelector;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Whether a policy with a {@code selector} and {@code targetRef(s)} attaches to a workload, as
 * istiod's WorkloadPolicyMatcher.ShouldAttachPolicy (pilot/pkg/model/policyattachment.go):
 * <ul>
 * <li>a workload that is no Kubernetes Gateway deployment (no
 * {@code gateway.networking.k8s.io/gateway-name} label): never by targetRefs, else by selector;</li>
 * <li>a gateway without targetRefs on the policy: by selector (istiod's
 * ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY, on by default), but a waypoint never by selector;</li>
 * <li>by targetRef: the Gateway of the workload's namespace that deploys it (the policy in that
 * namespace); for a waypoint also a Service (Kubernetes registry) or ServiceEntry (External
 * registry) it serves, named in the policy's namespace, and the {@code istio-waypoint}
 * GatewayClass by a policy of the root namespace.</li>
 * </ul>
 *
 * @param workloadNamespace the proxy's config namespace
 * @param workloadLabels    the proxy's labels
 * @param waypoint          whether the proxy is a waypoint
 * @param services          the services a waypoint chain is built for (at most one, as istiod lists)
 * @param rootNamespace     the mesh's root namespace ("" when the caller has none to offer)
 */
public record WorkloadPolicyMatcher(String workloadNamespace, Map<String, String> workloadLabels, boolean waypoint,
                                    List<ServiceRef> services, String rootNamespace) {
    public static final String GATEWAY_NAME_LABEL = WaypointServices.GATEWAY_NAME;
    /** istiod's constants.WaypointGatewayClassName. */
    public static final String WAYPOINT_CLASS = "istio-waypoint";
    static final String GATEWAY_API_GROUP = "gateway.networking.k8s.io";
    static final String KUBERNETES_REGISTRY = "Kubernetes";
    static final String EXTERNAL_REGISTRY = "External";

    /** A service a policy may name: its object name, namespace and registry. */
    public record ServiceRef(String name, String namespace, String registry) {
        /**
         * istiod's WithService: the Service object's name, or a ServiceEntry's (its
         * Attributes.ObjectName; its Attributes.Name is a host).
         */
        public static ServiceRef of(Service svc) {
            String name;
            if (svc.configKey() != null) {
                name = svc.configKey().name();
            } else {
                int dot = svc.hostname().indexOf('.');
                name = dot < 0 ? svc.hostname() : svc.hostname().substring(0, dot);
            }
            return new ServiceRef(name, svc.namespace(), svc.registry());
        }
    }

    public WorkloadPolicyMatcher {
        workloadLabels = Map.copyOf(workloadLabels);
        services = List.copyOf(services);
    }

    /** istiod's PolicyMatcherForProxy(...).WithRootNamespace(root). */
    public static WorkloadPolicyMatcher forProxy(Proxy proxy, String rootNamespace) {
        return new WorkloadPolicyMatcher(proxy.namespace(), proxy.labels(), proxy.type() == Proxy.Type.WAYPOINT,
                List.of(), rootNamespace);
    }

    /** This matcher for the chain of {@code svc} (null: for no service). */
    public WorkloadPolicyMatcher withService(Service svc) {
        if (svc == null) {
            return this;
        }
        List<ServiceRef> more = new ArrayList<>(services);
        more.add(ServiceRef.of(svc));
        return new WorkloadPolicyMatcher(workloadNamespace, workloadLabels, waypoint, more, rootNamespace);
    }

    /**
     * The namespaces whose policies may attach, in istiod's lookup order (ListAuthorizationPolicies):
     * the root namespace, the workload's, then the services'; each once.
     */
    public List<String> lookupNamespaces() {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        out.add(rootNamespace);
        out.add(workloadNamespace);
        services.forEach(s -> out.add(s.namespace()));
        return List.copyOf(out);
    }

    /** A policy's targetRefs, the single legacy {@code targetRef} counting as one (istiod's GetTargetRefs). */
    public static List<PolicyTargetReference> targetRefs(List<PolicyTargetReference> targetRefs,
                                                         PolicyTargetReference targetRef, boolean hasTargetRef) {
        return !targetRefs.isEmpty() ? targetRefs : hasTargetRef ? List.of(targetRef) : List.of();
    }

    /**
     * Whether the policy {@code policyNamespace}/... with {@code selector} (null: none) and
     * {@code refs} attaches to this workload.
     */
    public boolean attaches(String policyNamespace, WorkloadSelector selector, List<PolicyTargetReference> refs) {
        String gatewayName = workloadLabels.get(GATEWAY_NAME_LABEL);
        if (gatewayName == null) {
            return refs.isEmpty() && selected(selector);
        }
        if (refs.isEmpty()) {
            return !waypoint && selected(selector);
        }
        for (PolicyTargetReference ref : refs) {
            if (waypoint && namesService(ref, policyNamespace)) {
                return true;
            }
            if (waypoint && policyNamespace.equals(rootNamespace) && is(ref, GATEWAY_API_GROUP, "GatewayClass")
                    && ref.getName().equals(WAYPOINT_CLASS)) {
                return true;
            }
            if (!policyNamespace.equals(workloadNamespace)
                    || !(ref.getNamespace().isEmpty() || ref.getNamespace().equals(workloadNamespace))) {
                continue; // a reference to another namespace never matches
            }
            if (is(ref, GATEWAY_API_GROUP, "Gateway") && ref.getName().equals(gatewayName)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code ref} names what only waypoints attach by: a Service, a ServiceEntry, the {@code istio-waypoint} class. */
    public static boolean waypointKind(PolicyTargetReference ref) {
        return is(ref, "", "Service") || is(ref, "networking.istio.io", "ServiceEntry")
                || is(ref, GATEWAY_API_GROUP, "GatewayClass") && ref.getName().equals(WAYPOINT_CLASS);
    }

    private boolean namesService(PolicyTargetReference ref, String policyNamespace) {
        String registry = is(ref, "", "Service") ? KUBERNETES_REGISTRY
                : is(ref, "networking.istio.io", "ServiceEntry") ? EXTERNAL_REGISTRY : null;
        if (registry == null) {
            return false;
        }
        for (ServiceRef s : services) {
            if (s.name().equals(ref.getName()) && s.namespace().equals(policyNamespace) && s.registry().equals(registry)) {
                return true;
            }
        }
        return false;
    }

    /** istiod's matchesGroupKind: groups compared canonically ({@code ""} and {@code core} are the core group). */
    private static boolean is(PolicyTargetReference ref, String group, String kind) {
        return canonical(ref.getGroup()).equals(canonical(group)) && ref.getKind().equals(kind);
    }

    private static String canonical(String group) {
        return group.isEmpty() ? "core" : group;
    }

    private boolean selected(WorkloadSelector selector) {
        return selector == null || LabelSelector.subsetOf(selector.getMatchLabelsMap(), workloadLabels);
    }
}
