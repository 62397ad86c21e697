package io.meshpilot.registry.kube;

import io.meshpilot.api.mesh.v1alpha1.LabelSelector;
import io.meshpilot.api.mesh.v1alpha1.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;

/**
 * istiod's discovery namespaces filter: with {@code meshConfig.discoverySelectors} set, only
 * namespaces whose labels match at least one selector are used (each selector's matchLabels
 * and matchExpressions all hold); with none set, every namespace is.
 */
public final class DiscoveryNamespaces {
    private final List<LabelSelector> selectors;

    public DiscoveryNamespaces(List<LabelSelector> selectors) {
        this.selectors = List.copyOf(selectors);
    }

    public boolean selectsAll() {
        return selectors.isEmpty();
    }

    /** Whether a namespace with these labels is used ({@code labels} null: the namespace is unknown). */
    public boolean selects(Map<String, String> labels) {
        if (selectors.isEmpty()) {
            return true;
        }
        Map<String, String> l = labels == null ? Map.of() : labels;
        for (LabelSelector s : selectors) {
            if (matches(s, l)) {
                return true;
            }
        }
        return false;
    }

    static boolean matches(LabelSelector s, Map<String, String> labels) {
        for (Map.Entry<String, String> m : s.getMatchLabelsMap().entrySet()) {
            if (!m.getValue().equals(labels.get(m.getKey()))) {
                return false;
            }
        }
        for (LabelSelectorRequirement r : s.getMatchExpressionsList()) {
            String v = labels.get(r.getKey());
            boolean ok = switch (r.getOperator()) {
                case "In" -> v != null && r.getValuesList().contains(v);
                case "NotIn" -> v == null || !r.getValuesList().contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                default -> false; // validation rejects other operators; an unknown one selects nothing
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DiscoveryNamespaces d && d.selectors.equals(selectors);
    }

    @Override
    public int hashCode() {
        return selectors.hashCode();
    }
}
