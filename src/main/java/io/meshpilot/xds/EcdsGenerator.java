package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import io.meshpilot.networking.wasm.WasmPlugins;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Envoy ECDS (istiod's EcdsGenerator): the TypedExtensionConfig of each subscribed name that an
 * EnvoyFilter EXTENSION_CONFIG patch applying to the proxy inserts, or that names a WasmPlugin
 * ({@code extensions.istio.io/wasmplugin/<ns>.<name>}) of the proxy's namespace or the root
 * namespace. Names nothing serves are left out (Envoy keeps waiting for them, as with istiod).
 */
final class EcdsGenerator implements Generator {
    /**
     * istiod's ecdsNeedsPush for a full push: when no change is named, or a WasmPlugin or
     * EnvoyFilter (which may insert extension configs) changed; other changes leave the
     * extension configs as they were.
     */
    static boolean needsPush(Set<ConfigKey> changed) {
        if (changed.isEmpty()) {
            return true;
        }
        for (var k : changed) {
            if (k.kind().equals("WasmPlugin") || k.kind().equals("EnvoyFilter")) {
                return true;
            }
        }
        return false;
    }

    /**
     * istiod's BuildExtensionConfiguration: first what EnvoyFilters insert, then the
     * WasmPlugins; a name is served once (an EnvoyFilter's config shadows a WasmPlugin's of the
     * same name, which istiod would send twice and Envoy refuse).
     */
    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        List<Any> out = new ArrayList<>();
        Set<String> served = new HashSet<>();
        for (TypedExtensionConfig c : EnvoyFilterPatches.extensionConfigs(push.envoyFilters(proxy), names)) {
            served.add(c.getName());
            out.add(Any.pack(c));
        }
        for (String name : Generators.ordered(names)) {
            if (!served.contains(name)) {
                WasmPlugins.extensionConfig(name, proxy, push).ifPresent(c -> out.add(Any.pack(c)));
            }
        }
        return out;
    }
}
