package io.meshpilot.model;

import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.config.Config;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The EnvoyFilters of one push by namespace, converted once (istiod's envoyFiltersByNamespace),
 * and which of them apply to a proxy (istiod's PushContext.EnvoyFilters): those of the root
 * namespace and of the proxy's namespace whose workloadSelector picks it (none: every workload
 * there); an EnvoyFilter with targetRefs never applies to a sidecar, and applies to a
 * Kubernetes Gateway deployment ({@code gateway.networking.k8s.io/gateway-name}) when a
 * reference names that Gateway in the filter's own namespace.
 */
public final class EnvoyFilterIndex {
    /** istiod's EnvoyFilter status metric; here one entry per config patch that was not applied. */
    public static final PushMetric ENVOY_FILTER_STATUS = PushMetric.of("pilot_envoy_filter_status",
            "EnvoyFilter config patches that were not applied (invalid Envoy config or unsupported applyTo).");
    static final String GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
    public static final EnvoyFilterIndex EMPTY = new EnvoyFilterIndex(Map.of(), PushDiagnostics.EMPTY);

    private final Map<String, List<EnvoyFilterWrapper>> byNamespace;
    private final PushDiagnostics problems;

    private EnvoyFilterIndex(Map<String, List<EnvoyFilterWrapper>> byNamespace, PushDiagnostics problems) {
        this.byNamespace = byNamespace;
        this.problems = problems;
    }

    /** Converts {@code envoyFilters}; the patches left out are {@link #problems()}. */
    public static EnvoyFilterIndex of(List<Config> envoyFilters) {
        if (envoyFilters.isEmpty()) {
            return EMPTY;
        }
        PushDiagnostics.Builder problems = PushDiagnostics.builder();
        Map<String, List<EnvoyFilterWrapper>> byNs = new HashMap<>();
        for (Config c : envoyFilters) {
            EnvoyFilterWrapper w = EnvoyFilterWrapper.of(c,
                    (where, reason) -> problems.add(ENVOY_FILTER_STATUS, where, reason));
            byNs.computeIfAbsent(c.namespace(), n -> new ArrayList<>()).add(w);
        }
        Map<String, List<EnvoyFilterWrapper>> sorted = new HashMap<>();
        byNs.forEach((ns, l) -> {
            l.sort(Comparator.comparingInt(EnvoyFilterWrapper::priority)
                    .thenComparing(EnvoyFilterWrapper::created).thenComparing(EnvoyFilterWrapper::name));
            sorted.put(ns, List.copyOf(l));
        });
        return new EnvoyFilterIndex(Map.copyOf(sorted), problems.build());
    }

    /** The config patches that could not be converted, for the push status. */
    public PushDiagnostics problems() {
        return problems;
    }

    public boolean isEmpty() {
        return byNamespace.isEmpty();
    }

    /** The patches that apply to {@code proxy}, in istiod's order; {@link MergedEnvoyFilters#NONE} when none. */
    public MergedEnvoyFilters forProxy(Proxy proxy, String rootNamespace) {
        if (byNamespace.isEmpty()) {
            return MergedEnvoyFilters.NONE;
        }
        List<EnvoyFilterWrapper> matched = new ArrayList<>();
        for (EnvoyFilterWrapper w : byNamespace.getOrDefault(rootNamespace, List.of())) {
            if (attaches(w, proxy)) {
                matched.add(w);
            }
        }
        if (!proxy.namespace().equals(rootNamespace)) {
            for (EnvoyFilterWrapper w : byNamespace.getOrDefault(proxy.namespace(), List.of())) {
                if (attaches(w, proxy)) {
                    matched.add(w);
                }
            }
        }
        if (matched.isEmpty()) {
            return MergedEnvoyFilters.NONE;
        }
        // istiod: priority, then the root namespace's first, then the oldest, then name.namespace
        matched.sort(Comparator.comparingInt(EnvoyFilterWrapper::priority)
                .thenComparing((EnvoyFilterWrapper w) -> w.namespace().equals(rootNamespace) ? 0 : 1)
                .thenComparing(EnvoyFilterWrapper::created)
                .thenComparing(w -> w.name() + "." + w.namespace()));
        Map<ApplyTo, List<EnvoyFilterWrapper.ConfigPatch>> byApplyTo = new EnumMap<>(ApplyTo.class);
        StringJoiner key = new StringJoiner(",");
        for (EnvoyFilterWrapper w : matched) {
            StringBuilder applied = new StringBuilder();
            for (EnvoyFilterWrapper.ConfigPatch p : w.patches()) {
                if (p.matches(proxy)) {
                    byApplyTo.computeIfAbsent(p.applyTo(), a -> new ArrayList<>()).add(p);
                    applied.append(applied.isEmpty() ? "" : " ").append(p.index());
                }
            }
            if (!applied.isEmpty()) {
                key.add(w.namespace() + "/" + w.name() + "@" + w.version() + "[" + applied + "]");
            }
        }
        return byApplyTo.isEmpty() ? MergedEnvoyFilters.NONE : new MergedEnvoyFilters(byApplyTo, key.toString());
    }

    /** istiod's WorkloadPolicyMatcher.ShouldAttachPolicy for a sidecar or gateway. */
    static boolean attaches(EnvoyFilterWrapper w, Proxy proxy) {
        String gatewayName = proxy.labels().get(GATEWAY_NAME_LABEL);
        if (w.targetRefs().isEmpty()) {
            return w.selector() == null || LabelSelector.subsetOf(w.selector(), proxy.labels());
        }
        if (gatewayName == null || !w.namespace().equals(proxy.namespace())) {
            return false;
        }
        for (PolicyTargetReference ref : w.targetRefs()) {
            if (ref.getGroup().equals("gateway.networking.k8s.io") && ref.getKind().equals("Gateway")
                    && ref.getName().equals(gatewayName)) {
                return true;
            }
        }
        return false;
    }
}
