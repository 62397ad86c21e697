package io.meshpilot.features;

/** Where MeshPilot gets its config and services from. */
public enum ServerMode {
    /** No Kubernetes: Istio YAML from --configDir, services from ServiceEntry/WorkloadEntry. */
    EMBEDDED,
    /** Kubernetes API server: CRDs, Services, EndpointSlices, Pods (the kube integration issue). */
    KUBERNETES;

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
