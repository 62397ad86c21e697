package io.meshpilot.networking.telemetry;

import static io.meshpilot.networking.telemetry.TelemetryFixture.hcm;
import static io.meshpilot.networking.telemetry.TelemetryFixture.json;
import static io.meshpilot.networking.telemetry.TelemetryFixture.listener;
import static io.meshpilot.networking.telemetry.TelemetryFixture.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Access logs per Telemetry field, compared as protobuf JSON with what istiod writes for the same
 * input (pilot/pkg/model/telemetry_logging.go, networking/core/accesslog.go and their tests):
 * the access_log of httpbin's inbound connection manager (port 8000, SERVER side) and of its
 * outbound one (listener 0.0.0.0_8000, CLIENT side).
 */
class AccessLogTranslationTest {
    /** istiod's EnvoyTextLogFormat, as in its source. */
    static final String ISTIO_TEXT = "[%START_TIME%] \"%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%\" "
            + "%RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "
            + "\"%UPSTREAM_TRANSPORT_FAILURE_REASON%\" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% "
            + "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% \"%REQ(X-FORWARDED-FOR)%\" \"%REQ(USER-AGENT)%\" "
            + "\"%REQ(X-REQUEST-ID)%\" \"%REQ(:AUTHORITY)%\" \"%UPSTREAM_HOST%\" %UPSTREAM_CLUSTER_RAW% "
            + "%UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% "
            + "%REQUESTED_SERVER_NAME% %ROUTE_NAME%\n";
    /** istiod's EnvoyJSONLogFormatIstio. */
    static final String ISTIO_JSON = """
            {"start_time":"%START_TIME%","route_name":"%ROUTE_NAME%","method":"%REQ(:METHOD)%",
             "path":"%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%","protocol":"%PROTOCOL%","response_code":"%RESPONSE_CODE%",
             "response_flags":"%RESPONSE_FLAGS%","response_code_details":"%RESPONSE_CODE_DETAILS%",
             "connection_termination_details":"%CONNECTION_TERMINATION_DETAILS%","bytes_received":"%BYTES_RECEIVED%",
             "bytes_sent":"%BYTES_SENT%","duration":"%DURATION%","upstream_service_time":"%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
             "x_forwarded_for":"%REQ(X-FORWARDED-FOR)%","user_agent":"%REQ(USER-AGENT)%","request_id":"%REQ(X-REQUEST-ID)%",
             "authority":"%REQ(:AUTHORITY)%","upstream_host":"%UPSTREAM_HOST%","upstream_cluster":"%UPSTREAM_CLUSTER_RAW%",
             "upstream_local_address":"%UPSTREAM_LOCAL_ADDRESS%","downstream_local_address":"%DOWNSTREAM_LOCAL_ADDRESS%",
             "downstream_remote_address":"%DOWNSTREAM_REMOTE_ADDRESS%","requested_server_name":"%REQUESTED_SERVER_NAME%",
             "upstream_transport_failure_reason":"%UPSTREAM_TRANSPORT_FAILURE_REASON%"}""";
    static final String FILE_TYPE = "type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog";

    static JsonObject fileText(String path, String text) {
        return parse("""
                {"name":"envoy.access_loggers.file","typedConfig":{"@type":"%s","path":"%s",
                 "logFormat":{"textFormatSource":{"inlineString":%s}}}}"""
                .formatted(FILE_TYPE, path, new JsonPrimitive(text))).getAsJsonObject();
    }

    static JsonObject fileJson(String path, String json) {
        return parse("""
                {"name":"envoy.access_loggers.file","typedConfig":{"@type":"%s","path":"%s",
                 "logFormat":{"jsonFormat":%s,"jsonFormatOptions":{}}}}""".formatted(FILE_TYPE, path, json))
                .getAsJsonObject();
    }

    static JsonArray list(JsonElement... logs) {
        JsonArray a = new JsonArray();
        for (JsonElement e : logs) {
            a.add(e);
        }
        return a;
    }

    static JsonObject withFilter(JsonObject log, String filter) {
        JsonObject copy = log.deepCopy();
        copy.add("filter", parse(filter));
        return copy;
    }

    static final String CEL = """
            {"extensionFilter":{"name":"envoy.access_loggers.extension_filters.cel","typedConfig":{
             "@type":"type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter",
             "expression":"response.code >= 400"}}}""";

    static final String ROOT_ENVOY = """
            apiVersion: telemetry.istio.io/v1
            kind: Telemetry
            metadata: {name: mesh-default, namespace: istio-system}
            spec:
              accessLogging: [{providers: [{name: envoy}]}]
            """;

    static Stream<Arguments> cases() {
        JsonObject stdout = fileText("/dev/stdout", ISTIO_TEXT);
        JsonArray none = list();
        return Stream.of(
                Arguments.of("mesh accessLogFile, TEXT encoding: istiod's default text format",
                        "accessLogFile: /dev/stdout\n", "", list(stdout), list(stdout)),
                Arguments.of("mesh accessLogEncoding JSON: istiod's default JSON labels",
                        "accessLogFile: /dev/stdout\naccessLogEncoding: JSON\n", "",
                        list(fileJson("/dev/stdout", ISTIO_JSON)), list(fileJson("/dev/stdout", ISTIO_JSON))),
                Arguments.of("mesh accessLogFormat: a newline is added",
                        "accessLogFile: /tmp/a.log\naccessLogFormat: '%RESPONSE_CODE%'\n", "",
                        list(fileText("/tmp/a.log", "%RESPONSE_CODE%\n")), list(fileText("/tmp/a.log", "%RESPONSE_CODE%\n"))),
                Arguments.of("mesh accessLogFormat JSON", "accessLogFile: /tmp/a.log\naccessLogEncoding: JSON\n"
                                + "accessLogFormat: '{\"code\": \"%RESPONSE_CODE%\"}'\n", "",
                        list(fileJson("/tmp/a.log", "{\"code\":\"%RESPONSE_CODE%\"}")),
                        list(fileJson("/tmp/a.log", "{\"code\":\"%RESPONSE_CODE%\"}"))),
                Arguments.of("no accessLogFile and no Telemetry: no access log", "", "", none, none),
                Arguments.of("Telemetry (Istio docs' mesh-default): the built-in envoy provider logs with the mesh format",
                        "", ROOT_ENVOY, list(stdout), list(stdout)),
                Arguments.of("envoyFileAccessLog text with REQ_WITHOUT_QUERY: formatter and newline", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: foo}
                        spec: {accessLogging: [{providers: [{name: file-text}]}]}
                        """, list(fileTextReqWithoutQuery()), list(fileTextReqWithoutQuery())),
                Arguments.of("envoyFileAccessLog labels: JSON format", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: foo}
                        spec: {accessLogging: [{providers: [{name: file-json}]}]}
                        """, list(fileJson("/dev/stderr", "{\"code\":\"%RESPONSE_CODE%\",\"path\":\"%REQ(:PATH)%\"}")),
                        list(fileJson("/dev/stderr", "{\"code\":\"%RESPONSE_CODE%\",\"path\":\"%REQ(:PATH)%\"}"))),
                Arguments.of("envoyOtelAls: OpenTelemetry access log to the collector's cluster", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: foo}
                        spec: {accessLogging: [{providers: [{name: otel}]}]}
                        """, list(otel()), list(otel())),
                Arguments.of("disabled in the namespace overrides the root namespace", "accessLogFile: /dev/stdout\n",
                        ROOT_ENVOY + """
                        ---
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: off, namespace: foo}
                        spec: {accessLogging: [{disabled: true}]}
                        """, none, none),
                Arguments.of("match.mode SERVER: inbound only", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: istio-system}
                        spec: {accessLogging: [{providers: [{name: envoy}], match: {mode: SERVER}}]}
                        """, list(stdout), none),
                Arguments.of("match.mode CLIENT: outbound only", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: istio-system}
                        spec: {accessLogging: [{providers: [{name: envoy}], match: {mode: CLIENT}}]}
                        """, none, list(stdout)),
                Arguments.of("filter.expression: Envoy's CEL access log filter", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: istio-system}
                        spec: {accessLogging: [{providers: [{name: envoy}], filter: {expression: "response.code >= 400"}}]}
                        """, list(withFilter(stdout, CEL)), list(withFilter(stdout, CEL))),
                Arguments.of("a workload-selected Telemetry replaces the namespace's providers", "", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: ns, namespace: foo}
                        spec: {accessLogging: [{providers: [{name: file-text}]}]}
                        ---
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: workload, namespace: foo}
                        spec:
                          selector: {matchLabels: {app: httpbin}}
                          accessLogging: [{providers: [{name: file-json}]}]
                        """, list(fileJson("/dev/stderr", "{\"code\":\"%RESPONSE_CODE%\",\"path\":\"%REQ(:PATH)%\"}")),
                        list(fileJson("/dev/stderr", "{\"code\":\"%RESPONSE_CODE%\",\"path\":\"%REQ(:PATH)%\"}"))),
                Arguments.of("a provider that names no extension provider falls back to the mesh file",
                        "accessLogFile: /dev/stdout\n", """
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: t, namespace: foo}
                        spec: {accessLogging: [{providers: [{name: no-such-provider}]}]}
                        """, list(stdout), list(stdout)));
    }

    static JsonObject fileTextReqWithoutQuery() {
        JsonObject o = fileText("/var/log/access.log", "%REQ_WITHOUT_QUERY(:PATH)% %RESPONSE_CODE%\n");
        o.getAsJsonObject("typedConfig").getAsJsonObject("logFormat").add("formatters", parse("""
                [{"name":"envoy.formatter.req_without_query","typedConfig":{
                  "@type":"type.googleapis.com/envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery"}}]"""));
        return o;
    }

    static JsonObject otel() {
        return parse("""
                {"name":"envoy.access_loggers.open_telemetry","typedConfig":{
                 "@type":"type.googleapis.com/envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig",
                 "commonConfig":{"logName":"otel_envoy_accesslog",
                   "grpcService":{"envoyGrpc":{"clusterName":"outbound|4317||otel.istio-system.svc.cluster.local",
                                               "authority":"otel.istio-system.svc.cluster.local"}},
                   "transportApiVersion":"V3",
                   "filterStateObjectsToLog":["upstream_peer","downstream_peer","wasm.upstream_peer",
                     "wasm.upstream_peer_id","wasm.downstream_peer","wasm.downstream_peer_id"]},
                 "body":{"stringValue":"%RESPONSE_CODE%"},
                 "attributes":{"values":[{"key":"peer","value":{"stringValue":"%DOWNSTREAM_REMOTE_ADDRESS%"}}]},
                 "disableBuiltinLabels":true}}""").getAsJsonObject();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void accessLogsOfInboundAndOutboundConnectionManagers(String name, String meshYaml, String telemetry,
                                                          JsonArray inbound, JsonArray outbound) throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES);
            if (!telemetry.isEmpty()) {
                fixture.apply(telemetry);
            }
            PushContext push = fixture.push(TelemetryFixture.mesh(meshYaml));
            List<Listener> all = TelemetryFixture.listeners(TelemetryFixture.HTTPBIN, push);
            assertEquals(inbound, json(hcm(listener(all, "virtualInbound"), "0.0.0.0_8000").getAccessLogList()),
                    name + ": inbound");
            assertEquals(outbound, json(hcm(listener(all, "0.0.0.0_8000"), null).getAccessLogList()), name + ": outbound");
        }
    }

    @Test
    void tcpProxiesLogButNotTheBlackHoleAndCaptureListenersLogUnmatchedConnections() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES);
            PushContext push = fixture.push(TelemetryFixture.mesh("accessLogFile: /dev/stdout\n"));
            List<Listener> all = TelemetryFixture.listeners(TelemetryFixture.HTTPBIN, push);
            JsonArray stdout = list(fileText("/dev/stdout", ISTIO_TEXT));
            for (TcpProxy t : TelemetryFixture.tcpProxies(listener(all, "virtualInbound"))) {
                assertEquals(t.getCluster().equals("BlackHoleCluster") ? list() : stdout, json(t.getAccessLogList()),
                        "inbound tcp_proxy to " + t.getCluster());
            }
            for (TcpProxy t : TelemetryFixture.tcpProxies(listener(all, "0.0.0.0_9000"))) {
                assertEquals(stdout, json(t.getAccessLogList()), "outbound tcp_proxy to " + t.getCluster());
            }
            JsonArray nr = list(withFilter(fileText("/dev/stdout", ISTIO_TEXT), "{\"responseFlagFilter\":{\"flags\":[\"NR\"]}}"));
            assertEquals(nr, json(listener(all, "virtualOutbound").getAccessLogList()));
            assertEquals(nr, json(listener(all, "virtualInbound").getAccessLogList()));
            assertEquals(list(), json(listener(all, "0.0.0.0_8000").getAccessLogList()),
                    "istiod logs unmatched connections on the capture listeners only");
        }
    }

    @Test
    void aWorkloadSelectorOnlyAppliesToTheWorkloadsItSelects() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES);
            fixture.apply("""
                    apiVersion: telemetry.istio.io/v1
                    kind: Telemetry
                    metadata: {name: workload, namespace: foo}
                    spec:
                      selector: {matchLabels: {version: v2}}
                      accessLogging: [{providers: [{name: envoy}]}]
                    """);
            PushContext push = fixture.push(TelemetryFixture.mesh(""));
            var v1 = TelemetryFixture.listeners(TelemetryFixture.HTTPBIN, push);
            var v2 = TelemetryFixture.listeners(TelemetryFixture.proxy(Map.of("app", "httpbin", "version", "v2")), push);
            assertEquals(0, hcm(listener(v1, "0.0.0.0_8000"), null).getAccessLogCount());
            assertEquals(1, hcm(listener(v2, "0.0.0.0_8000"), null).getAccessLogCount());
            assertTrue(hcm(listener(v2, "virtualInbound"), "0.0.0.0_8000").getAccessLogCount() == 1);
        }
    }

    @Test
    void providersThatCannotLogOrTraceAreNamedInThePushStatus() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(TelemetryFixture.SERVICES).apply("""
                    apiVersion: telemetry.istio.io/v1
                    kind: Telemetry
                    metadata: {name: t, namespace: foo}
                    spec:
                      accessLogging: [{providers: [{name: no-such-provider}, {name: zipkin}, {name: envoy}]}]
                      tracing: [{providers: [{name: file-text}]}]
                    """);
            var entries = fixture.push(TelemetryFixture.mesh("")).diagnostics().all()
                    .getOrDefault("pilot_telemetry_provider_unusable", Map.of());
            assertEquals(Set.of("foo/t|accessLogging|no-such-provider", "foo/t|accessLogging|zipkin",
                    "foo/t|tracing|file-text"), entries.keySet(), entries.toString());
        }
    }
}
