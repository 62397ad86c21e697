package io.meshpilot.util;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Kubernetes label selector ({@code matchLabels} and {@code matchExpressions}) and the one
 * place labels are matched against a selector: the registries, the push context, networking,
 * the injector and the Kubernetes client all ask here, so a workload is selected the same way
 * everywhere. It lives in util because every one of those packages may import util and no
 * other package they share.
 *
 * @param matchLabels      labels that must be present with exactly these values
 * @param matchExpressions requirements that must all hold
 */
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {

    /** The operators Kubernetes accepts in {@code matchExpressions}. */
    public static final Set<String> OPERATORS = Set.of("In", "NotIn", "Exists", "DoesNotExist");

    public LabelSelector {
        matchLabels = Map.copyOf(matchLabels);
        matchExpressions = List.copyOf(matchExpressions);
    }

    /**
     * One {@code matchExpressions} entry. An operator outside {@link #OPERATORS} selects
     * nothing: readers that must refuse it check {@link #OPERATORS} where they parse.
     */
    public record Requirement(String key, String operator, Set<String> values) {
        public Requirement {
            values = Set.copyOf(values);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case "In" -> v != null && values.contains(v);
                case "NotIn" -> v == null || !values.contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                default -> false;
            };
        }
    }

    /** Whether it names no label and no requirement. */
    public boolean isEmpty() {
        return matchLabels.isEmpty() && matchExpressions.isEmpty();
    }

    /** Whether {@code labels} carry every matchLabels entry and satisfy every requirement. */
    public boolean matches(Map<String, String> labels) {
        return subsetOf(matchLabels, labels) && matchExpressions.stream().allMatch(r -> r.matches(labels));
    }

    /**
     * istiod's {@code labels.Instance.SubsetOf}: whether {@code labels} carry every entry of
     * {@code selector} with the same value; an empty selector is a subset of anything.
     */
    public static boolean subsetOf(Map<String, String> selector, Map<String, String> labels) {
        for (Map.Entry<String, String> s : selector.entrySet()) {
            if (!s.getValue().equals(labels.get(s.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
