package io.meshpilot.networking;

import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.config.Config;
import java.util.List;

/**
 * The server-side mutual TLS mode a client infers for a service inside the mesh, istiod's
 * {@code BestEffortInferServiceMTLSMode}: the namespace-wide PeerAuthentication's mode (no
 * selector, the service's namespace), else the mesh-wide one's (no selector, root namespace),
 * an UNSET mode inheriting its parent's, else PERMISSIVE. Workload and port-level policies are
 * not looked at, as with istiod: a service does not know its workloads' policies. Of several
 * policies at one level the oldest wins. Auto mTLS uses it: a DISABLE service gets plaintext.
 */
public final class ServiceMtlsMode {
    private ServiceMtlsMode() {
    }

    /** The mode for a service of {@code namespace}; {@code policies} oldest first, as PushContext lists them. */
    public static Mode of(List<Config> policies, String rootNamespace, String namespace) {
        Config mesh = null;
        Config ns = null;
        for (Config c : policies) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            if (pa.hasSelector() && !pa.getSelector().getMatchLabelsMap().isEmpty()) {
                continue;
            }
            if (c.namespace().equals(rootNamespace)) {
                mesh = mesh == null ? c : mesh;
            } else if (c.namespace().equals(namespace)) {
                ns = ns == null ? c : ns;
            }
        }
        Mode mode = Mode.PERMISSIVE;
        for (Config c : new Config[] {mesh, ns}) {
            if (c != null) {
                Mode m = ((PeerAuthentication) c.spec()).getMtls().getMode();
                if (m != Mode.UNSET && m != Mode.UNRECOGNIZED) {
                    mode = m;
                }
            }
        }
        return mode;
    }
}
