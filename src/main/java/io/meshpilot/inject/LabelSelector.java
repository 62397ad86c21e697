package io.meshpilot.inject;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Kubernetes label selector ({@code matchLabels} and {@code matchExpressions}), as the
 * injector's {@code neverInjectSelector}/{@code alwaysInjectSelector} entries carry it.
 */
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {

    /** One {@code matchExpressions} entry: operator In, NotIn, Exists or DoesNotExist. */
    public record Requirement(String key, String operator, Set<String> values) {
        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case "In" -> v != null && values.contains(v);
                case "NotIn" -> v == null || !values.contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                default -> throw new IllegalArgumentException("operator " + operator + " is not In, NotIn, Exists or DoesNotExist");
            };
        }
    }

    public LabelSelector {
        matchLabels = Map.copyOf(matchLabels);
        matchExpressions = List.copyOf(matchExpressions);
        for (Requirement r : matchExpressions) {
            if (!Set.of("In", "NotIn", "Exists", "DoesNotExist").contains(r.operator())) {
                throw new IllegalArgumentException("matchExpressions key " + r.key() + ": operator " + r.operator()
                        + " is not In, NotIn, Exists or DoesNotExist");
            }
        }
    }

    /** Whether it selects nothing in particular: istiod ignores an empty selector rather than matching everything. */
    public boolean isEmpty() {
        return matchLabels.isEmpty() && matchExpressions.isEmpty();
    }

    public boolean matches(Map<String, String> labels) {
        for (var e : matchLabels.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        return matchExpressions.stream().allMatch(r -> r.matches(labels));
    }
}
