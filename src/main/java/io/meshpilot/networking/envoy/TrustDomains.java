package io.meshpilot.networking.envoy;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The trust domains a mesh peer's SPIFFE identity may carry, as istiod's
 * authn.TrustDomainsForValidation: the mesh's trust domain, its aliases, then the trust domains of
 * {@code caCertificates}, each once and none empty. Envoy checks the peer certificate's URI SAN
 * against {@code spiffe://<domain>/} prefixes made from them (sidecar inbound mTLS, HBONE).
 */
final class TrustDomains {
    /** The trust domain when the mesh config names none (istiod's mesh defaults). */
    static final String DEFAULT = "cluster.local";

    private TrustDomains() {
    }

    static List<String> forValidation(MeshConfig mesh) {
        Set<String> out = new LinkedHashSet<>();
        out.add(mesh.getTrustDomain().isEmpty() ? DEFAULT : mesh.getTrustDomain());
        out.addAll(mesh.getTrustDomainAliasesList());
        mesh.getCaCertificatesList().forEach(ca -> out.addAll(ca.getTrustDomainsList()));
        out.remove("");
        return List.copyOf(out);
    }

    /** The URI SAN prefixes Envoy matches: {@code spiffe://<domain>/} for each. */
    static List<String> uriPrefixes(MeshConfig mesh) {
        return forValidation(mesh).stream().map(td -> "spiffe://" + td + "/").toList();
    }
}
