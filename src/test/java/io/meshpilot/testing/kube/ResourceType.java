package io.meshpilot.testing.kube;

import java.util.List;

/**
 * One served resource of the stand-in API server: a group/version/kind with its REST plural,
 * scope and whether it has a status subresource. Objects are stored per group and plural, so
 * every served version of a resource sees the same objects (CRDs with the {@code None}
 * conversion strategy, which is what Istio's CRDs use). {@code custom}: served because of a CRD
 * (no strategic merge patch for those, as on the real server).
 */
record ResourceType(String group, String version, String kind, String plural, String singular,
                    boolean namespaced, boolean statusSubresource, List<String> shortNames,
                    List<String> categories, boolean custom) {

    ResourceType {
        shortNames = List.copyOf(shortNames);
        categories = List.copyOf(categories);
    }

    /**
     * CertificateSigningRequests have an {@code approval} subresource besides {@code status}:
     * approvers write the Approved/Denied conditions there, signers the certificate to status.
     */
    boolean approvalSubresource() {
        return group.equals("certificates.k8s.io") && kind.equals("CertificateSigningRequest");
    }

    /** {@code v1} for the core group, {@code group/version} otherwise: the apiVersion field. */
    String apiVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** What the stored objects are keyed by: one store per group and plural, across versions. */
    String storageKey() {
        return group + "/" + plural;
    }

    String listKind() {
        return kind + "List";
    }

    /** The REST prefix of this resource's group version: {@code /api/v1} or {@code /apis/g/v}. */
    String groupVersionPath() {
        return group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version;
    }
}
