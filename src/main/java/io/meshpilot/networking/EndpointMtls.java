package io.meshpilot.networking;

import io.meshpilot.api.networking.v1alpha3.ClientTLSSettings;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.config.Config;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Whether a client of one outbound cluster will speak Istio mTLS to an endpoint (istiod's
 * mtlsChecker, pilot/pkg/xds/endpoints/mtls_checker.go): the DestinationRule's TLS mode for the
 * service port decides when it sets one (the subset's, else the host's; a port-level entry's TLS
 * over the policy's own), and only ISTIO_MUTUAL is mTLS; otherwise the endpoint must have a
 * sidecar ({@code tlsMode: istio}) and its workload's PeerAuthentication must not DISABLE mTLS
 * on the endpoint's port. An endpoint it says no to is sent without Istio mTLS metadata and is
 * never reached through an east-west gateway (which routes by the mTLS SNI).
 */
final class EndpointMtls {
    /** The rule's mode for the cluster's port, null when it sets none. */
    private final ClientTLSSettings.TLSmode ruleMode;
    private final List<Config> peerAuthentications;
    private final String rootNamespace;
    /** Workloads of one namespace and labels share a policy: composed once per cluster build. */
    private final Map<List<Object>, PeerAuthenticationPolicy> policies = new HashMap<>();

    private EndpointMtls(ClientTLSSettings.TLSmode ruleMode, List<Config> peerAuthentications, String rootNamespace) {
        this.ruleMode = ruleMode;
        this.peerAuthentications = peerAuthentications;
        this.rootNamespace = rootNamespace;
    }

    static EndpointMtls of(PushContext push, ProxyScope scope, ClusterNames.Outbound cluster) {
        DestinationRule rule = push.destinationRule(cluster.host(), scope).map(c -> (DestinationRule) c.spec())
                .orElse(null);
        return new EndpointMtls(ruleMode(rule, cluster.subset(), cluster.port()), push.peerAuthentications(),
                push.rootNamespace());
    }

    /** Whether the client will use Istio mTLS to {@code e}. */
    boolean enabled(IstioEndpoint e) {
        if (ruleMode != null) {
            return ruleMode == ClientTLSSettings.TLSmode.ISTIO_MUTUAL;
        }
        if (!IstioEndpoint.TLS_ISTIO.equals(e.tlsMode())) {
            return false;
        }
        PeerAuthenticationPolicy policy = policies.computeIfAbsent(List.of(e.namespace(), e.labels()),
                k -> PeerAuthenticationPolicy.forWorkload(peerAuthentications, rootNamespace, e.namespace(),
                        e.labels()));
        return policy.mode(e.endpointPort()) != Mode.DISABLE;
    }

    /** istiod's tlsModeForDestinationRule: the subset's mode for the port, else the host's. */
    private static ClientTLSSettings.TLSmode ruleMode(DestinationRule rule, String subset, int port) {
        if (rule == null) {
            return null;
        }
        if (!subset.isEmpty()) {
            for (Subset s : rule.getSubsetsList()) {
                if (s.getName().equals(subset)) {
                    ClientTLSSettings.TLSmode mode = s.hasTrafficPolicy() ? policyMode(s.getTrafficPolicy(), port) : null;
                    return mode != null ? mode : policyMode(rule.getTrafficPolicy(), port);
                }
            }
            return null;
        }
        return policyMode(rule.getTrafficPolicy(), port);
    }

    /** istiod's trafficPolicyTLSModeForPort: the port's entry's TLS mode, else the policy's, else null. */
    private static ClientTLSSettings.TLSmode policyMode(TrafficPolicy policy, int port) {
        for (TrafficPolicy.PortTrafficPolicy p : policy.getPortLevelSettingsList()) {
            if (p.getPort().getNumber() == port && p.hasTls()) {
                return p.getTls().getMode();
            }
        }
        return policy.hasTls() ? policy.getTls().getMode() : null;
    }
}
