package io.meshpilot.networking.envoyfilter;

import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.ROOT;
import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.SIDECAR;
import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.canonical;
import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.jsonList;
import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.patches;
import static io.meshpilot.networking.envoyfilter.EnvoyFilterPatchesTest.proxy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.model.EnvoyFilterIndex;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * EXTENSION_CONFIG patches as istiod's InsertedExtensionConfigurations serves them over ECDS:
 * the TypedExtensionConfig an ADD (or an insert operation, which means ADD) inserts, for a proxy
 * that asks for its name, compared as protobuf JSON; the patch context not looked at; the root
 * namespace, workloadSelector, targetRefs, proxy version and metadata deciding which proxies
 * get it; the first of two patches of one name (istiod's order) served alone. Patches that
 * cannot be served (MERGE/REMOVE/REPLACE, no name, no or unknown typed config) are skipped and
 * reported with the EnvoyFilter and patch index; BOOTSTRAP is reported as the agent's.
 */
class EnvoyFilterExtensionConfigTest {
    static final String LUA_A = """
            {"name":"ext-a","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua",
             "defaultSourceCode":{"inlineString":"-- a"}}}""";
    static final String LUA_B = LUA_A.replace("ext-a", "ext-b").replace("-- a", "-- b");

    /** An EnvoyFilter {@code name} in {@code ns} whose one EXTENSION_CONFIG patch inserts a Lua config {@code ext} with source {@code source}. */
    static String ef(String name, String ns, String extra, String match, String op, String ext, String source) {
        return """
                ---
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: %s, namespace: %s}
                spec:
                  %s
                  configPatches:
                  - applyTo: EXTENSION_CONFIG
                    match: %s
                    patch:
                      operation: %s
                      value:
                        name: %s
                        typed_config:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
                          default_source_code: {inline_string: "%s"}
                """.formatted(name, ns, extra, match, op, ext, source);
    }

    static String lua(String ext, String source) {
        return LUA_A.replace("ext-a", ext).replace("-- a", source);
    }

    static final Proxy GATEWAY = new Proxy("router~10.0.0.2~gw-1.shop~shop.svc.cluster.local", Proxy.Type.ROUTER,
            List.of("10.0.0.2"), "gw-1.shop", "shop.svc.cluster.local", "shop",
            Map.of("gateway.networking.k8s.io/gateway-name", "web-gw"), "Kubernetes", "", "", "", "", Locality.NONE);

    static Stream<Arguments> cases() {
        String two = ef("a", "shop", "", "{context: SIDECAR_OUTBOUND}", "ADD", "ext-a", "-- a")
                + ef("b", "shop", "", "{context: SIDECAR_OUTBOUND}", "ADD", "ext-b", "-- b");
        return Stream.of(
                // istiod's TestInsertedExtensionConfig: each requested name, in patch order
                Arguments.of("ADD served by the names asked for", two, SIDECAR, Set.of("ext-b", "ext-a"),
                        "[" + LUA_A + "," + LUA_B + "]"),
                Arguments.of("ADD served only when asked for", two, SIDECAR, Set.of("ext-b"), "[" + LUA_B + "]"),
                Arguments.of("a name no patch inserts", two, SIDECAR, Set.of("random"), "[]"),
                Arguments.of("INSERT_FIRST means ADD", ef("a", "shop", "", "{}", "INSERT_FIRST", "ext-a", "-- a"),
                        SIDECAR, Set.of("ext-a"), "[" + LUA_A + "]"),
                // istiod never looks at the context of an EXTENSION_CONFIG patch
                Arguments.of("the context is not looked at", ef("a", "shop", "", "{context: GATEWAY}", "ADD", "ext-a", "-- a"),
                        SIDECAR, Set.of("ext-a"), "[" + LUA_A + "]"),
                Arguments.of("proxy version matches", ef("a", "shop", "", "{proxy: {proxyVersion: '^1\\.24.*'}}",
                        "ADD", "ext-a", "-- a"), SIDECAR, Set.of("ext-a"), "[" + LUA_A + "]"),
                Arguments.of("proxy version does not match", ef("a", "shop", "", "{proxy: {proxyVersion: '^1\\.25.*'}}",
                        "ADD", "ext-a", "-- a"), SIDECAR, Set.of("ext-a"), "[]"),
                Arguments.of("proxy metadata does not match", ef("a", "shop", "", "{proxy: {metadata: {CLUSTER_ID: west}}}",
                        "ADD", "ext-a", "-- a"), SIDECAR, Set.of("ext-a"), "[]"),
                Arguments.of("workloadSelector picks the workload", ef("a", "shop", "workloadSelector: {labels: {app: web}}",
                        "{}", "ADD", "ext-a", "-- a"), SIDECAR, Set.of("ext-a"), "[" + LUA_A + "]"),
                Arguments.of("workloadSelector picks another workload", ef("a", "shop", "workloadSelector: {labels: {app: db}}",
                        "{}", "ADD", "ext-a", "-- a"), SIDECAR, Set.of("ext-a"), "[]"),
                Arguments.of("another namespace's EnvoyFilter", ef("a", "elsewhere", "", "{}", "ADD", "ext-a", "-- a"),
                        SIDECAR, Set.of("ext-a"), "[]"),
                Arguments.of("the root namespace's applies everywhere", ef("a", ROOT, "", "{}", "ADD", "ext-a", "-- a"),
                        SIDECAR, Set.of("ext-a"), "[" + LUA_A + "]"),
                Arguments.of("targetRefs: never a sidecar", ef("a", "shop",
                        "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: web-gw}]", "{}", "ADD", "ext-a", "-- a"),
                        SIDECAR, Set.of("ext-a"), "[]"),
                Arguments.of("targetRefs: the named Gateway's deployment", ef("a", "shop",
                        "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: web-gw}]", "{}", "ADD", "ext-a", "-- a"),
                        GATEWAY, Set.of("ext-a"), "[" + LUA_A + "]"),
                // one name twice: istiod's order (root namespace first at equal priority) and the
                // first alone, as Envoy refuses two resources of one name
                Arguments.of("one name twice: the root namespace's first",
                        ef("a", "shop", "", "{}", "ADD", "ext-a", "-- shop") + ef("b", ROOT, "", "{}", "ADD", "ext-a", "-- root"),
                        SIDECAR, Set.of("ext-a"), "[" + lua("ext-a", "-- root") + "]"),
                Arguments.of("one name twice: priority before the root namespace",
                        ef("a", "shop", "priority: -1", "{}", "ADD", "ext-a", "-- shop")
                                + ef("b", ROOT, "", "{}", "ADD", "ext-a", "-- root"),
                        SIDECAR, Set.of("ext-a"), "[" + lua("ext-a", "-- shop") + "]"));
    }

    @ParameterizedTest(name = "EXTENSION_CONFIG {0}")
    @MethodSource("cases")
    void extensionConfigPatches(String name, String yaml, Proxy proxy, Set<String> names, String expected) {
        assertEquals(canonical(expected), canonical(jsonList(EnvoyFilterPatches.extensionConfigs(patches(yaml, proxy), names))));
    }

    @Test
    void aTypedStructConfigAsInIstiodsEcdsTestIsServed() {
        var out = EnvoyFilterPatches.extensionConfigs(patches("""
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: test, namespace: shop}
                spec:
                  configPatches:
                  - applyTo: EXTENSION_CONFIG
                    match: {context: SIDECAR_INBOUND}
                    patch:
                      operation: ADD
                      value:
                        name: extension-config
                        typed_config:
                          "@type": type.googleapis.com/udpa.type.v1.TypedStruct
                          type_url: type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm
                          value: {config: {vm_config: {code: {remote: {http_uri: {uri: "https://test-url"}}}}}}
                """, SIDECAR), Set.of("extension-config"));
        assertEquals(1, out.size());
        assertEquals("type.googleapis.com/udpa.type.v1.TypedStruct", out.getFirst().getTypedConfig().getTypeUrl());
    }

    @Test
    void patchesEcdsCannotServeAreSkippedAndReported() {
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("test.yaml", """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: bad, namespace: shop}
                spec:
                  configPatches:
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {name: untyped}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {name: unknown, typed_config: {"@type": type.googleapis.com/istio.stats.PluginConfig}}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {name: listener-like, address: {socket_address: {port_value: 80}}}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: MERGE, value: {name: ext-a, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: REMOVE}
                  - applyTo: BOOTSTRAP
                    patch: {operation: MERGE, value: {stats_flush_interval: 5s}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {name: good, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua}}}
                """);
        assertEquals(List.of(), r.errors());
        EnvoyFilterIndex index = EnvoyFilterIndex.of(r.configs());
        var entries = index.problems().entries(EnvoyFilterIndex.ENVOY_FILTER_STATUS);
        assertEquals(List.of("shop/bad configPatches[0]", "shop/bad configPatches[1]", "shop/bad configPatches[2]",
                "shop/bad configPatches[3]", "shop/bad configPatches[4]", "shop/bad configPatches[5]",
                "shop/bad configPatches[6]"), List.copyOf(entries.keySet()));
        String[] reasons = {"has no name", "extension config untyped has no typed_config",
                "unknown @type type.googleapis.com/istio.stats.PluginConfig", "extension config listener-like has no typed_config",
                "operation MERGE has no effect with applyTo EXTENSION_CONFIG", "operation REMOVE has no effect with applyTo EXTENSION_CONFIG",
                "istiod applies it in istio-agent"};
        for (int i = 0; i < reasons.length; i++) {
            String message = entries.get("shop/bad configPatches[" + i + "]").message();
            assertTrue(message.contains(reasons[i]) && message.endsWith("the patch is skipped"), i + ": " + message);
        }
        var served = EnvoyFilterPatches.extensionConfigs(index.forProxy(SIDECAR, ROOT),
                Set.of("", "untyped", "unknown", "listener-like", "ext-a", "good"));
        assertEquals(List.of("good"), served.stream().map(c -> c.getName()).toList(), "the valid patch still applies");
    }
}
