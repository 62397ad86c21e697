package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1beta1.ProxyConfig;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;

/** istiod's ProxyConfig rules: a valid workload selector and a non-negative concurrency. */
public final class ProxyConfigValidator implements Validator {

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        ProxyConfig pc = (ProxyConfig) config.spec();
        Validation spec = v.at("spec");
        if (pc.hasSelector()) {
            NetworkingChecks.workloadSelector(spec.at("selector").at("matchLabels"), pc.getSelector().getMatchLabelsMap(),
                    "workload selector without labels selects every workload");
        }
        if (pc.getConcurrency().getValue() < 0) {
            spec.at("concurrency").error("concurrency must be 0 or more (0: one worker per CPU)");
        }
    }
}
