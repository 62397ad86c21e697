package io.meshpilot.networking.envoyfilter;

import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;

/** istiod's commonConditionMatch: a patch's context is the one being patched, or ANY. */
final class PatchMatch {
    private PatchMatch() {
    }

    static boolean context(PatchContext patching, ConfigPatch p) {
        return p.match().getContext() == PatchContext.ANY || p.match().getContext() == patching;
    }

    /** Whether an ADD with this context inserts an object in {@code patching} (ANY: sidecar outbound and gateway only). */
    static boolean addsIn(PatchContext patching, ConfigPatch p) {
        if (p.match().getContext() == PatchContext.ANY) {
            return patching == PatchContext.SIDECAR_OUTBOUND || patching == PatchContext.GATEWAY;
        }
        return p.match().getContext() == patching;
    }
}
