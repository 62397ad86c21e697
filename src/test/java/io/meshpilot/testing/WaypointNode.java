package io.meshpilot.testing;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.WaypointServices;

/** A waypoint's node as istio-agent sends it for a pod of the {@code waypoint} template, parsed as the server parses it. */
public final class WaypointNode {
    /**
     * An AuthorizationPolicy in {@code shop} whose selector names the pods of waypoint
     * {@code waypoint}: istiod never applies a selector policy to a waypoint.
     */
    public static final String SELECTOR_POLICY = """
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: by-selector, namespace: shop}
            spec:
              selector: {matchLabels: {gateway.networking.k8s.io/gateway-name: waypoint}}
              action: DENY
              rules: [{to: [{operation: {paths: [/selected]}}]}]
            """;

    private WaypointNode() {
    }

    /** The waypoint of Gateway {@code gateway} in {@code namespace}; {@code waypointFor} null leaves the label out. */
    public static Proxy proxy(String namespace, String gateway, String waypointFor) {
        Struct.Builder labels = Struct.newBuilder()
                .putFields(WaypointServices.GATEWAY_NAME, string(gateway))
                .putFields(WaypointServices.MANAGED, string(WaypointServices.MESH_CONTROLLER));
        if (waypointFor != null) {
            labels.putFields(WaypointServices.WAYPOINT_FOR, string(waypointFor));
        }
        return Proxy.fromNode(Node.newBuilder().setId("waypoint~10.0.5.5~" + gateway + "-abc." + namespace + "~"
                        + namespace + ".svc.cluster.local")
                .setMetadata(Struct.newBuilder().putFields("NAMESPACE", string(namespace))
                        .putFields("LABELS", Value.newBuilder().setStructValue(labels).build()))
                .build());
    }

    private static Value string(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }
}
