package io.meshpilot.networking;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.EnvoyInternalAddress;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * EDS of a waypoint's {@code inbound-vip} clusters (istiod's endpoint_builder.go with
 * TrafficDirectionInboundVIP): the service port's endpoints as for the outbound cluster of the
 * same port and subset, but an endpoint that takes HBONE (its pod captured by ztunnel, or
 * labelled {@code networking.istio.io/tunnel: http}) is reached through the internal listener
 * {@code connect_originate}, named by its {@code ip:port} (the endpoint id) and carrying that
 * address as the {@code envoy.filters.listener.original_dst} metadata {@code local}, which the
 * tunnel's CONNECT asks for. Other endpoints keep their socket address.
 */
public final class WaypointEndpoints {
    /** Where a waypoint originates HBONE: an internal listener and the cluster it listens for. */
    public static final String CONNECT_ORIGINATE = "connect_originate";
    /** The endpoint metadata filter whose {@code local} names the tunnel's destination. */
    public static final String ORIGINAL_DST_METADATA = "envoy.filters.listener.original_dst";

    private WaypointEndpoints() {
    }

    /** The assignment of {@code clusterName}, empty when it is no waypoint cluster of a known service port. */
    public static Optional<ClusterLoadAssignment> build(String clusterName, PushContext push, ProxyScope scope) {
        ClusterNames.InboundVip vip = ClusterNames.parseInboundVip(clusterName);
        if (vip == null) {
            return Optional.empty();
        }
        String outbound = ClusterNames.outbound(vip.port(), vip.subset(), vip.host());
        Set<String> tunnels = tunnelAddresses(push, vip.host(), scope);
        return EndpointBuilder.build(outbound, push, scope).map(cla -> {
            ClusterLoadAssignment.Builder out = cla.toBuilder().setClusterName(clusterName);
            for (LocalityLbEndpoints.Builder group : out.getEndpointsBuilderList()) {
                for (LbEndpoint.Builder ep : group.getLbEndpointsBuilderList()) {
                    SocketAddress socket = ep.getEndpoint().getAddress().getSocketAddress();
                    String target = socket.getAddress() + ":" + socket.getPortValue();
                    if (tunnels.contains(target)) {
                        throughTunnel(ep, target);
                    }
                }
            }
            return out.build();
        });
    }

    /** The {@code ip:port} of the service's endpoints that take HBONE. */
    private static Set<String> tunnelAddresses(PushContext push, String host, ProxyScope scope) {
        Set<String> out = new HashSet<>();
        push.service(host, scope).ifPresent(svc -> {
            EndpointIndex.Shards shards = push.endpoints().shards(svc.hostname(), svc.namespace());
            List<IstioEndpoint> all = shards == null ? List.of() : shards.all();
            for (IstioEndpoint e : all) {
                if (e.supportsHbone()) {
                    out.add(e.address() + ":" + e.endpointPort());
                }
            }
        });
        return out;
    }

    private static void throughTunnel(LbEndpoint.Builder ep, String target) {
        ep.setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setEnvoyInternalAddress(
                EnvoyInternalAddress.newBuilder().setServerListenerName(CONNECT_ORIGINATE).setEndpointId(target))));
        ep.getMetadataBuilder().putFilterMetadata(ORIGINAL_DST_METADATA, Struct.newBuilder()
                .putFields("local", Value.newBuilder().setStringValue(target).build()).build());
    }
}
