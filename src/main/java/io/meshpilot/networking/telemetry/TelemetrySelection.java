package io.meshpilot.networking.telemetry;

import io.meshpilot.api.telemetry.v1alpha1.AccessLogging;
import io.meshpilot.api.telemetry.v1alpha1.Metrics;
import io.meshpilot.api.telemetry.v1alpha1.Telemetry;
import io.meshpilot.api.telemetry.v1alpha1.Tracing;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.List;

/**
 * The Telemetries that apply to one proxy, as istiod's applicableTelemetries finds them: the
 * root namespace's namespace-wide one, then the proxy namespace's namespace-wide one, then every
 * Telemetry of the proxy's namespace whose selector or targetRefs select the proxy (oldest
 * first). "Namespace-wide" is the oldest one without selector and targetRefs. Later entries
 * override earlier ones when merged.
 *
 * @param key       names of the Telemetries that applied (root, namespace, workload), for cache keys
 * @param logging   each applicable Telemetry's accessLogging list, in precedence order
 * @param tracing   every applicable tracing entry, in precedence order
 * @param metrics   every applicable metrics entry, in precedence order
 */
public record TelemetrySelection(String key, List<List<AccessLogging>> logging, List<Tracing> tracing,
                                 List<Metrics> metrics) {
    public static final TelemetrySelection NONE = new TelemetrySelection("", List.of(), List.of(), List.of());

    public TelemetrySelection {
        logging = List.copyOf(logging);
        tracing = List.copyOf(tracing);
        metrics = List.copyOf(metrics);
    }

    public static TelemetrySelection forProxy(Proxy proxy, PushContext push) {
        if (push.telemetries().isEmpty()) {
            return NONE;
        }
        Applicable applicable = applicable(proxy, push);
        List<List<AccessLogging>> logging = new ArrayList<>();
        List<Tracing> tracing = new ArrayList<>();
        List<Metrics> metrics = new ArrayList<>();
        StringBuilder key = new StringBuilder();
        if (applicable.root() != null) {
            key.append("root=").append(applicable.root().name());
            add(applicable.root(), logging, tracing, metrics);
        }
        if (applicable.namespace() != null) {
            key.append("|ns=").append(applicable.namespace().name());
            add(applicable.namespace(), logging, tracing, metrics);
        }
        for (Config c : applicable.workload()) {
            key.append("|workload=").append(c.name());
            add(c, logging, tracing, metrics);
        }
        return new TelemetrySelection(key.toString(), logging, tracing, metrics);
    }

    /**
     * Which Telemetries apply to {@code proxy} and at what level (istiod's telemetryKey, shown
     * by /debug/telemetryz?proxyID=): the root namespace's namespace-wide one, the proxy
     * namespace's, and those of the proxy's namespace that select it; null where none.
     */
    public record Applicable(Config root, Config namespace, List<Config> workload) {
        public Applicable {
            workload = List.copyOf(workload);
        }
    }

    public static Applicable applicable(Proxy proxy, PushContext push) {
        List<Config> all = push.telemetries();
        String root = push.rootNamespace();
        Config nsWide = proxy.namespace().equals(root) ? null : namespaceWide(all, proxy.namespace());
        List<Config> workload = new ArrayList<>();
        for (Config c : all) {
            Telemetry t = (Telemetry) c.spec();
            if (c.namespace().equals(proxy.namespace()) && !isNamespaceWide(t)
                    && PolicyAttachment.attaches(t.getSelector(), refs(t), c.namespace(), proxy)) {
                workload.add(c);
            }
        }
        return new Applicable(namespaceWide(all, root), nsWide, workload);
    }

    /**
     * Whether some Telemetry selects workloads by labels or targetRefs: then two proxies of one
     * scope may get different listeners.
     */
    public static boolean dependsOnWorkload(PushContext push) {
        return push.telemetries().stream().anyMatch(c -> !isNamespaceWide((Telemetry) c.spec()));
    }

    private static void add(Config c, List<List<AccessLogging>> logging, List<Tracing> tracing,
                            List<Metrics> metrics) {
        Telemetry t = (Telemetry) c.spec();
        if (t.getAccessLoggingCount() > 0) {
            logging.add(t.getAccessLoggingList());
        }
        tracing.addAll(t.getTracingList());
        metrics.addAll(t.getMetricsList());
    }

    private static Config namespaceWide(List<Config> all, String namespace) {
        for (Config c : all) {
            if (c.namespace().equals(namespace) && isNamespaceWide((Telemetry) c.spec())) {
                return c;
            }
        }
        return null;
    }

    static boolean isNamespaceWide(Telemetry t) {
        return t.getSelector().getMatchLabelsCount() == 0 && refs(t).isEmpty();
    }

    private static List<PolicyTargetReference> refs(Telemetry t) {
        return PolicyAttachment.refs(t.getTargetRefsList(), t.getTargetRef(), t.hasTargetRef());
    }
}
