package io.meshpilot.inject;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.Map;

/**
 * The {@code values} key of the {@code istio-sidecar-injector} ConfigMap (Helm's merged
 * values, as JSON) laid over the istiod chart's defaults for the keys the default
 * {@code sidecar} template reads. Lookups are by dotted path ({@code global.proxy.statusPort}).
 */
public final class InjectionValues {
    /** istiod chart defaults (manifests/charts/istio-control/istio-discovery/values.yaml) the template reads. */
    private static final String CHART_DEFAULTS = """
            {"revision":"",
             "pilot":{"cni":{"enabled":false,"provider":"default"}},
             "istio_cni":{"enabled":false},
             "sidecarInjectorWebhook":{"rewriteAppHTTPProbe":true},
             "global":{"hub":"docker.io/istio","tag":"1.28.0","imagePullPolicy":"","imagePullSecrets":[],
               "istioNamespace":"istio-system","logAsJson":false,"nativeNftables":false,
               "logging":{"level":"default:info"},
               "proxy":{"image":"proxyv2","autoInject":"enabled","clusterDomain":"cluster.local",
                 "componentLogLevel":"misc:error","excludeInboundPorts":"","includeInboundPorts":"*",
                 "includeIPRanges":"*","excludeIPRanges":"","includeOutboundPorts":"","excludeOutboundPorts":"",
                 "logLevel":"warning","outlierLogPath":"","privileged":false,
                 "readinessFailureThreshold":4,"readinessInitialDelaySeconds":0,"readinessPeriodSeconds":15,
                 "startupProbe":{"enabled":true,"failureThreshold":600},
                 "resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"2000m","memory":"1024Mi"}},
                 "statusPort":15020,"tracer":"none","holdApplicationUntilProxyStarts":false},
               "proxy_init":{"image":"proxyv2","forceApplyIptables":false},
               "caAddress":"","meshID":"","multiCluster":{"clusterName":""},"network":"",
               "pilotCertProvider":"istiod","sds":{"token":{"aud":"istio-ca"}},"sts":{"servicePort":0},
               "caName":"","trustDomain":"","mountMtlsCerts":false,
               "waypoint":{"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"cpu":"2","memory":"1Gi"}},
                 "affinity":{},"topologySpreadConstraints":[],"nodeSelector":{},"tolerations":[]}}}
            """;

    private final JsonObject tree;

    private InjectionValues(JsonObject tree) {
        this.tree = tree;
    }

    /** The chart defaults alone (embedded mode, or a ConfigMap without {@code values}). */
    public static InjectionValues defaults() {
        return new InjectionValues(JsonParser.parseString(CHART_DEFAULTS).getAsJsonObject());
    }

    /**
     * The given values JSON over the chart defaults.
     *
     * @throws IllegalArgumentException when the text is not a JSON object (the message says where)
     */
    public static InjectionValues parse(String json) {
        JsonObject merged = JsonParser.parseString(CHART_DEFAULTS).getAsJsonObject();
        if (json == null || json.isBlank()) {
            return new InjectionValues(merged);
        }
        JsonElement given;
        try {
            given = JsonParser.parseString(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("values: not JSON: " + e.getMessage(), e);
        }
        if (!given.isJsonObject()) {
            throw new IllegalArgumentException("values: expected a JSON object, got " + given);
        }
        overlay(merged, given.getAsJsonObject());
        return new InjectionValues(merged);
    }

    /** The same values with some paths replaced (tests and ENV-style overrides). */
    public InjectionValues with(Map<String, Object> paths) {
        JsonObject copy = tree.deepCopy();
        paths.forEach((path, value) -> {
            String[] parts = path.split("\\.");
            JsonObject o = copy;
            for (int i = 0; i < parts.length - 1; i++) {
                if (!o.has(parts[i]) || !o.get(parts[i]).isJsonObject()) {
                    o.add(parts[i], new JsonObject());
                }
                o = o.getAsJsonObject(parts[i]);
            }
            o.add(parts[parts.length - 1], new Gson().toJsonTree(value));
        });
        return new InjectionValues(copy);
    }

    /** Helm's coalescing: maps merged key by key, a null removing the chart's default (so {@code cpu: null} sets no CPU). */
    private static void overlay(JsonObject base, JsonObject top) {
        for (var e : top.entrySet()) {
            JsonElement b = base.get(e.getKey());
            if (e.getValue().isJsonNull()) {
                base.remove(e.getKey());
            } else if (b != null && b.isJsonObject() && e.getValue().isJsonObject()) {
                overlay(b.getAsJsonObject(), e.getValue().getAsJsonObject());
            } else {
                base.add(e.getKey(), e.getValue());
            }
        }
    }

    /** The element at a dotted path, or JSON null. */
    public JsonElement get(String path) {
        JsonElement e = tree;
        for (String p : path.split("\\.")) {
            if (e == null || !e.isJsonObject()) {
                return JsonNull.INSTANCE;
            }
            e = e.getAsJsonObject().get(p);
        }
        return e == null ? JsonNull.INSTANCE : e;
    }

    /** The value at a path as Go's template prints it ("" when absent or null). */
    public String string(String path) {
        JsonElement e = get(path);
        if (e.isJsonNull()) {
            return "";
        }
        if (e.isJsonPrimitive()) {
            var p = e.getAsJsonPrimitive();
            if (p.isNumber()) {
                double d = p.getAsDouble();
                return d == Math.rint(d) ? Long.toString((long) d) : p.getAsString();
            }
            return p.getAsString();
        }
        return e.toString();
    }

    /** Go template truthiness: absent, null, false, 0, "" and empty collections are false. */
    public boolean truthy(String path) {
        JsonElement e = get(path);
        if (e.isJsonNull()) {
            return false;
        }
        if (e.isJsonPrimitive()) {
            var p = e.getAsJsonPrimitive();
            if (p.isBoolean()) {
                return p.getAsBoolean();
            }
            if (p.isNumber()) {
                return p.getAsDouble() != 0;
            }
            return !p.getAsString().isEmpty();
        }
        return e.isJsonObject() ? !e.getAsJsonObject().isEmpty() : !e.getAsJsonArray().isEmpty();
    }

    /** CNI as istiod's chart merges it: {@code pilot.cni.enabled} or the older {@code istio_cni.enabled}. */
    public boolean cniEnabled() {
        return truthy("pilot.cni.enabled") || truthy("istio_cni.enabled");
    }
}
