package io.meshpilot.networking.envoyfilter;

import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;
import io.meshpilot.model.MergedEnvoyFilters;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * istiod's extension_configuration_patch (InsertedExtensionConfigurations): the extension
 * configs that EXTENSION_CONFIG ADD patches insert, served over ECDS to a proxy that asks for
 * their name. As in istiod the patch's context is not looked at (an ECDS name is the same in
 * every context); which proxies get it is decided by the EnvoyFilter's namespace,
 * workloadSelector or targetRefs and the patch's {@code match.proxy}. MERGE, REMOVE and
 * REPLACE never reach here ({@code EnvoyFilterWrapper} reports them).
 */
final class ExtensionConfigPatcher {
    private ExtensionConfigPatcher() {
    }

    /**
     * The inserted configs named in {@code names}, in the patches' order. Where two patches
     * insert one name the first (by priority, root namespace, age) wins: Envoy refuses an ECDS
     * response holding two resources of one name.
     */
    static List<TypedExtensionConfig> inserted(MergedEnvoyFilters efw, Set<String> names) {
        Map<String, TypedExtensionConfig> out = new LinkedHashMap<>();
        for (ConfigPatch cp : efw.patches(ApplyTo.EXTENSION_CONFIG)) {
            if (cp.operation() == Operation.ADD && cp.value() instanceof TypedExtensionConfig config
                    && names.contains(config.getName())) {
                out.putIfAbsent(config.getName(), config);
            }
        }
        return List.copyOf(out.values());
    }
}
