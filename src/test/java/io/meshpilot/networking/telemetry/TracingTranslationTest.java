package io.meshpilot.networking.telemetry;

import static io.meshpilot.networking.telemetry.TelemetryFixture.hcm;
import static io.meshpilot.networking.telemetry.TelemetryFixture.json;
import static io.meshpilot.networking.telemetry.TelemetryFixture.listener;
import static io.meshpilot.networking.telemetry.TelemetryFixture.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * HCM tracing per Telemetry field, compared as protobuf JSON with what istiod's
 * configureTracingFromTelemetry writes for the same input (networking/core/tracing.go and
 * tracing_test.go), on httpbin's inbound (SERVER) and outbound (CLIENT) connection managers.
 * The proxy sends no ISTIO_VERSION (plain Envoy), so Zipkin gets istiod's pre-1.29 collector
 * fields.
 */
class TracingTranslationTest {
    static final String ZIPKIN = """
            {"name":"envoy.tracers.zipkin","typedConfig":{"@type":"type.googleapis.com/envoy.config.trace.v3.ZipkinConfig",
             "collectorCluster":"outbound|9411||zipkin.istio-system.svc.cluster.local","collectorEndpoint":"/api/v2/spans",
             "traceId128bit":true,"sharedSpanContext":false,"collectorEndpointVersion":"HTTP_JSON",
             "collectorHostname":"zipkin.istio-system.svc.cluster.local"}}""";
    static final String OTEL = """
            {"name":"envoy.tracers.opentelemetry","typedConfig":{
             "@type":"type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig",
             "grpcService":{"envoyGrpc":{"clusterName":"outbound|4317||otel.istio-system.svc.cluster.local",
                                         "authority":"otel.istio-system.svc.cluster.local"}},
             "serviceName":"httpbin.foo"}}""";
    static final String ISTIO_TAGS = """
            {"tag":"istio.authorization.dry_run.allow_policy.name","metadata":{"kind":{"request":{}},"metadataKey":{"key":"envoy.filters.http.rbac","path":[{"key":"istio_dry_run_allow_shadow_effective_policy_id"}]}}},
            {"tag":"istio.authorization.dry_run.allow_policy.result","metadata":{"kind":{"request":{}},"metadataKey":{"key":"envoy.filters.http.rbac","path":[{"key":"istio_dry_run_allow_shadow_engine_result"}]}}},
            {"tag":"istio.authorization.dry_run.deny_policy.name","metadata":{"kind":{"request":{}},"metadataKey":{"key":"envoy.filters.http.rbac","path":[{"key":"istio_dry_run_deny_shadow_effective_policy_id"}]}}},
            {"tag":"istio.authorization.dry_run.deny_policy.result","metadata":{"kind":{"request":{}},"metadataKey":{"key":"envoy.filters.http.rbac","path":[{"key":"istio_dry_run_deny_shadow_engine_result"}]}}},
            {"tag":"istio.canonical_revision","literal":{"value":"latest"}},
            {"tag":"istio.canonical_service","literal":{"value":"unknown"}},
            {"tag":"istio.cluster_id","literal":{"value":"Kubernetes"}},
            {"tag":"istio.mesh_id","literal":{"value":"unknown"}},
            {"tag":"istio.namespace","literal":{"value":"foo"}}""";

    static String tracing(String provider, double random, String tags, String extra) {
        return """
                {"clientSampling":{"value":100.0},"randomSampling":{"value":%s},"overallSampling":{"value":100.0}
                 %s %s %s}""".formatted(random, provider == null ? "" : ",\"provider\":" + provider,
                tags.isEmpty() ? "" : ",\"customTags\":[" + tags + "]", extra);
    }

    static String telemetry(String namespace, String tracing) {
        return """
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: t, namespace: %s}
                spec:
                  tracing:
                  %s
                """.formatted(namespace, tracing);
    }

    static Stream<Arguments> cases() {
        String zipkinDefault = tracing(ZIPKIN, 1.0, ISTIO_TAGS, ",\"maxPathTagLength\":256");
        return Stream.of(
                // istiod's configureTracingFromTelemetry falls back to the mesh's enableTracing (true by
                // default): sampling and Istio's tags, the tracer left to the proxy's bootstrap
                Arguments.of("no Telemetry and no default provider: the mesh's enableTracing, no provider", "", "",
                        tracing(null, 1.0, ISTIO_TAGS, ""), tracing(null, 1.0, ISTIO_TAGS, "")),
                Arguments.of("no Telemetry, enableTracing false: no tracing", "enableTracing: false", "", null, null),
                Arguments.of("enableTracing with the proxy config's sampling, tags and path tag length", """
                        defaultConfig:
                          tracing:
                            sampling: 25
                            maxPathTagLength: 99
                            enableIstioTags: false
                            customTags: {lit: {literal: {value: v1}}}""", "",
                        tracing(null, 25.0, "{\"tag\":\"lit\",\"literal\":{\"value\":\"v1\"}}", ",\"maxPathTagLength\":99"),
                        tracing(null, 25.0, "{\"tag\":\"lit\",\"literal\":{\"value\":\"v1\"}}", ",\"maxPathTagLength\":99")),
                Arguments.of("zipkin provider: sampling from the proxy default (1%), Istio's tags, maxTagLength", "",
                        telemetry("istio-system", "- providers: [{name: zipkin}]"), zipkinDefault, zipkinDefault),
                Arguments.of("meshConfig defaultProviders.tracing without a Telemetry",
                        "defaultProviders: {tracing: [zipkin]}\n", "", zipkinDefault, zipkinDefault),
                Arguments.of("randomSamplingPercentage", "",
                        telemetry("foo", "- {providers: [{name: zipkin}], randomSamplingPercentage: 10.5}"),
                        tracing(ZIPKIN, 10.5, ISTIO_TAGS, ",\"maxPathTagLength\":256"),
                        tracing(ZIPKIN, 10.5, ISTIO_TAGS, ",\"maxPathTagLength\":256")),
                Arguments.of("customTags literal, environment, header (enableIstioTags off)", "",
                        telemetry("foo", """
                        - providers: [{name: zipkin}]
                            enableIstioTags: false
                            customTags:
                              lit: {literal: {value: v1}}
                              env: {environment: {name: POD_NAME, defaultValue: unknown}}
                              hdr: {header: {name: x-user, defaultValue: anon}}"""),
                        tracing(ZIPKIN, 1.0, """
                                {"tag":"env","environment":{"name":"POD_NAME","defaultValue":"unknown"}},
                                {"tag":"hdr","requestHeader":{"name":"x-user","defaultValue":"anon"}},
                                {"tag":"lit","literal":{"value":"v1"}}""", ",\"maxPathTagLength\":256"),
                        tracing(ZIPKIN, 1.0, """
                                {"tag":"env","environment":{"name":"POD_NAME","defaultValue":"unknown"}},
                                {"tag":"hdr","requestHeader":{"name":"x-user","defaultValue":"anon"}},
                                {"tag":"lit","literal":{"value":"v1"}}""", ",\"maxPathTagLength\":256")),
                // Istio 1.30's formatter tag and disableContextPropagation: istiod writes them only
                // for proxies of 1.29 / 1.30 and later (Envoy's CustomTag.value, no_context_propagation),
                // fields the Envoy API MeshPilot builds with lacks: left out as for older proxies
                Arguments.of("customTags formatter and disableContextPropagation are left out", "",
                        telemetry("foo", """
                        - providers: [{name: zipkin}]
                            enableIstioTags: false
                            disableContextPropagation: true
                            customTags:
                              lit: {literal: {value: v1}}
                              sni: {formatter: {value: "%REQUESTED_SERVER_NAME%"}}"""),
                        tracing(ZIPKIN, 1.0, "{\"tag\":\"lit\",\"literal\":{\"value\":\"v1\"}}", ",\"maxPathTagLength\":256"),
                        tracing(ZIPKIN, 1.0, "{\"tag\":\"lit\",\"literal\":{\"value\":\"v1\"}}", ",\"maxPathTagLength\":256")),
                Arguments.of("opentelemetry provider over gRPC", "",
                        telemetry("foo", "- {providers: [{name: otel-tracing}], enableIstioTags: false}"),
                        tracing(OTEL, 1.0, "", ""), tracing(OTEL, 1.0, "", "")),
                Arguments.of("disableSpanReporting in the namespace overrides the root's provider", "",
                        telemetry("istio-system", "- providers: [{name: zipkin}]") + "---\n"
                                + telemetry("foo", "- disableSpanReporting: true").replace("name: t,", "name: off,"),
                        null, null),
                Arguments.of("match.mode CLIENT: outbound only", "",
                        telemetry("foo", "- {providers: [{name: zipkin}], match: {mode: CLIENT}, enableIstioTags: false}"),
                        null, tracing(ZIPKIN, 1.0, "", ",\"maxPathTagLength\":256")),
                Arguments.of("match.mode SERVER with a different provider than the client's", "",
                        telemetry("foo", """
                        - {providers: [{name: zipkin}], enableIstioTags: false}
                          - {providers: [{name: otel-tracing}], match: {mode: SERVER}}"""),
                        tracing(OTEL, 1.0, "", ""), tracing(ZIPKIN, 1.0, "", ",\"maxPathTagLength\":256")),
                Arguments.of("a provider whose service is not in the registry: no tracing (istiod logs it)", "",
                        telemetry("foo", "- providers: [{name: unknown-service}]"), null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void tracingOfInboundAndOutboundConnectionManagers(String name, String meshYaml, String telemetry,
                                                       String inbound, String outbound) throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES);
            if (!telemetry.isEmpty()) {
                fixture.apply(telemetry);
            }
            PushContext push = fixture.push(TelemetryFixture.mesh(meshYaml));
            List<Listener> all = TelemetryFixture.listeners(TelemetryFixture.HTTPBIN, push);
            assertEquals(expected(inbound), tracing(hcm(listener(all, "virtualInbound"), "0.0.0.0_8000")), name + ": inbound");
            assertEquals(expected(outbound), tracing(hcm(listener(all, "0.0.0.0_8000"), null)), name + ": outbound");
        }
    }

    @Test
    void whatIsLeftOutIsListedInPushStatus() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES);
            fixture.apply(telemetry("foo", """
                    - providers: [{name: zipkin}]
                        disableContextPropagation: true
                        customTags:
                          sni: {formatter: {value: "%REQUESTED_SERVER_NAME%"}}"""));
            Map<String, PushDiagnostics.Entry> entries = fixture.push(TelemetryFixture.mesh("")).diagnostics().all()
                    .getOrDefault("pilot_telemetry_tracing_unsupported", Map.of());
            assertEquals(List.of("foo/t|customTags.sni.formatter", "foo/t|disableContextPropagation"),
                    entries.keySet().stream().sorted().toList());
            assertTrue(entries.values().stream().allMatch(e -> e.message().contains("not applied")), entries.toString());
        }
    }

    private static JsonElement expected(String json) {
        return json == null ? JsonNull.INSTANCE : parse(json);
    }

    private static JsonElement tracing(HttpConnectionManager hcm) throws Exception {
        return hcm.hasTracing() ? json(hcm.getTracing()) : JsonNull.INSTANCE;
    }
}
