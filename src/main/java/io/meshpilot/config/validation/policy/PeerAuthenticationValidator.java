package io.meshpilot.config.validation.policy;

import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's ValidatePeerAuthentication (plus the CRD's rules): port-level mTLS only on a policy
 * that selects workloads by label, port numbers 1-65535, known modes, a well-formed selector.
 */
public final class PeerAuthenticationValidator implements Validator {
    @Override
    public void validate(Config config, Validation v) {
        PolicyChecks.noDryRun(config, v);
        PeerAuthentication pa = (PeerAuthentication) config.spec();
        Validation spec = v.at("spec");
        PolicyChecks.targeting(spec, pa.hasSelector() ? pa.getSelector() : null, null, List.of());
        if (pa.hasMtls()) {
            mode(spec.at("mtls"), pa.getMtls());
        }
        Map<Integer, PeerAuthentication.MutualTLS> ports = new TreeMap<>(pa.getPortLevelMtlsMap());
        if (ports.isEmpty()) {
            return;
        }
        Validation portLevel = spec.at("portLevelMtls");
        if (pa.getSelector().getMatchLabelsCount() == 0) {
            portLevel.error("port-level mTLS needs a workload selector with labels; "
                    + "a mesh- or namespace-wide policy cannot have it");
        }
        ports.forEach((port, mtls) -> {
            Validation at = portLevel.at("[" + Integer.toUnsignedString(port) + "]");
            if (port == 0 || Integer.compareUnsigned(port, 65535) > 0) {
                at.error("port " + Integer.toUnsignedString(port) + " must be in the range 1..65535");
            }
            mode(at, mtls);
        });
    }

    private static void mode(Validation v, PeerAuthentication.MutualTLS mtls) {
        PolicyChecks.knownEnum(v.at("mode"), PeerAuthentication.MutualTLS.Mode.getDescriptor(), mtls.getModeValue());
    }
}
