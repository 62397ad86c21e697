package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.extensions.filters.http.lua.v3.Lua;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What ECDS serves a proxy (istiod's BuildExtensionConfiguration): the extension configs its
 * EnvoyFilters' EXTENSION_CONFIG patches insert, then its WasmPlugins', each only when asked
 * for by name, and one resource per name: an EnvoyFilter's config of a WasmPlugin's name is
 * served instead of the plugin's (istiod would send both; Envoy refuses a response with two).
 */
class EcdsGeneratorTest {
    static final String PLUGIN = "extensions.istio.io/wasmplugin/foo.auth";
    static final String CONFIG = """
            apiVersion: extensions.istio.io/v1alpha1
            kind: WasmPlugin
            metadata: {name: auth, namespace: foo}
            spec: {url: file:///opt/auth.wasm}
            ---
            apiVersion: extensions.istio.io/v1alpha1
            kind: WasmPlugin
            metadata: {name: stats, namespace: foo}
            spec: {url: file:///opt/stats.wasm}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: ecds, namespace: foo}
            spec:
              configPatches:
              - applyTo: EXTENSION_CONFIG
                patch: {operation: ADD, value: {name: lua, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}}}
              - applyTo: EXTENSION_CONFIG
                patch:
                  operation: ADD
                  value:
                    name: extensions.istio.io/wasmplugin/foo.auth
                    typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}
            """;

    static Proxy sidecar(String namespace) {
        return new Proxy("sidecar~10.2.0.1~sleep-1." + namespace + "~" + namespace + ".svc.cluster.local",
                Proxy.Type.SIDECAR, List.of("10.2.0.1"), "sleep-1." + namespace, namespace + ".svc.cluster.local",
                namespace, Map.of("app", "sleep"), "Kubernetes", "", "", "sleep", "", new Locality("", "", ""));
    }

    /** name=type of each resource ECDS returns for {@code names}, in order. */
    static List<String> served(Proxy proxy, PushContext push, Set<String> names) throws Exception {
        List<String> out = new ArrayList<>();
        for (Any a : Generators.standalone(new XdsCache(false)).forType(TypeUrls.EXTENSION_CONFIG, proxy)
                .generate(proxy, push, names, false)) {
            TypedExtensionConfig c = a.unpack(TypedExtensionConfig.class);
            out.add(c.getName() + "=" + (c.getTypedConfig().is(Lua.class) ? "lua" : "wasm"));
        }
        return out;
    }

    @Test
    void envoyFilterConfigsFirstThenWasmPluginsOnePerName() throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(CONFIG);
            PushContext push = mesh.push();
            Proxy foo = sidecar("foo");
            String stats = "extensions.istio.io/wasmplugin/foo.stats";
            assertEquals(List.of("lua=lua", PLUGIN + "=lua", stats + "=wasm"),
                    served(foo, push, Set.of(stats, PLUGIN, "lua", "unknown")));
            assertEquals(List.of(stats + "=wasm"), served(foo, push, Set.of(stats)), "only the names asked for");
            assertEquals(List.of(), served(sidecar("bar"), push, Set.of(stats, PLUGIN, "lua")),
                    "another namespace's EnvoyFilter and plugins");
        }
    }
}
