package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.wasm.WasmPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Envoy ECDS (istiod's EcdsGenerator): the TypedExtensionConfig of each subscribed WasmPlugin
 * name ({@code extensions.istio.io/wasmplugin/<ns>.<name>}) of the proxy's namespace or the
 * root namespace. Names nothing serves are left out (Envoy keeps waiting for them, as with istiod).
 */
final class EcdsGenerator implements Generator {
    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        List<Any> out = new ArrayList<>();
        for (String name : Generators.ordered(names)) {
            WasmPlugins.extensionConfig(name, proxy, push).ifPresent(c -> out.add(Any.pack(c)));
        }
        return out;
    }
}
