package io.meshpilot.model;

import io.meshpilot.api.extensions.v1alpha1.WasmPlugin;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.telemetry.v1alpha1.Telemetry;
import io.meshpilot.config.Config;

/**
 * Telemetry and WasmPlugin settings that plain Envoy cannot apply, recorded in the push status
 * (and their gauges) instead of being dropped silently:
 * <ul>
 * <li>a metrics provider of a Telemetry that is not a {@code prometheus} extension provider
 *     (stackdriver, or a name the mesh config lacks): istiod writes {@code istio.stats} for
 *     prometheus providers only and skips the others without a word;
 * <li>access logging or tracing providers that name no usable extension provider (istiod
 *     leaves them out with a log line);
 * <li>a tracing custom tag from a {@code formatter} or {@code disableContextPropagation} of a
 *     Telemetry (Istio 1.30): istiod writes Envoy's {@code CustomTag.value} and
 *     {@code no_context_propagation} for proxies that take them, fields the Envoy API MeshPilot
 *     is built with (java-control-plane 1.0.49) does not have; left out, as istiod does for older
 *     proxies;
 * <li>a WasmPlugin whose module is an {@code oci://} image (the default scheme): istiod leaves
 *     the pull to the istio-agent next to Envoy, which rewrites the ECDS resource to a local
 *     file; plain Envoy has no agent, so the plugin is not put into its listeners.
 * </ul>
 */
final class ExtensionChecks {
    static final PushMetric TELEMETRY_METRICS_UNSUPPORTED = PushMetric.of("pilot_telemetry_metrics_unsupported",
            "Telemetry metrics providers that are not prometheus extension providers; istiod writes no stats "
                    + "filter for them.");
    static final PushMetric TELEMETRY_TRACING_UNSUPPORTED = PushMetric.of("pilot_telemetry_tracing_unsupported",
            "Telemetry tracing settings (formatter custom tags, disableContextPropagation) the Envoy API MeshPilot "
                    + "builds with cannot express; left out.");
    static final PushMetric WASM_OCI_UNSUPPORTED = PushMetric.of("pilot_wasm_oci_unsupported",
            "WasmPlugins with an oci:// module, which needs the istio-agent to pull it; not applied to plain Envoy.");

    static final PushMetric WASM_REMOTE_NEEDS_CLUSTER = PushMetric.of("pilot_wasm_remote_fetch_cluster",
            "WasmPlugins with an http(s) module, fetched by Envoy through cluster \"_\" as istiod writes it.");

    static final PushMetric TELEMETRY_PROVIDER_UNUSABLE = PushMetric.of("pilot_telemetry_provider_unusable",
            "Telemetry providers that name no extension provider of the right kind; istiod leaves them out.");

    private ExtensionChecks() {
    }

    static void run(PushContext push, PushDiagnostics.Builder out) {
        for (Config c : push.telemetries()) {
            Telemetry t = (Telemetry) c.spec();
            providers(push, c, t, out);
            tracing(c, t, out);
            metricsProviders(push, c, t, out);
        }
        for (Config c : push.wasmPlugins()) {
            WasmPlugin w = (WasmPlugin) c.spec();
            if (isOci(w.getUrl())) {
                out.add(WASM_OCI_UNSUPPORTED, name(c), "WasmPlugin " + name(c) + ": url " + w.getUrl()
                        + " is an OCI image, which istiod leaves to the istio-agent to pull; plain Envoy cannot "
                        + "load it: not applied (use file://, http:// or https:// with sha256)");
            } else if (!w.getUrl().regionMatches(true, 0, "file://", 0, 7)) {
                out.add(WASM_REMOTE_NEEDS_CLUSTER, name(c), "WasmPlugin " + name(c) + ": url " + w.getUrl()
                        + " is fetched as istiod writes it, through cluster \"_\", which istio-agent provides; "
                        + "plain Envoy needs a static cluster \"_\" reaching that host in its bootstrap");
            }
        }
    }

    /**
     * Access logging and tracing providers that istiod drops with a log line only: a name no
     * extension provider has, or a provider of the wrong kind (MeshPilot logs through
     * envoyFileAccessLog and envoyOtelAls, traces through zipkin, opentelemetry and datadog).
     */
    private static void providers(PushContext push, Config c, Telemetry t, PushDiagnostics.Builder out) {
        for (var logging : t.getAccessLoggingList()) {
            for (var ref : logging.getProvidersList()) {
                var p = provider(push, ref.getName());
                if (p == null || !(p.hasEnvoyFileAccessLog() || p.hasEnvoyOtelAls())) {
                    out.add(TELEMETRY_PROVIDER_UNUSABLE, name(c) + "|accessLogging|" + ref.getName(), "Telemetry "
                            + name(c) + ": access logging provider \"" + ref.getName() + "\" is "
                            + (p == null ? "no extension provider of the mesh config"
                            : "no envoyFileAccessLog or envoyOtelAls provider") + ": left out");
                }
            }
        }
        for (var tracing : t.getTracingList()) {
            for (var ref : tracing.getProvidersList()) {
                var p = provider(push, ref.getName());
                if (p == null || !(p.hasZipkin() || p.hasOpentelemetry() || p.hasDatadog())) {
                    out.add(TELEMETRY_PROVIDER_UNUSABLE, name(c) + "|tracing|" + ref.getName(), "Telemetry " + name(c)
                            + ": tracing provider \"" + ref.getName() + "\" is " + (p == null
                            ? "no extension provider of the mesh config" : "no zipkin, opentelemetry or datadog provider")
                            + ": left out");
                }
            }
        }
    }

    /** istiod's buildHTTPTelemetryFilter: a metrics provider other than prometheus gets no filter. */
    private static void metricsProviders(PushContext push, Config c, Telemetry t, PushDiagnostics.Builder out) {
        for (var metrics : t.getMetricsList()) {
            for (var ref : metrics.getProvidersList()) {
                var p = provider(push, ref.getName());
                if (p == null || !p.hasPrometheus()) {
                    out.add(TELEMETRY_METRICS_UNSUPPORTED, name(c) + "|metrics|" + ref.getName(), "Telemetry "
                            + name(c) + ": metrics provider \"" + ref.getName() + "\" is " + (p == null
                            ? "no extension provider of the mesh config" : "no prometheus provider")
                            + ": no stats filter for it (istiod writes istio.stats for prometheus providers only)");
                }
            }
        }
    }

    private static void tracing(Config c, Telemetry t, PushDiagnostics.Builder out) {
        String why = ": not applied; istiod writes it only for proxies of Istio %s and later, as Envoy's %s, which "
                + "the Envoy API MeshPilot builds with (java-control-plane 1.0.49) does not have";
        for (var tracing : t.getTracingList()) {
            tracing.getCustomTagsMap().forEach((tag, value) -> {
                if (value.hasFormatter()) {
                    out.add(TELEMETRY_TRACING_UNSUPPORTED, name(c) + "|customTags." + tag + ".formatter", "Telemetry "
                            + name(c) + ": tracing customTags." + tag + ".formatter" + why.formatted("1.29",
                            "CustomTag.value"));
                }
            });
            if (tracing.getDisableContextPropagation().getValue()) {
                out.add(TELEMETRY_TRACING_UNSUPPORTED, name(c) + "|disableContextPropagation", "Telemetry " + name(c)
                        + ": tracing disableContextPropagation" + why.formatted("1.30",
                        "HttpConnectionManager.Tracing.no_context_propagation"));
            }
        }
    }

    private static MeshConfig.ExtensionProvider provider(PushContext push, String name) {
        for (var p : push.mesh().getExtensionProvidersList()) {
            if (p.getName().equalsIgnoreCase(name)) {
                return p;
            }
        }
        return null;
    }

    /** istiod's scheme rule: a URL without a scheme is an OCI image reference. */
    static boolean isOci(String url) {
        int colon = url.indexOf("://");
        return colon < 0 || url.substring(0, colon).equalsIgnoreCase("oci");
    }

    private static String name(Config c) {
        return c.namespace() + "/" + c.name();
    }
}
