package io.meshpilot.networking.telemetry;

import io.meshpilot.api.telemetry.v1alpha1.WorkloadMode;

/** istiod's networking.ListenerClass: which side of the traffic a listener serves. */
public enum ListenerClass {
    SIDECAR_INBOUND, SIDECAR_OUTBOUND, GATEWAY;

    /** istiod's workloadMode: inbound is the SERVER side, outbound and gateways the CLIENT side. */
    public WorkloadMode mode() {
        return this == SIDECAR_INBOUND ? WorkloadMode.SERVER : WorkloadMode.CLIENT;
    }

    /** The same mode as {@code istio.type.v1beta1.WorkloadMode} (WasmPlugin's match). */
    public io.meshpilot.api.type.v1beta1.WorkloadMode typeMode() {
        return this == SIDECAR_INBOUND ? io.meshpilot.api.type.v1beta1.WorkloadMode.SERVER
                : io.meshpilot.api.type.v1beta1.WorkloadMode.CLIENT;
    }
}
