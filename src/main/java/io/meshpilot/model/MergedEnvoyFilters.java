package io.meshpilot.model;

import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The config patches that apply to one proxy, per applyTo, in istiod's order (priority, root
 * namespace first, oldest, name), each already matched against the proxy's version and
 * metadata (istiod's MergedEnvoyFilterWrapper).
 *
 * @param key names exactly these patches and their EnvoyFilters' versions: generated resources
 *            patched for one proxy may be shared only with proxies of the same key
 */
public record MergedEnvoyFilters(Map<ApplyTo, List<EnvoyFilterWrapper.ConfigPatch>> byApplyTo, String key) {
    public static final MergedEnvoyFilters NONE = new MergedEnvoyFilters(Map.of(), "");

    public MergedEnvoyFilters {
        Map<ApplyTo, List<EnvoyFilterWrapper.ConfigPatch>> copy = new EnumMap<>(ApplyTo.class);
        byApplyTo.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        byApplyTo = copy;
    }

    public List<EnvoyFilterWrapper.ConfigPatch> patches(ApplyTo applyTo) {
        return byApplyTo.getOrDefault(applyTo, List.of());
    }

    public boolean has(ApplyTo... applyTo) {
        for (ApplyTo a : applyTo) {
            if (!patches(a).isEmpty()) {
                return true;
            }
        }
        return false;
    }

    public boolean isEmpty() {
        return byApplyTo.isEmpty();
    }
}
