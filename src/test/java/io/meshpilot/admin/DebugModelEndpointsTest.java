package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's model debug endpoints over a real server (bookinfo plus a Sidecar, an
 * AuthorizationPolicy, Telemetries and an ECDS EnvoyFilter) with a real ADS client: each
 * answer has the field names and JSON types of the istiod struct named in the test's comment
 * (istio/istio pilot/pkg/xds/debug.go and the model structs it writes). Per-proxy endpoints
 * answer istiod's 400 without proxyID and 404 for one that is not connected.
 */
class DebugModelEndpointsTest {
    static final String PROXY_ID = "sidecar~10.9.9.8~reviews-v1-abc.default~default.svc.cluster.local";
    /** What istioctl passes as proxyID: the pod's name.namespace, which istiod's connection ids start with. */
    static final String POD = "reviews-v1-abc.default";
    static final String REVIEWS = "reviews.default.svc.cluster.local";
    static final String REVIEWS_CLUSTER = "outbound|9080||" + REVIEWS;
    static final String EXTENSION = "shape-lua";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static AdsClient proxy;
    static int http;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        Path config = dir.resolve("config");
        Files.writeString(config.resolve("debug-shapes.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: default, namespace: default}
                spec:
                  egress: [{hosts: ["./*", "istio-system/*"]}]
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: allow-get, namespace: default}
                spec:
                  selector: {matchLabels: {app: reviews}}
                  rules: [{to: [{operation: {methods: [GET]}}]}]
                ---
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: mesh-default, namespace: istio-system}
                spec:
                  accessLogging: [{providers: [{name: envoy}]}]
                ---
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: reviews-tracing, namespace: default}
                spec:
                  selector: {matchLabels: {app: reviews}}
                  tracing: [{randomSamplingPercentage: 10}]
                ---
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: shape-lua, namespace: default}
                spec:
                  configPatches:
                  - applyTo: EXTENSION_CONFIG
                    patch:
                      operation: ADD
                      value:
                        name: %s
                        typed_config:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
                          default_source_code: {inline_string: "function envoy_on_request(h) end"}
                """.formatted(EXTENSION));
        server = TestServers.start(dir);
        http = server.ports().get("http");
        proxy = new AdsClient(server.ports().get("grpc"), PROXY_ID,
                Map.of("NAMESPACE", "default", "LABELS", "{\"app\":\"reviews\",\"version\":\"v1\"}"));
        proxy.subscribe(TypeUrls.CLUSTER, List.of());
        proxy.ack(proxy.await(TypeUrls.CLUSTER, Duration.ofSeconds(20)), List.of());
        proxy.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS_CLUSTER));
        proxy.ack(proxy.await(TypeUrls.ENDPOINT, Duration.ofSeconds(20)), List.of(REVIEWS_CLUSTER));
        proxy.subscribe(TypeUrls.EXTENSION_CONFIG, List.of(EXTENSION));
        DiscoveryResponse ecds = proxy.await(TypeUrls.EXTENSION_CONFIG, Duration.ofSeconds(20));
        assertEquals(1, ecds.getResourcesCount(), ecds.toString());
        proxy.ack(ecds, List.of(EXTENSION));
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static JsonElement json(String path) {
        Http.Reply r = Http.get(http, path);
        assertEquals(200, r.status(), path + ": " + r.body());
        assertTrue(r.contentType().startsWith("application/json"), path + ": " + r.contentType());
        return JsonParser.parseString(r.body());
    }

    /** The JSON type of a value as Go's encoding/json produces it. */
    static String type(JsonElement e) {
        if (e == null) {
            return "missing";
        }
        if (e.isJsonNull()) {
            return "null";
        }
        if (e.isJsonObject()) {
            return "object";
        }
        if (e.isJsonArray()) {
            return "array";
        }
        var p = e.getAsJsonPrimitive();
        return p.isString() ? "string" : p.isNumber() ? "number" : "boolean";
    }

    /** Asserts an object has exactly these fields with these JSON types ("a|b" allows either). */
    static void assertFields(JsonElement e, Map<String, String> fields) {
        assertEquals("object", type(e), String.valueOf(e));
        JsonObject o = e.getAsJsonObject();
        assertEquals(new TreeSet<>(fields.keySet()), new TreeSet<>(o.keySet()), o.toString());
        fields.forEach((name, types) -> assertTrue(Set.of(types.split("\\|")).contains(type(o.get(name))),
                name + " should be " + types + " in " + o));
    }

    static void assertProxyErrors(String endpoint) {
        // istiod's errorHandler (debug.go)
        Http.Reply none = Http.get(http, "/debug/" + endpoint);
        assertEquals(400, none.status(), endpoint + ": " + none.body());
        assertEquals("You must provide a proxyID in the query string\n", none.body());
        Http.Reply unknown = Http.get(http, "/debug/" + endpoint + "?proxyID=sidecar~10.1.1.1~nobody.nowhere~x");
        assertEquals(404, unknown.status(), endpoint + ": " + unknown.body());
        assertEquals("Proxy not connected to this Pilot instance. It may be connected to another instance.\n",
                unknown.body());
    }

    @Test
    void ecdszIsAnEnvoyConfigDumpOfTheProxysExtensionConfigs() {
        // admin.ConfigDump (envoy/admin/v3/config_dump.proto) as protojson: {"configs": [Any]};
        // each Any a TypedExtensionConfig (debug.go typedConfigDumpHandler("ecds"))
        JsonElement dump = json("/debug/ecdsz?proxyID=" + POD);
        assertFields(dump, Map.of("configs", "array"));
        JsonArray configs = dump.getAsJsonObject().getAsJsonArray("configs");
        assertEquals(1, configs.size(), configs.toString());
        assertFields(configs.get(0), Map.of("@type", "string", "name", "string", "typedConfig", "object"));
        assertEquals(EXTENSION, configs.get(0).getAsJsonObject().get("name").getAsString());
        assertProxyErrors("ecdsz");
    }

    @Test
    void edszIsAnEnvoyConfigDumpOfTheProxysEndpoints() {
        // admin.ConfigDump of ClusterLoadAssignments (debug.go typedConfigDumpHandler("eds"));
        // the connection is found by substring of its id, so the node id matches (getProxyConnection)
        JsonElement dump = json("/debug/edsz?proxyID=" + POD);
        JsonArray configs = dump.getAsJsonObject().getAsJsonArray("configs");
        assertEquals(1, configs.size(), dump.toString());
        JsonObject cla = configs.get(0).getAsJsonObject();
        assertEquals(TypeUrls.ENDPOINT, cla.get("@type").getAsString());
        assertEquals(REVIEWS_CLUSTER, cla.get("clusterName").getAsString());
        assertEquals("array", type(cla.get("endpoints")), cla.toString());
        assertProxyErrors("edsz");
    }

    @Test
    void ndszIsAnEmptyConfigDumpWithoutANameTable() {
        // admin.ConfigDump with no configs: istiod skips a type it has no generator for or the
        // proxy does not watch, and protojson leaves the empty list out
        assertEquals(new JsonObject(), json("/debug/ndsz?proxyID=" + POD));
        assertProxyErrors("ndsz");
    }

    @Test
    void ambientzIsEmptyWithoutAmbient() {
        // without PILOT_ENABLE_AMBIENT istiod's ambient index is its NoopAmbientIndexes: no
        // workloads or services, and no policies although an AuthorizationPolicy exists here
        assertEquals(JsonParser.parseString("{\"workloads\": [], \"services\": [], \"policies\": []}"),
                json("/debug/ambientz"));
    }

    @Test
    void endpointzIsEndpointShardz() {
        // debug.go registers /debug/endpointz with the endpointShardz handler
        assertEquals(json("/debug/endpointShardz"), json("/debug/endpointz"));
        assertTrue(json("/debug/endpointz").getAsJsonObject().has(REVIEWS));
    }

    @Test
    void cachezListsSizesAndClears() {
        // debug.go cachez: map[typeUrl][]resourceName; ?sizes: map[typeUrl]util.ByteCount + "total"
        JsonObject names = json("/debug/cachez").getAsJsonObject();
        assertTrue(names.has(TypeUrls.ENDPOINT) && names.has(TypeUrls.CLUSTER), names.keySet().toString());
        names.entrySet().forEach(e -> {
            assertEquals("array", type(e.getValue()), e.toString());
            e.getValue().getAsJsonArray().forEach(n -> assertEquals("string", type(n), e.toString()));
        });
        assertTrue(names.getAsJsonArray(TypeUrls.ENDPOINT).contains(new JsonPrimitive(REVIEWS_CLUSTER)),
                names.toString());

        JsonObject sizes = json("/debug/cachez?sizes=true").getAsJsonObject();
        assertEquals(new TreeSet<>(names.keySet()), new TreeSet<>(sizes.keySet().stream()
                .filter(k -> !k.equals("total")).toList()));
        sizes.entrySet().forEach(e -> assertTrue(e.getValue().getAsString().matches("\\d+B|\\d+\\.\\d[kMGTPE]B"),
                e.toString()));

        Http.Reply cleared = Http.get(http, "/debug/cachez?clear=true");
        assertEquals(200, cleared.status());
        assertEquals("Cache cleared\n", cleared.body());
        assertEquals(new JsonObject(), json("/debug/cachez"), "nothing pushed since, so nothing cached again");
    }

    @Test
    void sidecarzIsTheProxysSidecarScope() {
        // SidecarScope.MarshalJSON (pilot/pkg/model/sidecar.go): a map of these nine keys
        JsonElement scope = json("/debug/sidecarz?proxyID=" + POD);
        assertFields(scope, Map.of("version", "string", "name", "string", "namespace", "string",
                "outboundTrafficPolicy", "object", "services", "array", "egressListenerServices", "array",
                "servicesByHostname", "object", "sidecar", "object", "destinationRules", "object"));
        JsonObject o = scope.getAsJsonObject();
        assertEquals("default", o.get("name").getAsString());
        assertEquals("default", o.get("namespace").getAsString());
        assertEquals("ALLOW_ANY", o.getAsJsonObject("outboundTrafficPolicy").get("mode").getAsString());
        assertEquals("array", type(o.getAsJsonObject("sidecar").get("egress")));
        assertEquals("array", type(o.getAsJsonArray("egressListenerServices").get(0)));
        assertTrue(o.getAsJsonObject("servicesByHostname").has(REVIEWS), o.toString());
        // ConsolidatedDestRule.MarshalJSON (push_context.go): exportTo (a Go set, nil when unset),
        // rule (config.Config: Meta's json fields promoted, Spec/Status/Extra untagged), from
        JsonArray rules = o.getAsJsonObject("destinationRules").getAsJsonArray(REVIEWS);
        assertEquals(1, rules.size(), o.toString());
        assertFields(rules.get(0), Map.of("exportTo", "null|object", "rule", "object", "from", "array"));
        JsonObject rule = rules.get(0).getAsJsonObject().getAsJsonObject("rule");
        assertFields(rule.get("type"), Map.of("group", "string", "version", "string", "kind", "string"));
        for (String f : List.of("name", "namespace", "creationTimestamp")) {
            assertEquals("string", type(rule.get(f)), f + " in " + rule);
        }
        assertEquals("object", type(rule.get("Spec")), rule.toString());
        assertFields(rules.get(0).getAsJsonObject().getAsJsonArray("from").get(0),
                Map.of("Namespace", "string", "Name", "string"));
        assertProxyErrors("sidecarz");
    }

    @Test
    void resourceszListsTheConfigKinds() {
        // debug.go resourcez: []config.GroupVersionKind (pkg/config/model.go: group, version, kind)
        JsonArray kinds = json("/debug/resourcesz").getAsJsonArray();
        assertFalse(kinds.isEmpty());
        kinds.forEach(k -> assertFields(k, Map.of("group", "string", "version", "string", "kind", "string")));
        assertTrue(kinds.toString().contains("\"kind\":\"VirtualService\""), kinds.toString());
    }

    @Test
    void injectIsTheTemplatesByName() {
        // debug.go injectTemplateHandler: the webhook's RawTemplates, map[string]string (pkg/kube/inject/inject.go);
        // no injector ConfigMap here: the chart's default, the sidecar template, built in
        JsonElement templates = json("/debug/inject");
        assertEquals(Set.of("sidecar"), templates.getAsJsonObject().keySet(), templates.toString());
        templates.getAsJsonObject().entrySet().forEach(e -> assertFields(templates, Map.of(e.getKey(), "string")));
    }

    static void assertAuthorizationPolicies(JsonElement policies) {
        // model.AuthorizationPolicies (pilot/pkg/model/authorization.go)
        assertFields(policies, Map.of("namespace_to_policies", "object", "root_namespace", "string"));
        JsonArray inDefault = policies.getAsJsonObject().getAsJsonObject("namespace_to_policies").getAsJsonArray("default");
        assertEquals(1, inDefault.size(), policies.toString());
        // model.AuthorizationPolicy: name, namespace, annotations (nil map: null), spec
        assertFields(inDefault.get(0), Map.of("name", "string", "namespace", "string", "annotations", "null|object",
                "spec", "object"));
        assertEquals("allow-get", inDefault.get(0).getAsJsonObject().get("name").getAsString());
    }

    @Test
    void authorizationzHasThePushsPolicies() {
        // debug.go AuthorizationDebug: {"authorization_policies": *model.AuthorizationPolicies}
        JsonElement out = json("/debug/authorizationz");
        assertFields(out, Map.of("authorization_policies", "object"));
        assertAuthorizationPolicies(out.getAsJsonObject().get("authorization_policies"));
    }

    @Test
    void telemetryzHasThePushsTelemetriesAndAProxysComputedOnes() {
        // debug.go TelemetryDebug: {"telemetries": *model.Telemetries}; model.Telemetries and
        // model.Telemetry (pilot/pkg/model/telemetry.go)
        JsonElement all = json("/debug/telemetryz");
        assertFields(all, Map.of("telemetries", "object"));
        JsonObject telemetries = all.getAsJsonObject().getAsJsonObject("telemetries");
        assertFields(telemetries, Map.of("namespace_to_telemetries", "object", "root_namespace", "string"));
        JsonArray rootOnes = telemetries.getAsJsonObject("namespace_to_telemetries").getAsJsonArray("istio-system");
        assertFields(rootOnes.get(0), Map.of("name", "string", "namespace", "string", "spec", "object"));

        // with proxyID: Telemetries.Debug -> computedTelemetries, telemetryKey embedded (Go
        // promotes Root, Proxy, Namespace, Workload: types.NamespacedName without json tags)
        JsonElement computed = json("/debug/telemetryz?proxyID=" + POD);
        assertFields(computed, Map.of("Root", "object", "Proxy", "object", "Namespace", "object", "Workload", "object",
                "Metrics", "array", "Logging", "array", "Tracing", "array"));
        JsonObject c = computed.getAsJsonObject();
        assertFields(c.get("Root"), Map.of("Namespace", "string", "Name", "string"));
        assertEquals("mesh-default", c.getAsJsonObject("Root").get("Name").getAsString());
        assertEquals("reviews-tracing", c.getAsJsonObject("Namespace").get("Name").getAsString());
        assertEquals(1, c.getAsJsonArray("Tracing").size(), c.toString());
        assertEquals("array", type(c.getAsJsonArray("Logging").get(0).getAsJsonObject().get("Logging")));

        Http.Reply unknown = Http.get(http, "/debug/telemetryz?proxyID=sidecar~10.1.1.1~nobody.nowhere~x");
        assertEquals(404, unknown.status(), unknown.body());
    }

    @Test
    void pushcontextHasPoliciesAndGateways() {
        // debug.go PushContextDebug: Go field names, no json tags
        JsonElement out = json("/debug/pushcontext");
        assertFields(out, Map.of("AuthorizationPolicies", "object", "NetworkGateways", "array|null",
                "UnresolvedGateways", "array|null"));
        assertAuthorizationPolicies(out.getAsJsonObject().get("AuthorizationPolicies"));
    }

    @Test
    void networkzIsAListOfGateways() {
        // debug.go networkz: []model.NetworkGateway (pilot/pkg/model/network.go); none configured here
        assertEquals(new JsonArray(), json("/debug/networkz"));
    }

    @Test
    void listNamesTheNewEndpointsButNotPprof() {
        // debug.go list: sorted names without "list" and without pprof
        List<String> names = json("/debug/list").getAsJsonArray().asList().stream().map(JsonElement::getAsString).toList();
        assertTrue(names.containsAll(List.of("authorizationz", "cachez", "ecdsz", "edsz", "endpointz", "inject", "ndsz",
                "networkz", "pushcontext", "resourcesz", "sidecarz", "telemetryz")), names.toString());
        assertTrue(names.stream().noneMatch(n -> n.contains("pprof")), names.toString());
        assertEquals(names.stream().sorted().toList(), names);
        for (String name : names) {
            // every listed page is served (per-proxy ones answer 400 without proxyID); istiod's query
            // variants (cachez?clear=true, adsz?push=true) act, and would change what other tests read
            String page = name.replaceFirst("\\?.*", "");
            int status = Http.get(http, "/debug/" + page).status();
            assertTrue(status == 200 || status == 400, name + " answered " + status);
        }
    }

    @Test
    void prettyIndentsWithFourSpacesAsIstiod() {
        // debug.go writeJSON: ?pretty -> config.ToPrettyJSON, four-space indents; same document
        Http.Reply pretty = Http.get(http, "/debug/resourcesz?pretty");
        assertEquals(200, pretty.status(), pretty.body());
        assertTrue(pretty.body().startsWith("[\n    {\n        \"group\""), pretty.body());
        assertEquals(json("/debug/resourcesz"), JsonParser.parseString(pretty.body()));
        // text answers pass untouched
        assertEquals("You must provide a proxyID in the query string\n", Http.get(http, "/debug/edsz?pretty").body());
    }

    @Test
    void theMonitoringListenerServesThemToo() {
        Http.Reply r = Http.get(server.ports().get("monitoring"), "/debug/resourcesz");
        assertEquals(200, r.status(), r.body());
    }
}
