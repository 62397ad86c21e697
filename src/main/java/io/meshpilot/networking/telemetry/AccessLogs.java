package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.accesslog.v3.AccessLog;
import io.envoyproxy.envoy.config.accesslog.v3.AccessLogFilter;
import io.envoyproxy.envoy.config.accesslog.v3.AndFilter;
import io.envoyproxy.envoy.config.accesslog.v3.ExtensionFilter;
import io.envoyproxy.envoy.config.accesslog.v3.ResponseFlagFilter;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.GrpcService;
import io.envoyproxy.envoy.config.core.v3.JsonFormatOptions;
import io.envoyproxy.envoy.config.core.v3.SubstitutionFormatString;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.extensions.access_loggers.file.v3.FileAccessLog;
import io.envoyproxy.envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter;
import io.envoyproxy.envoy.extensions.access_loggers.grpc.v3.CommonGrpcAccessLogConfig;
import io.envoyproxy.envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig;
import io.envoyproxy.envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig.ExtensionProvider;
import io.meshpilot.api.telemetry.v1alpha1.AccessLogging;
import io.meshpilot.api.telemetry.v1alpha1.WorkloadMode;
import io.meshpilot.model.PushContext;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Access logs as istiod builds them (pilot/pkg/model/telemetry_logging.go and
 * networking/core/accesslog.go): the providers the applicable Telemetries select, merged by
 * istiod's mergeLogs, each built from {@code meshConfig.extensionProviders} (envoyFileAccessLog,
 * envoyOtelAls); with no Telemetry logging (and no default provider) the mesh's
 * {@code accessLogFile}/{@code accessLogFormat}/{@code accessLogEncoding}.
 */
public final class AccessLogs {
    public static final String FILE_ACCESS_LOG = "envoy.access_loggers.file";
    public static final String OTEL_ACCESS_LOG = "envoy.access_loggers.open_telemetry";
    static final String CEL_FILTER = "envoy.access_loggers.extension_filters.cel";
    static final String DEV_STDOUT = "/dev/stdout";
    static final String BUILTIN_PROVIDER = "envoy";
    static final String OTEL_LOG_NAME = "otel_envoy_accesslog";

    /** istiod's EnvoyTextLogFormat. */
    public static final String ENVOY_TEXT_LOG_FORMAT = "[%START_TIME%] \"%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% "
            + "%PROTOCOL%\" %RESPONSE_CODE% %RESPONSE_FLAGS% "
            + "%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "
            + "\"%UPSTREAM_TRANSPORT_FAILURE_REASON%\" %BYTES_RECEIVED% %BYTES_SENT% "
            + "%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% \"%REQ(X-FORWARDED-FOR)%\" "
            + "\"%REQ(USER-AGENT)%\" \"%REQ(X-REQUEST-ID)%\" \"%REQ(:AUTHORITY)%\" \"%UPSTREAM_HOST%\" "
            + "%UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% "
            + "%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n";

    /** istiod's EnvoyJSONLogFormatIstio (its map order does not matter: a Struct is a map). */
    public static final Struct ENVOY_JSON_LOG_FORMAT = jsonFormat(Map.ofEntries(
            Map.entry("start_time", "%START_TIME%"), Map.entry("route_name", "%ROUTE_NAME%"),
            Map.entry("method", "%REQ(:METHOD)%"), Map.entry("path", "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%"),
            Map.entry("protocol", "%PROTOCOL%"), Map.entry("response_code", "%RESPONSE_CODE%"),
            Map.entry("response_flags", "%RESPONSE_FLAGS%"), Map.entry("response_code_details", "%RESPONSE_CODE_DETAILS%"),
            Map.entry("connection_termination_details", "%CONNECTION_TERMINATION_DETAILS%"),
            Map.entry("bytes_received", "%BYTES_RECEIVED%"), Map.entry("bytes_sent", "%BYTES_SENT%"),
            Map.entry("duration", "%DURATION%"),
            Map.entry("upstream_service_time", "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%"),
            Map.entry("x_forwarded_for", "%REQ(X-FORWARDED-FOR)%"), Map.entry("user_agent", "%REQ(USER-AGENT)%"),
            Map.entry("request_id", "%REQ(X-REQUEST-ID)%"), Map.entry("authority", "%REQ(:AUTHORITY)%"),
            Map.entry("upstream_host", "%UPSTREAM_HOST%"), Map.entry("upstream_cluster", "%UPSTREAM_CLUSTER_RAW%"),
            Map.entry("upstream_local_address", "%UPSTREAM_LOCAL_ADDRESS%"),
            Map.entry("downstream_local_address", "%DOWNSTREAM_LOCAL_ADDRESS%"),
            Map.entry("downstream_remote_address", "%DOWNSTREAM_REMOTE_ADDRESS%"),
            Map.entry("requested_server_name", "%REQUESTED_SERVER_NAME%"),
            Map.entry("upstream_transport_failure_reason", "%UPSTREAM_TRANSPORT_FAILURE_REASON%")));

    private static final List<String> WASM_STATE_TO_LOG = List.of("upstream_peer", "downstream_peer",
            "wasm.upstream_peer", "wasm.upstream_peer_id", "wasm.downstream_peer", "wasm.downstream_peer_id");
    private static final TypedExtensionConfig REQ_WITHOUT_QUERY = TypedExtensionConfig.newBuilder()
            .setName("envoy.formatter.req_without_query").setTypedConfig(Any.pack(ReqWithoutQuery.getDefaultInstance()))
            .build();

    /** One merged provider: istiod's LoggingConfig. */
    record LoggingConfig(String provider, boolean disabled, AccessLog accessLog, AccessLogging.Filter filter) {
    }

    private record LoggingSpec(boolean disabled, AccessLogging.Filter filter) {
        static final LoggingSpec EMPTY = new LoggingSpec(false, null);
    }

    private AccessLogs() {
    }

    /** The access logs of one connection manager or tcp_proxy of {@code cls}. */
    public static List<AccessLog> forFilter(TelemetrySelection selection, PushContext push, ListenerClass cls) {
        return build(selection, push, cls, null);
    }

    /**
     * The listener-level access logs (connections no filter chain matched: response flag NR),
     * unless the mesh's {@code disableEnvoyListenerLog} is set.
     */
    public static List<AccessLog> forListener(TelemetrySelection selection, PushContext push, ListenerClass cls) {
        if (push.mesh().getDisableEnvoyListenerLog()) {
            return List.of();
        }
        return build(selection, push, cls, AccessLogFilter.newBuilder()
                .setResponseFlagFilter(ResponseFlagFilter.newBuilder().addFlags("NR")).build());
    }

    private static List<AccessLog> build(TelemetrySelection selection, PushContext push, ListenerClass cls,
                                         AccessLogFilter extra) {
        List<LoggingConfig> cfgs = loggingConfigs(selection, push, cls);
        MeshConfig mesh = push.mesh();
        if (cfgs.isEmpty()) {
            if (mesh.getAccessLogFile().isEmpty()) {
                return List.of();
            }
            AccessLog.Builder al = fileAccessLogFromMesh(mesh.getAccessLogFile(), mesh).toBuilder();
            if (extra != null) {
                al.setFilter(extra);
            }
            return List.of(al.build());
        }
        List<AccessLog> out = new ArrayList<>(cfgs.size());
        for (LoggingConfig c : cfgs) {
            if (c.disabled()) {
                continue;
            }
            List<AccessLogFilter> filters = new ArrayList<>(2);
            if (extra != null) {
                filters.add(extra);
            }
            if (c.filter() != null) {
                filters.add(AccessLogFilter.newBuilder().setExtensionFilter(ExtensionFilter.newBuilder()
                        .setName(CEL_FILTER).setTypedConfig(Any.pack(ExpressionFilter.newBuilder()
                                .setExpression(c.filter().getExpression()).build()))).build());
            }
            AccessLog.Builder al = c.accessLog().toBuilder();
            if (filters.size() == 1) {
                al.setFilter(filters.get(0));
            } else if (filters.size() > 1) {
                al.setFilter(AccessLogFilter.newBuilder().setAndFilter(AndFilter.newBuilder().addAllFilters(filters)));
            }
            out.add(al.build());
        }
        return out;
    }

    /** istiod's Telemetries.AccessLogging: the merged providers that exist and can log, sorted by name. */
    static List<LoggingConfig> loggingConfigs(TelemetrySelection selection, PushContext push, ListenerClass cls) {
        MeshConfig mesh = push.mesh();
        if (selection.logging().isEmpty() && mesh.getDefaultProviders().getAccessLoggingCount() == 0) {
            return List.of();
        }
        Map<String, LoggingSpec> providers = mergeLogs(selection.logging(), mesh, cls.mode());
        List<LoggingConfig> out = new ArrayList<>();
        providers.forEach((name, spec) -> {
            ExtensionProvider p = provider(mesh, name);
            if (p == null) {
                return;
            }
            AccessLog al = telemetryAccessLog(push, p);
            if (al != null) {
                out.add(new LoggingConfig(p.getName(), spec.disabled(), al, spec.filter()));
            }
        });
        out.sort(Comparator.comparing(LoggingConfig::provider));
        return out;
    }

    /** istiod's mergeLogs: later Telemetries override the providers (and filters) of earlier ones. */
    private static Map<String, LoggingSpec> mergeLogs(List<List<AccessLogging>> logs, MeshConfig mesh, WorkloadMode mode) {
        Map<String, LoggingSpec> providers = new TreeMap<>();
        List<String> defaults = mesh.getDefaultProviders().getAccessLoggingList();
        if (logs.isEmpty()) {
            defaults.forEach(d -> providers.put(d, LoggingSpec.EMPTY));
            return providers;
        }
        List<String> providerNames = defaults;
        Map<String, LoggingSpec> filters = new HashMap<>();
        for (List<AccessLogging> m : logs) {
            Set<String> names = new LinkedHashSet<>();
            for (AccessLogging p : m) {
                if (!matchMode(p, mode)) {
                    continue;
                }
                List<String> sub = names(p);
                names.addAll(sub);
                for (String prov : sub) {
                    filters.put(prov, new LoggingSpec(false, p.hasFilter() ? p.getFilter() : null));
                }
            }
            if (!names.isEmpty()) {
                providerNames = List.copyOf(names);
            }
        }
        Set<String> inScope = Set.copyOf(providerNames);
        List<String> parent = defaults;
        for (List<AccessLogging> l : logs) {
            for (AccessLogging m : l) {
                List<String> names = names(m);
                if (names.isEmpty()) {
                    names = parent;
                }
                parent = names;
                for (String provider : names) {
                    if (!inScope.contains(provider) || !matchMode(m, mode)) {
                        continue;
                    }
                    if (m.getDisabled().getValue()) {
                        providers.put(provider, new LoggingSpec(true, null));
                        continue;
                    }
                    providers.put(provider, filters.getOrDefault(provider, LoggingSpec.EMPTY));
                }
            }
        }
        return providers;
    }

    private static boolean matchMode(AccessLogging p, WorkloadMode mode) {
        if (!p.hasMatch() || p.getMatch().getMode() == WorkloadMode.CLIENT_AND_SERVER) {
            return true;
        }
        return p.getMatch().getMode() == mode;
    }

    private static List<String> names(AccessLogging p) {
        return p.getProvidersList().stream().map(r -> r.getName()).toList();
    }

    /** istiod's fetchProvider: by name, case-insensitively. */
    static ExtensionProvider provider(MeshConfig mesh, String name) {
        for (ExtensionProvider p : mesh.getExtensionProvidersList()) {
            if (p.getName().equalsIgnoreCase(name)) {
                return p;
            }
        }
        return null;
    }

    /** istiod's telemetryAccessLog; null for providers that do not log (or whose service is unknown). */
    static AccessLog telemetryAccessLog(PushContext push, ExtensionProvider p) {
        if (p.hasEnvoyFileAccessLog()) {
            var file = p.getEnvoyFileAccessLog();
            if (p.getName().equals(BUILTIN_PROVIDER) && !file.hasLogFormat() && !file.getOmitEmptyValues()) {
                return fileAccessLogFromMesh(file.getPath(), push.mesh());
            }
            return fileAccessLog(file);
        }
        if (p.hasEnvoyOtelAls()) {
            return openTelemetryLog(push, p.getEnvoyOtelAls());
        }
        return null;
    }

    static AccessLog fileAccessLog(MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider prov) {
        FileAccessLog.Builder fl = FileAccessLog.newBuilder().setPath(prov.getPath().isEmpty() ? DEV_STDOUT : prov.getPath());
        SubstitutionFormatString.Builder format;
        List<TypedExtensionConfig> formatters;
        if (prov.getLogFormat().hasLabels()) {
            Struct labels = prov.getLogFormat().getLabels().getFieldsCount() == 0 ? ENVOY_JSON_LOG_FORMAT
                    : prov.getLogFormat().getLabels();
            format = SubstitutionFormatString.newBuilder().setJsonFormat(labels)
                    .setJsonFormatOptions(JsonFormatOptions.newBuilder().setSortProperties(false));
            formatters = jsonFormatters(labels);
        } else {
            String text = textFormat(prov.getLogFormat().getText());
            format = SubstitutionFormatString.newBuilder()
                    .setTextFormatSource(DataSource.newBuilder().setInlineString(text));
            formatters = textFormatters(text);
        }
        format.setOmitEmptyValues(prov.getOmitEmptyValues()).addAllFormatters(formatters);
        fl.setLogFormat(format);
        return AccessLog.newBuilder().setName(FILE_ACCESS_LOG).setTypedConfig(Any.pack(fl.build())).build();
    }

    /** istiod's FileAccessLogFromMeshConfig: the mesh's format in its encoding (TEXT or JSON). */
    public static AccessLog fileAccessLogFromMesh(String path, MeshConfig mesh) {
        FileAccessLog.Builder fl = FileAccessLog.newBuilder().setPath(path);
        if (mesh.getAccessLogEncoding() == MeshConfig.AccessLogEncoding.JSON) {
            Struct json = ENVOY_JSON_LOG_FORMAT;
            if (!mesh.getAccessLogFormat().isEmpty()) {
                try {
                    Struct.Builder parsed = Struct.newBuilder();
                    JsonFormat.parser().ignoringUnknownFields().merge(mesh.getAccessLogFormat(), parsed);
                    json = parsed.build();
                } catch (InvalidProtocolBufferException | RuntimeException e) {
                    // as istiod: an unreadable JSON format falls back to the default one
                }
            }
            fl.setLogFormat(SubstitutionFormatString.newBuilder().setJsonFormat(json)
                    .setJsonFormatOptions(JsonFormatOptions.newBuilder().setSortProperties(false))
                    .addAllFormatters(jsonFormatters(json)));
        } else {
            String text = textFormat(mesh.getAccessLogFormat());
            fl.setLogFormat(SubstitutionFormatString.newBuilder()
                    .setTextFormatSource(DataSource.newBuilder().setInlineString(text))
                    .addAllFormatters(textFormatters(text)));
        }
        return AccessLog.newBuilder().setName(FILE_ACCESS_LOG).setTypedConfig(Any.pack(fl.build())).build();
    }

    static AccessLog openTelemetryLog(PushContext push, MeshConfig.ExtensionProvider.EnvoyOpenTelemetryLogProvider prov) {
        var clusters = ProviderClusters.lookup(push, prov.getService(), prov.getPort());
        if (clusters.isEmpty()) {
            return null;
        }
        String format = prov.getLogFormat().getText().isEmpty() ? ENVOY_TEXT_LOG_FORMAT : prov.getLogFormat().getText();
        OpenTelemetryAccessLogConfig.Builder cfg = OpenTelemetryAccessLogConfig.newBuilder()
                .setCommonConfig(CommonGrpcAccessLogConfig.newBuilder()
                        .setLogName(prov.getLogName().isEmpty() ? OTEL_LOG_NAME : prov.getLogName())
                        .setGrpcService(GrpcService.newBuilder().setEnvoyGrpc(GrpcService.EnvoyGrpc.newBuilder()
                                .setClusterName(clusters.get().cluster()).setAuthority(clusters.get().hostname())))
                        .setTransportApiVersion(ApiVersion.V3)
                        .addAllFilterStateObjectsToLog(WASM_STATE_TO_LOG))
                .setDisableBuiltinLabels(true)
                .setBody(AnyValue.newBuilder().setStringValue(format));
        Struct labels = prov.getLogFormat().hasLabels() ? prov.getLogFormat().getLabels() : null;
        if (labels != null && labels.getFieldsCount() > 0) {
            KeyValueList.Builder attrs = KeyValueList.newBuilder();
            new TreeMap<>(labels.getFieldsMap()).forEach((k, v) -> attrs.addValues(KeyValue.newBuilder().setKey(k)
                    .setValue(AnyValue.newBuilder().setStringValue(v.getStringValue()))));
            cfg.setAttributes(attrs);
        }
        Set<TypedExtensionConfig> formatters = new LinkedHashSet<>(textFormatters(format));
        if (labels != null) {
            formatters.addAll(jsonFormatters(labels));
        }
        cfg.addAllFormatters(formatters.stream().sorted(Comparator.comparing(TypedExtensionConfig::getName)).toList());
        return AccessLog.newBuilder().setName(OTEL_ACCESS_LOG).setTypedConfig(Any.pack(cfg.build())).build();
    }

    /** istiod's fileAccessLogFormat: the default text format, or the given one ending in a newline. */
    static String textFormat(String format) {
        if (format.isEmpty()) {
            return ENVOY_TEXT_LOG_FORMAT;
        }
        return format.endsWith("\n") ? format : format + "\n";
    }

    private static List<TypedExtensionConfig> textFormatters(String text) {
        return text.contains("%REQ_WITHOUT_QUERY") ? List.of(REQ_WITHOUT_QUERY) : List.of();
    }

    private static List<TypedExtensionConfig> jsonFormatters(Struct json) {
        return json.getFieldsMap().values().stream().anyMatch(v -> v.getStringValue().contains("%REQ_WITHOUT_QUERY"))
                ? List.of(REQ_WITHOUT_QUERY) : List.of();
    }

    private static Struct jsonFormat(Map<String, String> fields) {
        Struct.Builder s = Struct.newBuilder();
        new TreeMap<>(fields).forEach((k, v) -> s.putFields(k, Value.newBuilder().setStringValue(v).build()));
        return s.build();
    }
}
