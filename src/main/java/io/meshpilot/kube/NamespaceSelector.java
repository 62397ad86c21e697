package io.meshpilot.kube;

import java.util.List;
import java.util.Map;

/**
 * One of {@code meshConfig.discoverySelectors} (a Kubernetes label selector), in this
 * package's own terms: the Kubernetes client knows no mesh config, so its readers convert.
 *
 * @param matchLabels      labels a namespace must carry with these values
 * @param matchExpressions requirements that must all hold
 */
public record NamespaceSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {
    public NamespaceSelector {
        matchLabels = Map.copyOf(matchLabels);
        matchExpressions = List.copyOf(matchExpressions);
    }

    /** A label requirement: {@code operator} is In, NotIn, Exists or DoesNotExist. */
    public record Requirement(String key, String operator, List<String> values) {
        public Requirement {
            values = List.copyOf(values);
        }
    }

    /** Whether labels satisfy every matchLabels entry and every expression. */
    public boolean matches(Map<String, String> labels) {
        for (Map.Entry<String, String> m : matchLabels.entrySet()) {
            if (!m.getValue().equals(labels.get(m.getKey()))) {
                return false;
            }
        }
        for (Requirement r : matchExpressions) {
            String v = labels.get(r.key());
            boolean ok = switch (r.operator()) {
                case "In" -> v != null && r.values().contains(v);
                case "NotIn" -> v == null || !r.values().contains(v);
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
}
