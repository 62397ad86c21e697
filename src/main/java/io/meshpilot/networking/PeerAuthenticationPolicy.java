package io.meshpilot.networking;

import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.util.LabelSelector;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The inbound mutual TLS mode of one workload, composed from PeerAuthentications as istiod
 * does: the mesh-wide policy (root namespace, no selector) gives the base, PERMISSIVE when it
 * is missing or UNSET; a namespace-wide policy (the workload's namespace, no selector) and then
 * a workload policy (a selector matching the workload's labels) override it unless their mode
 * is UNSET. Of several policies at one level the oldest wins (creation time, then namespace and
 * name, as PushContext orders them). A policy with a selector in the root namespace applies to
 * no workload, as with istiod. Port-level modes come from the workload policy only and are keyed
 * by the workload (target) port; an UNSET port-level mode inherits the workload's mode. The
 * inbound listeners read it for the proxy's own workload, EDS for each endpoint's workload
 * (istiod's mtlsChecker: a workload that DISABLEs mTLS is not sent Istio mTLS).
 *
 * @param mode  the workload's mode (never UNSET)
 * @param ports port-level modes (never UNSET)
 */
public record PeerAuthenticationPolicy(Mode mode, Map<Integer, Mode> ports) {

    public PeerAuthenticationPolicy {
        ports = Map.copyOf(ports);
    }

    /** The mode on {@code port} of the workload. */
    public Mode mode(int port) {
        return ports.getOrDefault(port, mode);
    }

    /**
     * The policy for {@code proxy} from {@code policies} (all PeerAuthentications, oldest
     * first, as PushContext lists them).
     */
    public static PeerAuthenticationPolicy forProxy(List<Config> policies, String rootNamespace, Proxy proxy) {
        return forWorkload(policies, rootNamespace, proxy.namespace(), proxy.labels());
    }

    /**
     * The policy for the workload with {@code labels} in {@code workloadNamespace} from
     * {@code policies} (all PeerAuthentications, oldest first, as PushContext lists them).
     */
    public static PeerAuthenticationPolicy forWorkload(List<Config> policies, String rootNamespace,
                                                       String workloadNamespace, Map<String, String> labels) {
        Config mesh = null;
        Config namespace = null;
        Config workload = null;
        for (Config c : policies) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            boolean selects = pa.hasSelector() && !pa.getSelector().getMatchLabelsMap().isEmpty();
            if (!selects) {
                if (c.namespace().equals(rootNamespace) && mesh == null) {
                    mesh = c;
                }
                if (c.namespace().equals(workloadNamespace) && !c.namespace().equals(rootNamespace)
                        && namespace == null) {
                    namespace = c;
                }
            } else if (c.namespace().equals(workloadNamespace) && !c.namespace().equals(rootNamespace)
                    && workload == null
                    && LabelSelector.subsetOf(pa.getSelector().getMatchLabelsMap(), labels)) {
                // a selector policy in the root namespace is no workload policy (istiod's
                // ComposePeerAuthentication leaves it out, even for the root namespace's own workloads)
                workload = c;
            }
        }
        Mode mode = Mode.PERMISSIVE;
        for (Config c : new Config[] {mesh, namespace, workload}) {
            if (c != null) {
                Mode m = ((PeerAuthentication) c.spec()).getMtls().getMode();
                if (m != Mode.UNSET && m != Mode.UNRECOGNIZED) {
                    mode = m;
                }
            }
        }
        Map<Integer, Mode> ports = new HashMap<>();
        if (workload != null) {
            for (var e : ((PeerAuthentication) workload.spec()).getPortLevelMtlsMap().entrySet()) {
                Mode m = e.getValue().getMode();
                ports.put(e.getKey(), m == Mode.UNSET || m == Mode.UNRECOGNIZED ? mode : m);
            }
        }
        return new PeerAuthenticationPolicy(mode, ports);
    }
}
