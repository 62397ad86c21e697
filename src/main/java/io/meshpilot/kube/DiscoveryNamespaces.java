package io.meshpilot.kube;

import io.meshpilot.util.LabelSelector;
import java.util.List;
import java.util.Map;

/**
 * istiod's discovery selection rule: with {@code meshConfig.discoverySelectors} set, only
 * namespaces whose labels match at least one selector are used; with none set, every
 * namespace is.
 */
public record DiscoveryNamespaces(List<LabelSelector> selectors) {
    public static final DiscoveryNamespaces ALL = new DiscoveryNamespaces(List.of());

    public DiscoveryNamespaces {
        selectors = List.copyOf(selectors);
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
        return selectors.stream().anyMatch(s -> s.matches(l));
    }
}
