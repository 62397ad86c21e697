package io.meshpilot.model;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.config.Config;
import io.meshpilot.config.GeneratedConfigAnnotations;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Folds the DestinationRules generated from Gateway API backend policies (BackendTLSPolicy; they
 * carry {@code internal.istio.io/parents}, which users cannot set) into the user's DestinationRule
 * for the same host, as istiod's mergeDestinationRule does with mergeBackendPolicyTrafficPolicy
 * (pilot/pkg/model/destination_rule.go): the user's fields win and the policy fills only those the
 * user leaves unset, whichever rule is older. As in istiod, only rules of one namespace with the
 * same exportTo and the same workload selector (or none) merge; any other generated rule stays a
 * rule of its own.
 */
final class BackendPolicyDestinationRules {
    private BackendPolicyDestinationRules() {
    }

    /**
     * {@code rules} (one host's DestinationRules, oldest first) with each generated rule merged into
     * the oldest user rule it can merge with, which keeps its place; {@code meshDefaultExportTo}
     * stands for an empty exportTo.
     */
    static List<Config> merge(List<Config> rules, List<String> meshDefaultExportTo) {
        if (rules.size() < 2 || rules.stream().noneMatch(BackendPolicyDestinationRules::generated)) {
            return rules;
        }
        List<Config> out = new ArrayList<>(rules);
        for (int i = 0; i < rules.size(); i++) {
            Config policy = rules.get(i);
            int user = generated(policy) ? indexOfMergeable(out, policy, meshDefaultExportTo) : -1;
            if (user >= 0) {
                out.set(user, out.get(user).withSpec(merged(spec(out.get(user)), spec(policy))));
                out.set(i, null);
            }
        }
        out.removeIf(Objects::isNull);
        return out;
    }

    static boolean generated(Config rule) {
        return rule.annotations().containsKey(GeneratedConfigAnnotations.PARENTS);
    }

    private static int indexOfMergeable(List<Config> candidates, Config policy, List<String> meshDefaultExportTo) {
        for (int i = 0; i < candidates.size(); i++) {
            Config user = candidates.get(i);
            if (user != null && !generated(user) && user.namespace().equals(policy.namespace())
                    && exportTo(user, meshDefaultExportTo).equals(exportTo(policy, meshDefaultExportTo))
                    && spec(user).getWorkloadSelector().getMatchLabelsMap()
                    .equals(spec(policy).getWorkloadSelector().getMatchLabelsMap())) {
                return i;
            }
        }
        return -1;
    }

    /** istiod's exportTo set: the mesh default when unset, {@code .} as the rule's own namespace, else public. */
    private static Set<String> exportTo(Config rule, List<String> meshDefault) {
        List<String> to = spec(rule).getExportToList().isEmpty() ? meshDefault : spec(rule).getExportToList();
        if (to.isEmpty()) {
            return Set.of("*");
        }
        return to.stream().map(ns -> ns.equals(".") ? rule.namespace() : ns).collect(Collectors.toSet());
    }

    private static DestinationRule spec(Config rule) {
        return (DestinationRule) rule.spec();
    }

    private static DestinationRule merged(DestinationRule user, DestinationRule policy) {
        DestinationRule.Builder out = user.toBuilder();
        Set<String> names = new HashSet<>();
        user.getSubsetsList().forEach(s -> names.add(s.getName()));
        for (Subset s : policy.getSubsetsList()) {
            if (names.add(s.getName())) {
                out.addSubsets(s);
            }
        }
        if (policy.hasTrafficPolicy()) {
            out.setTrafficPolicy(user.hasTrafficPolicy()
                    ? trafficPolicy(user.getTrafficPolicy(), policy.getTrafficPolicy()) : policy.getTrafficPolicy());
        }
        return out.build();
    }

    /** istiod's mergeBackendPolicyTrafficPolicy: the policy's settings under the user's, port by port. */
    private static TrafficPolicy trafficPolicy(TrafficPolicy user, TrafficPolicy policy) {
        TrafficPolicy.Builder out = user.toBuilder();
        fillUnset(out, policy.toBuilder().clearPortLevelSettings().build());
        out.clearPortLevelSettings().addAllPortLevelSettings(portLevelSettings(user, policy));
        return out.build();
    }

    /** istiod's mergeBackendPolicyPortLevelSettings: a port both set gets the policy's fields the user's lacks; the policy's other ports are added. */
    private static List<TrafficPolicy.PortTrafficPolicy> portLevelSettings(TrafficPolicy user, TrafficPolicy policy) {
        Map<Integer, TrafficPolicy.PortTrafficPolicy> byPort = new LinkedHashMap<>();
        user.getPortLevelSettingsList().forEach(p -> byPort.putIfAbsent(p.getPort().getNumber(), p));
        List<TrafficPolicy.PortTrafficPolicy> out = new ArrayList<>(user.getPortLevelSettingsList());
        for (TrafficPolicy.PortTrafficPolicy fromPolicy : policy.getPortLevelSettingsList()) {
            TrafficPolicy.PortTrafficPolicy own = byPort.get(fromPolicy.getPort().getNumber());
            if (own == null) {
                out.add(fromPolicy);
                continue;
            }
            TrafficPolicy.PortTrafficPolicy.Builder filled = own.toBuilder();
            fillUnset(filled, fromPolicy);
            out.set(out.indexOf(own), filled.build());
        }
        return out;
    }

    /**
     * Sets on {@code own} each singular field {@code policy} sets and {@code own} does not. istiod
     * checks each field by name; here every singular field of TrafficPolicy and PortTrafficPolicy
     * (all messages: a port entry's port is the same on both sides) is such a setting.
     */
    private static void fillUnset(Message.Builder own, Message policy) {
        for (Map.Entry<FieldDescriptor, Object> field : policy.getAllFields().entrySet()) {
            if (!field.getKey().isRepeated() && !own.hasField(field.getKey())) {
                own.setField(field.getKey(), field.getValue());
            }
        }
    }
}
