package io.meshpilot.registry.kube;

import io.meshpilot.api.mesh.v1alpha1.LabelSelector;
import io.meshpilot.api.mesh.v1alpha1.LabelSelectorRequirement;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.kube.NamespaceSelector;
import java.util.List;

/** {@code meshConfig.discoverySelectors} in the Kubernetes client's terms. */
public final class DiscoverySelectors {
    private DiscoverySelectors() {
    }

    public static List<NamespaceSelector> of(MeshConfig mesh) {
        return of(mesh.getDiscoverySelectorsList());
    }

    public static List<NamespaceSelector> of(List<LabelSelector> selectors) {
        return selectors.stream().map(DiscoverySelectors::of).toList();
    }

    private static NamespaceSelector of(LabelSelector s) {
        return new NamespaceSelector(s.getMatchLabelsMap(), s.getMatchExpressionsList().stream()
                .map(DiscoverySelectors::of).toList());
    }

    private static NamespaceSelector.Requirement of(LabelSelectorRequirement r) {
        return new NamespaceSelector.Requirement(r.getKey(), r.getOperator(), r.getValuesList());
    }
}
