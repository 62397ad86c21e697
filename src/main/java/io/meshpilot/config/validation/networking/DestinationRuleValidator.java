package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.HashMap;
import java.util.Map;

/**
 * istiod's DestinationRule rules: a valid (wildcard) host, the traffic policy and each subset's
 * (unique DNS-1123 names, valid labels), exportTo (a rule with a workload selector only in its
 * own namespace) and the workload selector.
 */
public final class DestinationRuleValidator implements Validator {

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        DestinationRule dr = (DestinationRule) config.spec();
        Validation spec = v.at("spec");
        NetworkingChecks.wildcardDomain(spec.at("host"), dr.getHost());
        if (dr.hasTrafficPolicy()) {
            TrafficPolicyChecks.trafficPolicy(spec.at("trafficPolicy"), config.namespace(), dr.getTrafficPolicy());
        }
        Map<String, Integer> names = new HashMap<>();
        for (int i = 0; i < dr.getSubsetsCount(); i++) {
            Subset s = dr.getSubsets(i);
            Validation at = spec.at("subsets", i);
            Integer first = names.putIfAbsent(s.getName(), i);
            if (first != null) {
                at.at("name").error("duplicate subset name \"" + s.getName() + "\" (also subsets[" + first + "])");
            }
            if (s.getName().isEmpty()) {
                at.at("name").error("subset name must not be empty");
            } else if (!NetworkingChecks.isDnsLabel(s.getName())) {
                at.at("name").error("subset name \"" + s.getName() + "\" is not a DNS-1123 label");
            }
            NetworkingChecks.labels(at.at("labels"), s.getLabelsMap());
            if (s.hasTrafficPolicy()) {
                TrafficPolicyChecks.trafficPolicy(at.at("trafficPolicy"), config.namespace(), s.getTrafficPolicy());
            }
        }
        NetworkingChecks.exportTo(spec.at("exportTo"), config.namespace(), dr.getExportToList(), false,
                dr.hasWorkloadSelector());
        if (dr.hasWorkloadSelector()) {
            NetworkingChecks.workloadSelector(spec.at("workloadSelector").at("matchLabels"),
                    dr.getWorkloadSelector().getMatchLabelsMap(), "workload selector without labels selects every workload");
        }
    }
}
