package io.meshpilot.features;

import java.util.Locale;

/** Where MeshPilot gets its config and services from. */
public enum ServerMode {
    /** No Kubernetes: Istio YAML from --configDir, services from ServiceEntry/WorkloadEntry. */
    EMBEDDED,
    /** Kubernetes API server: CRDs, Services, EndpointSlices, Pods. */
    KUBERNETES;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
