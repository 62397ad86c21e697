package io.meshpilot.networking.authn;

import io.meshpilot.api.security.v1beta1.RequestAuthentication;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which RequestAuthentications apply to a proxy, as istiod's getConfigsForWorkload and
 * WorkloadPolicyMatcher.ShouldAttachPolicy choose them: those in the proxy's namespace, then
 * those in the root namespace (each oldest first). For a proxy that is not a Kubernetes Gateway
 * API gateway a policy with targetRef(s) never applies and one without applies when its selector
 * is empty or a subset of the proxy's labels. For a Gateway API gateway (label
 * {@code gateway.networking.k8s.io/gateway-name}) a policy applies when a targetRef in the
 * gateway's namespace names that Gateway, or, without targetRefs, by its selector
 * (ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY, on by default).
 */
public final class RequestAuthenticationSelection {
    static final String GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
    private static final String GATEWAY_API_GROUP = "gateway.networking.k8s.io";

    private RequestAuthenticationSelection() {
    }

    /** The policies for {@code proxy} from {@code all} (every RequestAuthentication, oldest first). */
    public static List<Config> forProxy(List<Config> all, String rootNamespace, Proxy proxy) {
        List<Config> out = new ArrayList<>();
        for (String ns : proxy.namespace().equals(rootNamespace) ? List.of(rootNamespace)
                : List.of(proxy.namespace(), rootNamespace)) {
            for (Config c : all) {
                if (c.namespace().equals(ns) && attaches(c, proxy)) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    private static boolean attaches(Config c, Proxy proxy) {
        RequestAuthentication ra = (RequestAuthentication) c.spec();
        List<PolicyTargetReference> targetRefs = ra.getTargetRefsCount() > 0 ? ra.getTargetRefsList()
                : ra.hasTargetRef() ? List.of(ra.getTargetRef()) : List.of();
        String gatewayName = proxy.labels().get(GATEWAY_NAME_LABEL);
        if (gatewayName == null || targetRefs.isEmpty()) {
            return targetRefs.isEmpty() && selected(ra, proxy.labels());
        }
        if (!c.namespace().equals(proxy.namespace())) {
            return false;
        }
        for (PolicyTargetReference ref : targetRefs) {
            boolean sameNamespace = ref.getNamespace().isEmpty() || ref.getNamespace().equals(proxy.namespace());
            if (sameNamespace && GATEWAY_API_GROUP.equals(ref.getGroup()) && "Gateway".equals(ref.getKind())
                    && ref.getName().equals(gatewayName)) {
                return true;
            }
        }
        return false;
    }

    private static boolean selected(RequestAuthentication ra, Map<String, String> labels) {
        return !ra.hasSelector() || LabelSelector.subsetOf(ra.getSelector().getMatchLabelsMap(), labels);
    }
}
