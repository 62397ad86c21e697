package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Message;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.core.v3.GrpcService;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.HttpService;
import io.envoyproxy.envoy.config.core.v3.HttpUri;
import io.envoyproxy.envoy.config.trace.v3.DatadogConfig;
import io.envoyproxy.envoy.config.trace.v3.OpenTelemetryConfig;
import io.envoyproxy.envoy.config.trace.v3.ZipkinConfig;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.type.metadata.v3.MetadataKey;
import io.envoyproxy.envoy.type.metadata.v3.MetadataKind;
import io.envoyproxy.envoy.type.tracing.v3.CustomTag;
import io.envoyproxy.envoy.type.v3.Percent;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig.ExtensionProvider;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.api.telemetry.v1alpha1.Tracing;
import io.meshpilot.api.telemetry.v1alpha1.WorkloadMode;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * HCM tracing as istiod builds it (pilot/pkg/model/telemetry.go Tracing, networking/core/tracing.go)
 * from the applicable Telemetries' tracing entries: the provider (zipkin, opentelemetry,
 * datadog from {@code meshConfig.extensionProviders}; the first named, else the mesh's default
 * tracing provider), {@code randomSamplingPercentage}, {@code customTags} (literal,
 * environment, header), {@code disableSpanReporting}, {@code enableIstioTags}, each per
 * {@code match.mode} (client: outbound and gateways, server: inbound).
 */
public final class TracingConfigs {
    static final String ZIPKIN = "envoy.tracers.zipkin";
    static final String DATADOG = "envoy.tracers.datadog";
    static final String OPENTELEMETRY = "envoy.tracers.opentelemetry";
    static final String CANONICAL_NAME = "service.istio.io/canonical-name";
    static final String CANONICAL_REVISION = "service.istio.io/canonical-revision";

    /** istiod's TracingSpec: one side's merged settings. */
    static final class Spec {
        ExtensionProvider provider;
        boolean disabled;
        Double randomSamplingPercentage;
        Map<String, Tracing.CustomTag> customTags;
        boolean enableIstioTags = true;
    }

    private TracingConfigs() {
    }

    /**
     * The tracing of a connection manager of {@code cls}, or empty when no Telemetry (nor a
     * default tracing provider) configures tracing, when span reporting is disabled, or when
     * the provider cannot trace (unknown service, not a tracer).
     */
    public static Optional<HttpConnectionManager.Tracing> forHcm(TelemetrySelection selection, PushContext push,
                                                                 Proxy proxy, ListenerClass cls) {
        MeshConfig mesh = push.mesh();
        List<String> defaults = mesh.getDefaultProviders().getTracingList();
        if (selection.tracing().isEmpty() && defaults.isEmpty()) {
            return mesh.getEnableTracing() ? Optional.of(legacyTracing(proxy, push)) : Optional.empty();
        }
        Spec spec = merge(selection.tracing(), mesh, cls.mode());
        if (spec.disabled || spec.provider == null) {
            return Optional.empty();
        }
        HttpConnectionManager.Tracing.Builder t = providerTracing(push, proxy, spec.provider);
        if (t == null) {
            return Optional.empty();
        }
        ProxyConfig proxyConfig = proxy.proxyConfigOr(mesh.getDefaultConfig());
        double sampling = spec.randomSamplingPercentage != null ? spec.randomSamplingPercentage
                : proxySampling(push, proxyConfig);
        t.setClientSampling(Percent.newBuilder().setValue(100.0))
                .setOverallSampling(Percent.newBuilder().setValue(100.0))
                .setRandomSampling(Percent.newBuilder().setValue(sampling));
        t.addAllCustomTags(customTags(spec, proxy, proxyConfig));
        if (!t.hasMaxPathTagLength() && proxyConfig.getTracing().getMaxPathTagLength() != 0) {
            t.setMaxPathTagLength(UInt32Value.of(proxyConfig.getTracing().getMaxPathTagLength()));
        }
        return Optional.of(t.build());
    }

    /**
     * istiod's fallback when no Telemetry and no default provider configures tracing but the
     * mesh's {@code enableTracing} (true by default) asks for it: sampling, Istio's tags and
     * the proxy config's own tags, with no provider (the tracer then comes from the proxy's
     * bootstrap, as {@code defaultConfig.tracing} set it up).
     */
    private static HttpConnectionManager.Tracing legacyTracing(Proxy proxy, PushContext push) {
        ProxyConfig proxyConfig = proxy.proxyConfigOr(push.mesh().getDefaultConfig());
        var proxyTracing = proxyConfig.getTracing();
        Spec spec = new Spec();
        if (proxyTracing.hasEnableIstioTags()) {
            spec.enableIstioTags = proxyTracing.getEnableIstioTags().getValue();
        }
        HttpConnectionManager.Tracing.Builder t = HttpConnectionManager.Tracing.newBuilder()
                .setClientSampling(Percent.newBuilder().setValue(100.0))
                .setOverallSampling(Percent.newBuilder().setValue(100.0))
                .setRandomSampling(Percent.newBuilder().setValue(proxySampling(push, proxyConfig)))
                .addAllCustomTags(customTags(spec, proxy, proxyConfig));
        if (proxyTracing.getMaxPathTagLength() != 0) {
            t.setMaxPathTagLength(UInt32Value.of(proxyTracing.getMaxPathTagLength()));
        }
        return t.build();
    }

    /**
     * What of the workload its tracing reads (Istio's canonical service and revision tags, the
     * tracer's service name from the canonical name or {@code app}), for the key of listeners a
     * scope's sidecars share; "" when no tracing applies, so the scope still shares one entry.
     */
    public static String workloadKey(TelemetrySelection selection, PushContext push, Proxy proxy) {
        if (selection.tracing().isEmpty() && push.mesh().getDefaultProviders().getTracingCount() == 0
                && !push.mesh().getEnableTracing()) {
            return "";
        }
        var labels = proxy.labels();
        return "|tracing:" + labels.getOrDefault(CANONICAL_NAME, "") + "/" + labels.getOrDefault(CANONICAL_REVISION, "")
                + "/" + labels.getOrDefault("app", "");
    }

    /** istiod's Telemetries.Tracing for one side: later entries override earlier ones field by field. */
    static Spec merge(List<Tracing> entries, MeshConfig mesh, WorkloadMode mode) {
        Spec spec = new Spec();
        if (mesh.getDefaultProviders().getTracingCount() > 0) {
            spec.provider = AccessLogs.provider(mesh, mesh.getDefaultProviders().getTracing(0));
        }
        for (Tracing m : entries) {
            if (m.hasMatch() && m.getMatch().getMode() != WorkloadMode.CLIENT_AND_SERVER
                    && m.getMatch().getMode() != mode) {
                continue;
            }
            if (m.getProvidersCount() > 0) {
                spec.provider = AccessLogs.provider(mesh, m.getProviders(0).getName());
            }
            if (m.hasDisableSpanReporting()) {
                spec.disabled = m.getDisableSpanReporting().getValue();
            }
            if (m.getCustomTagsCount() > 0) {
                spec.customTags = m.getCustomTagsMap();
            }
            if (m.hasRandomSamplingPercentage()) {
                spec.randomSamplingPercentage = m.getRandomSamplingPercentage().getValue();
            }
            if (m.hasEnableIstioTags()) {
                spec.enableIstioTags = m.getEnableIstioTags().getValue();
            }
        }
        return spec;
    }

    /** istiod's configureFromProviderConfig; null when the provider cannot trace. */
    static HttpConnectionManager.Tracing.Builder providerTracing(PushContext push, Proxy proxy, ExtensionProvider p) {
        String name;
        int maxTagLength;
        Message config;
        if (p.hasZipkin()) {
            var z = p.getZipkin();
            var clusters = ProviderClusters.lookup(push, z.getService(), z.getPort());
            if (clusters.isEmpty()) {
                return null;
            }
            name = ZIPKIN;
            maxTagLength = z.getMaxTagLength();
            config = zipkin(clusters.get(), z);
        } else if (p.hasDatadog()) {
            var d = p.getDatadog();
            var clusters = ProviderClusters.lookup(push, d.getService(), d.getPort());
            if (clusters.isEmpty()) {
                return null;
            }
            name = DATADOG;
            maxTagLength = d.getMaxTagLength();
            config = DatadogConfig.newBuilder().setCollectorCluster(clusters.get().cluster())
                    .setServiceName(serviceCluster(proxy)).setCollectorHostname(clusters.get().hostname()).build();
        } else if (p.hasOpentelemetry()) {
            var o = p.getOpentelemetry();
            var clusters = ProviderClusters.lookup(push, o.getService(), o.getPort());
            if (clusters.isEmpty()) {
                return null;
            }
            name = OPENTELEMETRY;
            maxTagLength = o.getMaxTagLength();
            config = openTelemetry(clusters.get(), o, proxy);
        } else {
            return null; // not a tracer MeshPilot configures (istiod: lightstep deprecated, skywalking)
        }
        HttpConnectionManager.Tracing.Builder t = HttpConnectionManager.Tracing.newBuilder();
        if (proxy.type() == Proxy.Type.ROUTER) {
            t.setSpawnUpstreamSpan(BoolValue.of(true));
        }
        t.setProvider(io.envoyproxy.envoy.config.trace.v3.Tracing.Http.newBuilder().setName(name)
                .setTypedConfig(Any.pack(config)));
        if (maxTagLength != 0) {
            t.setMaxPathTagLength(UInt32Value.of(maxTagLength));
        }
        return t;
    }

    private static ZipkinConfig zipkin(ProviderClusters c, ExtensionProvider.ZipkinTracingProvider z) {
        String path = z.getPath().isEmpty() ? "/api/v2/spans" : z.getPath();
        ZipkinConfig.Builder zc = ZipkinConfig.newBuilder()
                .setCollectorEndpointVersion(ZipkinConfig.CollectorEndpointVersion.HTTP_JSON)
                .setTraceId128Bit(!z.getEnable64BitTraceId())
                .setSharedSpanContext(BoolValue.of(false));
        // istiod's form for proxies older than Istio 1.29 (and plain Envoy, which sends no
        // ISTIO_VERSION): collector_service and trace_context_option are newer than our Envoy API
        zc.setCollectorCluster(c.cluster()).setCollectorEndpoint(path).setCollectorHostname(c.hostname());
        return zc.build();
    }

    private static OpenTelemetryConfig openTelemetry(ProviderClusters c,
                                                     ExtensionProvider.OpenTelemetryTracingProvider o, Proxy proxy) {
        OpenTelemetryConfig.Builder oc = OpenTelemetryConfig.newBuilder().setServiceName(serviceCluster(proxy));
        if (o.hasHttp()) {
            String path = o.getHttp().getPath();
            String uri = c.hostname() + (path.isEmpty() ? "" : path.startsWith("/") ? path : "/" + path);
            HttpUri.Builder u = HttpUri.newBuilder().setUri(uri).setCluster(c.cluster());
            if (o.getHttp().hasTimeout()) {
                u.setTimeout(o.getHttp().getTimeout());
            }
            oc.setHttpService(HttpService.newBuilder().setHttpUri(u).addAllRequestHeadersToAdd(headers(o.getHttp().getHeadersList())));
        } else {
            GrpcService.Builder g = GrpcService.newBuilder().setEnvoyGrpc(GrpcService.EnvoyGrpc.newBuilder()
                    .setClusterName(c.cluster()).setAuthority(c.hostname()));
            if (o.getGrpc().hasTimeout()) {
                g.setTimeout(o.getGrpc().getTimeout());
            }
            for (var h : o.getGrpc().getInitialMetadataList()) {
                g.addInitialMetadata(HeaderValue.newBuilder().setKey(h.getName()).setValue(headerValue(h)));
            }
            oc.setGrpcService(g);
        }
        return oc.build();
    }

    private static List<HeaderValueOption> headers(List<ExtensionProvider.HttpHeader> headers) {
        return headers.stream().map(h -> HeaderValueOption.newBuilder()
                .setAppendAction(HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD)
                .setHeader(HeaderValue.newBuilder().setKey(h.getName()).setValue(headerValue(h))).build()).toList();
    }

    /** A header's value: inline, or read from MeshPilot's environment (istiod reads its own). */
    private static String headerValue(ExtensionProvider.HttpHeader h) {
        return h.hasEnvName() ? System.getenv().getOrDefault(h.getEnvName(), "") : h.getValue();
    }

    /** istiod's node cluster, which istio-agent sets to {@code <canonical service>.<namespace>}. */
    static String serviceCluster(Proxy proxy) {
        String svc = proxy.labels().getOrDefault(CANONICAL_NAME,
                proxy.labels().getOrDefault("app", "istio-proxy"));
        return svc + "." + proxy.namespace();
    }

    /** istiod's proxyConfigSamplingValue: the ProxyConfig's sampling, else PILOT_TRACE_SAMPLING. */
    private static double proxySampling(PushContext push, ProxyConfig proxyConfig) {
        double s = proxyConfig.getTracing().getSampling();
        if (s == 0.0) {
            return push.traceSampling();
        }
        return s > 100.0 ? 1.0 : s;
    }

    /** istiod's configureCustomTags with a Telemetry spec: Istio's tags (unless disabled), then the spec's; sorted. */
    static List<CustomTag> customTags(Spec spec, Proxy proxy, ProxyConfig proxyConfig) {
        List<CustomTag> tags = new ArrayList<>();
        if (spec.enableIstioTags) {
            tags.addAll(serviceTags(proxy));
            tags.addAll(dryRunTags());
        }
        if (spec.customTags == null || spec.customTags.isEmpty()) {
            // istiod falls back to the proxy config's tracing custom tags
            proxyConfig.getTracing().getCustomTagsMap().forEach((name, tag) -> {
                CustomTag.Builder t = CustomTag.newBuilder().setTag(name);
                if (tag.hasLiteral()) {
                    tags.add(t.setLiteral(CustomTag.Literal.newBuilder().setValue(tag.getLiteral().getValue())).build());
                } else if (tag.hasEnvironment()) {
                    tags.add(t.setEnvironment(CustomTag.Environment.newBuilder().setName(tag.getEnvironment().getName())
                            .setDefaultValue(tag.getEnvironment().getDefaultValue())).build());
                } else if (tag.hasHeader()) {
                    tags.add(t.setRequestHeader(CustomTag.Header.newBuilder().setName(tag.getHeader().getName())
                            .setDefaultValue(tag.getHeader().getDefaultValue())).build());
                }
            });
        } else {
            spec.customTags.forEach((name, tag) -> {
                if (tag.hasFormatter()) {
                    // istiod writes it as Envoy's CustomTag.value for proxies of 1.29 and later and
                    // leaves it out for older ones; the Envoy API built here has no such field
                    // (the push status lists it)
                    return;
                }
                CustomTag.Builder t = CustomTag.newBuilder().setTag(name);
                switch (tag.getTypeCase()) {
                    case LITERAL -> t.setLiteral(CustomTag.Literal.newBuilder().setValue(tag.getLiteral().getValue()));
                    case ENVIRONMENT -> t.setEnvironment(CustomTag.Environment.newBuilder()
                            .setName(tag.getEnvironment().getName())
                            .setDefaultValue(tag.getEnvironment().getDefaultValue()));
                    case HEADER -> t.setRequestHeader(CustomTag.Header.newBuilder().setName(tag.getHeader().getName())
                            .setDefaultValue(tag.getHeader().getDefaultValue()));
                    default -> { }
                }
                tags.add(t.build());
            });
        }
        tags.sort(Comparator.comparing(CustomTag::getTag));
        return tags;
    }

    private static List<CustomTag> serviceTags(Proxy proxy) {
        String revision = proxy.labels().getOrDefault(CANONICAL_REVISION, "latest");
        String service = proxy.labels().getOrDefault(CANONICAL_NAME, "unknown");
        String namespace = proxy.namespace().isEmpty() ? "default" : proxy.namespace();
        String cluster = proxy.clusterId().isEmpty() ? "unknown" : proxy.clusterId();
        return List.of(literal("istio.canonical_revision", revision), literal("istio.canonical_service", service),
                literal("istio.mesh_id", "unknown"), literal("istio.namespace", namespace),
                literal("istio.cluster_id", cluster));
    }

    private static List<CustomTag> dryRunTags() {
        return List.of(dryRun("istio.authorization.dry_run.allow_policy.name", "istio_dry_run_allow_shadow_effective_policy_id"),
                dryRun("istio.authorization.dry_run.allow_policy.result", "istio_dry_run_allow_shadow_engine_result"),
                dryRun("istio.authorization.dry_run.deny_policy.name", "istio_dry_run_deny_shadow_effective_policy_id"),
                dryRun("istio.authorization.dry_run.deny_policy.result", "istio_dry_run_deny_shadow_engine_result"));
    }

    private static CustomTag literal(String tag, String value) {
        return CustomTag.newBuilder().setTag(tag).setLiteral(CustomTag.Literal.newBuilder().setValue(value)).build();
    }

    private static CustomTag dryRun(String tag, String key) {
        return CustomTag.newBuilder().setTag(tag).setMetadata(CustomTag.Metadata.newBuilder()
                .setKind(MetadataKind.newBuilder().setRequest(MetadataKind.Request.getDefaultInstance()))
                .setMetadataKey(MetadataKey.newBuilder().setKey("envoy.filters.http.rbac")
                        .addPath(MetadataKey.PathSegment.newBuilder().setKey(key)))).build();
    }
}
