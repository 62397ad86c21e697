package io.meshpilot.xds;

import com.google.gson.JsonObject;
import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.meshpilot.lifecycle.BuildInfo;

/**
 * Who answers: istiod's {@code IstioControlPlaneInstance} (xdsgen.go {@code controlPlane}),
 * sent as the JSON {@code identifier} of {@code control_plane} on {@code istio.io/debug/syncz}
 * responses. istioctl keys {@code proxy-status} rows by its {@code ID} (the ISTIOD column;
 * "MISSING" without it) and prints its {@code Info} for {@code istioctl version}. The keys are
 * istiod's (a Go struct without json tags, and {@link BuildInfo#istiodInfo()}).
 *
 * @param id the pod name ($POD_NAME), as istiod; the replica's host-derived name when unset
 */
record ControlPlaneInstance(String id, BuildInfo build) {

    ControlPlane proto() {
        JsonObject info = new JsonObject();
        build.istiodInfo().forEach(info::addProperty);
        JsonObject instance = new JsonObject();
        instance.addProperty("Component", "istiod");
        instance.addProperty("ID", id);
        instance.add("Info", info);
        return ControlPlane.newBuilder().setIdentifier(instance.toString()).build();
    }
}
