package io.meshpilot.inject;

import io.meshpilot.util.LabelSelector;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Whether a pod gets a sidecar: istiod's {@code injectRequired} (host network, ignored
 * namespaces, the {@code sidecar.istio.io/inject} label then annotation, the never/always
 * selectors, the policy), preceded, when the namespace's labels are known, by what istiod's
 * MutatingWebhookConfiguration selectors decide before the API server calls the webhook
 * ({@code istio-injection}, {@code istio.io/rev}).
 */
public final class InjectionPolicy {
    /** istiod's IgnoredNamespaces: never injected whatever the labels say. */
    public static final Set<String> IGNORED_NAMESPACES = Set.of("kube-system", "kube-public", "kube-node-lease",
            "local-path-storage");
    static final String INJECT = "sidecar.istio.io/inject";

    /** The decision and, for a skip, why (logged, and counted as a skip). */
    public record Decision(boolean inject, String reason) {
        static Decision skip(String reason) {
            return new Decision(false, reason);
        }
    }

    private InjectionPolicy() {
    }

    /**
     * @param namespaceLabels the pod's namespace's labels, or null when unknown (then the
     *                        webhook configuration's selectors are trusted to have chosen)
     * @param revision        this control plane's revision ("" or "default" for the default one)
     * @param revisionOf      the revision an {@code istio.io/rev} value stands for (a revision tag's revision;
     *                        for {@code default}, the default tag's revision or {@code default})
     */
    public static Decision decide(InjectorConfig config, String namespace, Map<String, String> namespaceLabels,
                                  Map<String, String> labels, Map<String, String> annotations, boolean hostNetwork,
                                  String revision, UnaryOperator<String> revisionOf) {
        if (hostNetwork) {
            return Decision.skip("host network: iptables would change the node's routing");
        }
        if (IGNORED_NAMESPACES.contains(namespace)) {
            return Decision.skip("namespace " + namespace + " is never injected");
        }
        if (namespaceLabels != null) {
            Decision bySelectors = webhookSelectors(namespaceLabels, labels, revision, revisionOf);
            if (bySelectors != null) {
                return bySelectors;
            }
        }
        String selector = annotations.getOrDefault(INJECT, "");
        if (labels.containsKey(INJECT)) {
            selector = labels.get(INJECT); // the label is the newer API and wins over the annotation
        }
        boolean useDefault = !selector.equals("true") && !selector.equals("false");
        boolean inject = selector.equals("true");
        String why = useDefault ? null : INJECT + "=" + selector;
        if (useDefault) {
            for (LabelSelector never : config.neverInjectSelector()) {
                if (!never.isEmpty() && never.matches(labels)) {
                    inject = false;
                    useDefault = false;
                    why = "labels match a neverInjectSelector";
                    break;
                }
            }
        }
        if (useDefault) {
            for (LabelSelector always : config.alwaysInjectSelector()) {
                if (!always.isEmpty() && always.matches(labels)) {
                    inject = true;
                    useDefault = false;
                    why = "labels match an alwaysInjectSelector";
                    break;
                }
            }
        }
        return switch (config.policy()) {
            case "enabled" -> useDefault ? new Decision(true, "policy enabled") : new Decision(inject, why);
            case "disabled" -> useDefault ? Decision.skip("policy disabled and the pod does not opt in")
                    : new Decision(inject, why);
            default -> Decision.skip("policy " + config.policy() + " is neither enabled nor disabled: injection off");
        };
    }

    /**
     * The selectors of istiod's webhook configurations (the revision's own and its tags'); null
     * when they let the call through to this revision.
     */
    private static Decision webhookSelectors(Map<String, String> ns, Map<String, String> labels, String revision,
                                             UnaryOperator<String> revisionOf) {
        String ours = revision == null || revision.isEmpty() ? "default" : revision;
        String defaultRevision = revisionOf.apply("default");
        String nsInjection = ns.get("istio-injection");
        String nsRev = ns.get("istio.io/rev");
        String podRev = labels.get("istio.io/rev");
        if ("disabled".equals(nsInjection)) {
            return Decision.skip("namespace label istio-injection=disabled");
        }
        if ("enabled".equals(nsInjection)) {
            return ours.equals(defaultRevision) ? null : Decision.skip(
                    "namespace label istio-injection=enabled selects the default revision (" + defaultRevision + "), not " + ours);
        }
        if (nsRev != null) {
            return ours.equals(revisionOf.apply(nsRev)) ? null
                    : Decision.skip("namespace label istio.io/rev=" + nsRev + " is another revision (" + revisionOf.apply(nsRev) + ")");
        }
        if (podRev != null) {
            return ours.equals(revisionOf.apply(podRev)) ? null
                    : Decision.skip("pod label istio.io/rev=" + podRev + " is another revision (" + revisionOf.apply(podRev) + ")");
        }
        if ("true".equals(labels.get(INJECT)) && ours.equals(defaultRevision)) {
            return null;
        }
        return Decision.skip("namespace not labelled for injection and the pod is not labelled " + INJECT + "=true");
    }
}
