package io.meshpilot.registry.kube;

import io.meshpilot.api.mesh.v1alpha1.LabelSelectorOrBuilder;
import io.meshpilot.api.mesh.v1alpha1.LabelSelectorRequirement;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.util.LabelSelector;
import java.util.LinkedHashSet;
import java.util.List;

/** {@code meshConfig.discoverySelectors} in the Kubernetes client's terms. */
public final class DiscoverySelectors {
    private DiscoverySelectors() {
    }

    public static List<LabelSelector> of(MeshConfig mesh) {
        return of(mesh.getDiscoverySelectorsList());
    }

    public static List<LabelSelector> of(List<? extends LabelSelectorOrBuilder> selectors) {
        return selectors.stream().map(DiscoverySelectors::of).toList();
    }

    private static LabelSelector of(LabelSelectorOrBuilder s) {
        return new LabelSelector(s.getMatchLabelsMap(), s.getMatchExpressionsList().stream()
                .map(DiscoverySelectors::of).toList());
    }

    private static LabelSelector.Requirement of(LabelSelectorRequirement r) {
        return new LabelSelector.Requirement(r.getKey(), r.getOperator(), new LinkedHashSet<>(r.getValuesList()));
    }
}
