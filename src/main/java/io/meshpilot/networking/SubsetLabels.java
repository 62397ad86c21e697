package io.meshpilot.networking;

import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.Map;

/** The labels of a DestinationRule subset (empty for no subset or an unknown one). */
public final class SubsetLabels {
    private SubsetLabels() {
    }

    public static Map<String, String> of(PushContext push, ProxyScope scope, String host, String subset) {
        if (subset == null || subset.isEmpty()) {
            return Map.of();
        }
        return push.destinationRule(host, scope).map(c -> {
            for (Subset s : ((DestinationRule) c.spec()).getSubsetsList()) {
                if (s.getName().equals(subset)) {
                    return s.getLabelsMap();
                }
            }
            return Map.<String, String>of("__unknown_subset__", subset); // selects nothing, as istiod
        }).orElse(Map.of("__unknown_subset__", subset));
    }
}
