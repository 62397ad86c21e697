package io.meshpilot.config.validation.policy;

import com.google.protobuf.Descriptors.EnumDescriptor;
import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.api.type.v1beta1.WorkloadSelector;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the policy kinds share in istiod's validation: the workload selector, the Gateway-API
 * style target references (and that only one way of targeting is used), the dry-run
 * annotation, enum values outside the API, and lists that must not hold empty strings.
 */
public final class PolicyChecks {
    /** istiod's allowed target kinds, as canonical group / kind (the core group is "" or "core"). */
    private static final List<String> TARGET_KINDS = List.of("core/Service", "networking.istio.io/ServiceEntry",
            "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/GatewayClass");
    /** The CRD caps targetRefs at 16 entries and label values at 63 characters. */
    private static final int MAX_TARGET_REFS = 16;
    private static final int MAX_LABEL_VALUE = 63;

    public static final String DRY_RUN_ANNOTATION = "istio.io/dry-run";
    /** The spellings Go's strconv.ParseBool accepts. */
    private static final Set<String> GO_BOOLS = Set.of("1", "t", "T", "TRUE", "true", "True",
            "0", "f", "F", "FALSE", "false", "False");

    private PolicyChecks() {
    }

    /**
     * Selector, targetRef and targetRefs: at most one of them, each well formed. {@code spec}
     * is the view at "spec"; absent fields are passed as null / empty.
     */
    public static void targeting(Validation spec, WorkloadSelector selector, PolicyTargetReference targetRef,
                                 List<PolicyTargetReference> targetRefs) {
        boolean seen = false;
        if (selector != null) {
            seen = true;
        }
        if (targetRef != null) {
            if (seen) {
                spec.error("targetRef", "only one of selector, targetRef or targetRefs may be set");
            }
            seen = true;
        }
        if (!targetRefs.isEmpty() && seen) {
            spec.error("targetRefs", "only one of selector, targetRef or targetRefs may be set");
        }
        if (selector != null) {
            selector(spec.at("selector"), selector);
        }
        if (targetRef != null) {
            targetRef(spec.at("targetRef"), targetRef);
        }
        if (targetRefs.size() > MAX_TARGET_REFS) {
            spec.error("targetRefs", "at most " + MAX_TARGET_REFS + " target references are allowed, found "
                    + targetRefs.size());
        }
        for (int i = 0; i < targetRefs.size(); i++) {
            targetRef(spec.at("targetRefs", i), targetRefs.get(i));
        }
    }

    /** istiod's workload selector rules: no empty keys, no wildcards; no labels is only a warning. */
    public static void selector(Validation v, WorkloadSelector selector) {
        Map<String, String> labels = selector.getMatchLabelsMap();
        if (labels.isEmpty()) {
            v.warn("workload selector has no labels, so it selects every workload in the namespace");
            return;
        }
        Validation m = v.at("matchLabels");
        labels.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            Validation at = m.at("[" + e.getKey() + "]");
            if (e.getKey().isEmpty()) {
                at.error("label key must not be empty");
            } else if (e.getKey().contains("*")) {
                at.error("wildcard \"*\" is not supported in label key \"" + e.getKey() + "\"");
            }
            if (e.getValue().contains("*")) {
                at.error("wildcard \"*\" is not supported in label value \"" + e.getValue() + "\"");
            } else if (e.getValue().length() > MAX_LABEL_VALUE) {
                at.error("label value is longer than " + MAX_LABEL_VALUE + " characters");
            }
        });
    }

    /** A target reference: a name, no namespace (no cross-namespace references), an allowed kind. */
    public static void targetRef(Validation v, PolicyTargetReference ref) {
        if (ref.getName().isEmpty()) {
            v.error("name", "target reference name is required");
        }
        if (!ref.getNamespace().isEmpty()) {
            v.error("namespace", "cross-namespace target references are not supported; leave namespace unset");
        }
        String group = ref.getGroup().isEmpty() ? "core" : ref.getGroup();
        if (!TARGET_KINDS.contains(group + "/" + ref.getKind())) {
            v.error("kind",
                    "unsupported target kind \"" + ref.getGroup() + "/" + ref.getKind() + "\"; must be one of "
                            + TARGET_KINDS);
        }
    }

    /**
     * istiod's object-level rule: only AuthorizationPolicy may carry the dry-run annotation
     * (its own action/value checks live with that kind).
     */
    public static void noDryRun(Config config, Validation root) {
        if (config.annotations().containsKey(DRY_RUN_ANNOTATION)) {
            root.error("metadata.annotations[" + DRY_RUN_ANNOTATION + "]",
                    "annotation " + DRY_RUN_ANNOTATION + " is only supported on AuthorizationPolicy");
        }
    }

    public static boolean isGoBool(String s) {
        return GO_BOOLS.contains(s);
    }

    /** An enum field holding a number the API does not define (YAML allows numeric enum values). */
    public static void knownEnum(Validation v, EnumDescriptor type, int number) {
        if (type.findValueByNumber(number) == null) {
            v.error("unknown value " + number + "; expected one of "
                    + type.getValues().stream().map(d -> d.getName()).toList());
        }
    }

    /** Each entry must be a non-empty string; reports at {@code field[i]}. Returns whether all passed. */
    public static boolean noEmpty(Validation v, String field, List<String> values) {
        boolean ok = true;
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i).isEmpty()) {
                v.at(field, i).error("empty value is not allowed");
                ok = false;
            }
        }
        return ok;
    }
}
