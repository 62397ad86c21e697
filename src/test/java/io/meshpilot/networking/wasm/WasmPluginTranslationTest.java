package io.meshpilot.networking.wasm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.config.Config;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * WasmPlugin per field, compared as protobuf JSON with istiod's output for the same input
 * (pilot/pkg/model/extensions.go buildPluginConfig/buildVMConfig/buildDataSource,
 * networking/core/extension/wasmplugin.go toEnvoyHTTPFilter, listener_builder.go's phase order):
 * the ECDS resource, the filter reference, and where references go in httpbin's connection
 * managers around jwt_authn and RBAC.
 */
class WasmPluginTranslationTest {
    static final String MESH = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: httpbin, namespace: foo}
            spec:
              hosts: [httpbin.foo.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: STATIC
              ports: [{number: 8000, name: http, protocol: HTTP}, {number: 9080, name: http-web, protocol: HTTP},
                      {number: 9000, name: tcp, protocol: TCP}]
              workloadSelector: {labels: {app: httpbin}}
            ---
            apiVersion: networking.istio.io/v1
            kind: WorkloadEntry
            metadata: {name: httpbin-1, namespace: foo}
            spec: {address: 10.1.1.1, labels: {app: httpbin, version: v1}, serviceAccount: httpbin}
            """;
    static final Proxy HTTPBIN = new Proxy("sidecar~10.1.1.1~httpbin-1.foo~foo.svc.cluster.local", Proxy.Type.SIDECAR,
            List.of("10.1.1.1"), "httpbin-1.foo", "foo.svc.cluster.local", "foo", Map.of("app", "httpbin", "version", "v1"),
            "Kubernetes", "", "", "httpbin", "", new Locality("", "", ""));

    static String plugin(String namespace, String name, String spec) {
        return """
                apiVersion: extensions.istio.io/v1alpha1
                kind: WasmPlugin
                metadata: {name: %s, namespace: %s}
                spec:
                %s
                """.formatted(name, namespace, spec.indent(2));
    }

    static Stream<Arguments> extensionConfigs() {
        return Stream.of(
                Arguments.of("https url with sha256, pluginConfig, pluginName, imagePullPolicy, vmConfig env, FAIL_OPEN",
                        """
                        url: https://example.com/wasm/basic_auth.wasm
                        sha256: 8d3e1a4b9f0c2d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e
                        pluginName: basic_auth
                        imagePullPolicy: Always
                        failStrategy: FAIL_OPEN
                        pluginConfig:
                          basic_auth_rules:
                          - prefix: /productpage
                            request_methods: [GET, POST]
                            credentials: ["ok:test"]
                        vmConfig:
                          env:
                          - {name: MODE, value: strict}
                          - {name: POD_NAME, valueFrom: HOST}
                        """, """
                        {"name":"extensions.istio.io/wasmplugin/foo.basic-auth","typedConfig":{
                          "@type":"type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
                          "config":{"name":"foo.basic-auth","rootId":"basic_auth",
                            "vmConfig":{"runtime":"envoy.wasm.runtime.v8",
                              "code":{"remote":{"httpUri":{"uri":"https://example.com/wasm/basic_auth.wasm","cluster":"_","timeout":"30s"},
                                                "sha256":"8d3e1a4b9f0c2d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e"}},
                              "environmentVariables":{"hostEnvKeys":["POD_NAME"],"keyValues":{
                                "ISTIO_META_WASM_IMAGE_PULL_POLICY":"Always","ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION":"RV","MODE":"strict"}}},
                            "configuration":{"@type":"type.googleapis.com/google.protobuf.StringValue",
                              "value":"{\\"basic_auth_rules\\":[{\\"credentials\\":[\\"ok:test\\"],\\"prefix\\":\\"/productpage\\",\\"request_methods\\":[\\"GET\\",\\"POST\\"]}]}"},
                            "failurePolicy":"FAIL_OPEN"}}}"""),
                Arguments.of("file:// url: a local file; no pluginConfig: an empty configuration; FAIL_CLOSE by default",
                        "url: file:///opt/filters/basic_auth.wasm\n", """
                        {"name":"extensions.istio.io/wasmplugin/foo.basic-auth","typedConfig":{
                          "@type":"type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
                          "config":{"name":"foo.basic-auth",
                            "vmConfig":{"runtime":"envoy.wasm.runtime.v8",
                              "code":{"local":{"filename":"/opt/filters/basic_auth.wasm"}},
                              "environmentVariables":{"keyValues":{"ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION":"RV"}}},
                            "configuration":{},
                            "failurePolicy":"FAIL_CLOSED"}}}"""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("extensionConfigs")
    void theEcdsResourceIsIstiodsWasmConfig(String name, String spec, String expected) throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply(plugin("foo", "basic-auth", spec));
            PushContext push = fixture.push();
            Config c = push.wasmPlugins().get(0);
            var served = WasmPlugins.extensionConfig(WasmPlugins.resourceName(c), HTTPBIN, push).orElseThrow();
            assertEquals(JsonParser.parseString(expected.replace("\"RV\"", "\"" + c.resourceVersion() + "\"")),
                    json(served), name);
        }
    }

    @Test
    void theListenerReferencesThePluginOverAdsWithIstiodsTypeUrls() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply(plugin("foo", "basic-auth", "url: file:///opt/a.wasm"));
            PushContext push = fixture.push();
            HttpFilter ref = filters(listener(push, "0.0.0.0_8000"), null).get(0);
            assertEquals(JsonParser.parseString("""
                    {"name":"extensions.istio.io/wasmplugin/foo.basic-auth","configDiscovery":{
                      "configSource":{"ads":{},"initialFetchTimeout":"0s","resourceApiVersion":"V3"},
                      "typeUrls":["type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
                                  "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"]}}"""), json(ref));
        }
    }

    static final String SECURITY = """
            apiVersion: security.istio.io/v1
            kind: RequestAuthentication
            metadata: {name: jwt, namespace: foo}
            spec:
              jwtRules:
              - issuer: testing@secure.istio.io
                jwks: '{"keys":[{"e":"AQAB","kid":"k1","kty":"RSA","n":"xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ"}]}'
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: deny-admin, namespace: foo}
            spec:
              action: DENY
              rules: [{to: [{operation: {paths: [/admin]}}]}]
            """;

    static final String PHASED_PLUGINS = plugin("foo", "authn", "url: file:///a.wasm\nphase: AUTHN")
            + "---\n" + plugin("foo", "authz", "url: file:///a.wasm\nphase: AUTHZ")
            + "---\n" + plugin("foo", "stats-low", "url: file:///a.wasm\nphase: STATS\npriority: 1")
            + "---\n" + plugin("istio-system", "stats-high", "url: file:///a.wasm\nphase: STATS\npriority: 10")
            + "---\n" + plugin("foo", "unspecified", "url: file:///a.wasm");

    @Test
    void phasesSitAroundTheSecurityFiltersAndPriorityOrdersWithinAPhase() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply(SECURITY).apply(PHASED_PLUGINS);
            PushContext push = fixture.push();
            String p = WasmPlugins.RESOURCE_PREFIX;
            assertEquals(List.of(p + "foo.authn", "envoy.filters.http.jwt_authn", p + "foo.authz",
                    "envoy.filters.http.rbac", p + "istio-system.stats-high", p + "foo.stats-low", p + "foo.unspecified",
                    "envoy.filters.http.fault", "envoy.filters.http.cors", "envoy.filters.http.router"),
                    names(filters(listener(push, "virtualInbound"), "0.0.0.0_8000")), "inbound");
            assertEquals(List.of(p + "foo.authn", p + "foo.authz", p + "istio-system.stats-high", p + "foo.stats-low",
                    p + "foo.unspecified", "envoy.filters.http.fault", "envoy.filters.http.cors", "envoy.filters.http.router"),
                    names(filters(listener(push, "0.0.0.0_8000"), null)), "outbound");
        }
    }

    @Test
    void matchModeAndPortsPickTheConnectionManagers() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH)
                    .apply(plugin("foo", "server-only", "url: file:///a.wasm\nmatch: [{mode: SERVER}]"))
                    .apply(plugin("foo", "port-9080", "url: file:///a.wasm\nmatch: [{ports: [{number: 9080}]}]"))
                    .apply(plugin("foo", "other-workload", "url: file:///a.wasm\nselector: {matchLabels: {app: other}}"))
                    .apply(plugin("foo", "oci", "url: oci://ghcr.io/istio-ecosystem/wasm-extensions/basic_auth:1.12.0"));
            PushContext push = fixture.push();
            String p = WasmPlugins.RESOURCE_PREFIX;
            assertEquals(List.of(p + "foo.server-only"), wasm(filters(listener(push, "virtualInbound"), "0.0.0.0_8000")));
            assertEquals(List.of(p + "foo.server-only", p + "foo.port-9080"),
                    wasm(filters(listener(push, "virtualInbound"), "0.0.0.0_9080")));
            assertEquals(List.of(), wasm(filters(listener(push, "0.0.0.0_8000"), null)));
            assertEquals(List.of(p + "foo.port-9080"), wasm(filters(listener(push, "0.0.0.0_9080"), null)));
            // not silently ignored: the push status names what plain Envoy cannot load
            var status = push.diagnostics().all();
            assertTrue(status.getOrDefault("pilot_wasm_oci_unsupported", Map.of()).containsKey("foo/oci"), status.toString());
            assertTrue(WasmPlugins.extensionConfig(p + "foo.oci", HTTPBIN, push).isEmpty(), "oci:// is not served");
        }
    }

    @Test
    void ecdsServesOnlyTheProxysNamespaceAndTheRootNamespace() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply(plugin("bar", "elsewhere", "url: file:///a.wasm"))
                    .apply(plugin("istio-system", "mesh-wide", "url: file:///a.wasm"));
            PushContext push = fixture.push();
            assertTrue(WasmPlugins.extensionConfig(WasmPlugins.RESOURCE_PREFIX + "bar.elsewhere", HTTPBIN, push).isEmpty());
            assertTrue(WasmPlugins.extensionConfig(WasmPlugins.RESOURCE_PREFIX + "istio-system.mesh-wide", HTTPBIN, push)
                    .isPresent());
        }
    }

    @Test
    void onlyMetricsProvidersThatAreNotPrometheusAreReported() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply("""
                    apiVersion: telemetry.istio.io/v1
                    kind: Telemetry
                    metadata: {name: no-request-count, namespace: foo}
                    spec:
                      metrics:
                      - providers: [{name: prometheus}]
                        overrides: [{match: {metric: REQUEST_COUNT}, disabled: true}]
                    ---
                    apiVersion: telemetry.istio.io/v1
                    kind: Telemetry
                    metadata: {name: elsewhere, namespace: bar}
                    spec:
                      metrics:
                      - providers: [{name: stackdriver}, {name: nowhere}]
                    """);
            var entries = fixture.push().diagnostics().all().getOrDefault("pilot_telemetry_metrics_unsupported", Map.of());
            assertEquals(List.of("bar/elsewhere|metrics|nowhere", "bar/elsewhere|metrics|stackdriver"),
                    entries.keySet().stream().sorted().toList(), "prometheus applies (istio-proxy), the others do not");
            assertTrue(entries.get("bar/elsewhere|metrics|stackdriver").message().contains("no prometheus provider"),
                    entries.toString());
        }
    }

    @Test
    void networkPluginsGoBeforeTheTerminalFilterAndAroundNetworkRbac() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(MESH).apply(SECURITY)
                    .apply(plugin("foo", "net-authz", "url: file:///n.wasm\ntype: NETWORK\nphase: AUTHZ"))
                    .apply(plugin("foo", "net-stats", "url: file:///n.wasm\ntype: NETWORK\nphase: STATS"));
            PushContext push = fixture.push();
            String p = WasmPlugins.RESOURCE_PREFIX;
            assertEquals(List.of(p + "foo.net-authz", "envoy.filters.network.rbac", p + "foo.net-stats",
                    "envoy.filters.network.tcp_proxy"), networkFilters(listener(push, "virtualInbound"), "0.0.0.0_9000"),
                    "inbound TCP: AUTHZ before network RBAC, STATS after");
            assertEquals(List.of(p + "foo.net-authz", p + "foo.net-stats", "envoy.filters.network.http_connection_manager"),
                    networkFilters(listener(push, "virtualInbound"), "0.0.0.0_8000"), "inbound HTTP");
            assertEquals(List.of(p + "foo.net-authz", p + "foo.net-stats", "envoy.filters.network.tcp_proxy"),
                    networkFilters(listener(push, "0.0.0.0_9000"), null), "outbound TCP");
            assertEquals(List.of(p + "foo.net-authz", p + "foo.net-stats", "envoy.filters.network.http_connection_manager"),
                    networkFilters(listener(push, "0.0.0.0_8000"), null), "outbound HTTP");
            Config net = push.wasmPlugins().stream().filter(c -> c.name().equals("net-authz")).findFirst().orElseThrow();
            assertEquals(JsonParser.parseString("""
                    {"name":"extensions.istio.io/wasmplugin/foo.net-authz","typedConfig":{
                      "@type":"type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm",
                      "config":{"name":"foo.net-authz","vmConfig":{"runtime":"envoy.wasm.runtime.v8",
                        "code":{"local":{"filename":"/n.wasm"}},
                        "environmentVariables":{"keyValues":{"ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION":"RV"}}},
                        "configuration":{},"failurePolicy":"FAIL_CLOSED"}}}""".replace("RV", net.resourceVersion())),
                    json(WasmPlugins.extensionConfig(p + "foo.net-authz", HTTPBIN, push).orElseThrow()));
            Filter ref = listener(push, "0.0.0.0_9000").getFilterChains(0).getFilters(0);
            assertEquals(JsonParser.parseString("""
                    {"name":"extensions.istio.io/wasmplugin/foo.net-authz","configDiscovery":{
                      "configSource":{"ads":{},"initialFetchTimeout":"0s","resourceApiVersion":"V3"},
                      "typeUrls":["type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm",
                                  "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC"]}}"""), json(ref));
        }
    }

    static List<String> networkFilters(Listener l, String chain) {
        for (FilterChain fc : l.getFilterChainsList()) {
            if (chain == null || fc.getName().equals(chain)) {
                return fc.getFiltersList().stream().map(Filter::getName).toList();
            }
        }
        throw new AssertionError("no chain " + chain + " in " + l.getName());
    }

    static Listener listener(PushContext push, String name) {
        return SidecarListenerBuilder.listeners(HTTPBIN, push, push.scope(HTTPBIN)).stream()
                .filter(l -> l.getName().equals(name)).findFirst().orElseThrow();
    }

    static List<HttpFilter> filters(Listener l, String chain) throws Exception {
        for (FilterChain fc : l.getFilterChainsList()) {
            if (chain != null && !fc.getName().equals(chain)) {
                continue;
            }
            for (Filter f : fc.getFiltersList()) {
                if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                    return f.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFiltersList();
                }
            }
        }
        throw new AssertionError("no connection manager in " + l.getName() + " " + chain);
    }

    static List<String> names(List<HttpFilter> filters) {
        return filters.stream().map(HttpFilter::getName).toList();
    }

    static List<String> wasm(List<HttpFilter> filters) {
        return names(filters).stream().filter(n -> n.startsWith(WasmPlugins.RESOURCE_PREFIX)).toList();
    }

    static JsonElement json(MessageOrBuilder m) throws Exception {
        return JsonParser.parseString(JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY).print(m));
    }

}
