package io.meshpilot.networking;

import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.Optional;

/**
 * EDS of a waypoint's {@code inbound-vip} clusters (istiod's endpoint_builder.go with
 * TrafficDirectionInboundVIP): the service port's endpoints as for the outbound cluster of the
 * same port and subset, but an endpoint that takes HBONE (its pod captured by ztunnel, or
 * labelled {@code networking.istio.io/tunnel: http}) is reached through the internal listener
 * {@code connect_originate} ({@link HboneEndpoints}). Other endpoints keep their socket address.
 */
public final class WaypointEndpoints {
    private WaypointEndpoints() {
    }

    /** The assignment of {@code clusterName}, empty when it is no waypoint cluster of a known service port. */
    public static Optional<ClusterLoadAssignment> build(String clusterName, PushContext push, ProxyScope scope) {
        ClusterNames.InboundVip vip = ClusterNames.parseInboundVip(clusterName);
        if (vip == null) {
            return Optional.empty();
        }
        String outbound = ClusterNames.outbound(vip.port(), vip.subset(), vip.host());
        return EndpointBuilder.build(outbound, push, scope, null, null, HboneEndpoints.Sender.INBOUND_VIP)
                .map(cla -> cla.toBuilder().setClusterName(clusterName).build());
    }
}
