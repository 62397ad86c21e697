package io.meshpilot.networking;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.EnvoyInternalAddress;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.HboneSend;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Port;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.model.WaypointServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Endpoints reached over HBONE, as istiod's endpoint_builder.go (buildEnvoyLbEndpoint,
 * supportTunnel) sends them: the internal listener {@code connect_originate} named by the
 * endpoint's {@code ip:port}, which the tunnel's CONNECT asks for through the
 * {@code envoy.filters.listener.original_dst} metadata {@code local}. An endpoint takes HBONE when
 * ztunnel captures its pod or its {@code networking.istio.io/tunnel} label says {@code http}
 * ({@link IstioEndpoint#supportsHbone}), or when it is a waypoint.
 */
public final class HboneEndpoints {
    /** The internal listener, and the cluster behind it, that opens HBONE tunnels. */
    public static final String CONNECT_ORIGINATE = "connect_originate";
    /** The endpoint metadata filter whose {@code local} names the tunnel's destination. */
    public static final String ORIGINAL_DST_METADATA = "envoy.filters.listener.original_dst";
    /** The port waypoints terminate HBONE on. */
    static final int HBONE_PORT = 15008;
    /** The endpoint metadata a cluster's transport-socket matches read. */
    static final String TRANSPORT_SOCKET_MATCH = "envoy.transport_socket_match";

    private HboneEndpoints() {
    }

    /** Who the endpoints are for, which decides the ones sent through {@code connect_originate}. */
    public enum Sender {
        /** No HBONE: proxyless gRPC, HBONE sending off, or a proxy whose node says DISABLE_HBONE_SEND. */
        NONE,
        /**
         * A sidecar or gateway: HBONE to endpoints that take it unless they have a sidecar (Istio mutual
         * TLS is used then), marked {@code tunnel: http} for the cluster's {@code hbone} transport socket.
         */
        OUTBOUND,
        /** The same, HBONE also to endpoints with a sidecar (PILOT_PREFER_SENDING_HBONE). */
        OUTBOUND_PREFERRED,
        /**
         * A gateway: as {@link #OUTBOUND}, and a service whose gateway traffic goes through its waypoint
         * ({@code istio.io/ingress-use-waypoint}, ENABLE_INGRESS_WAYPOINT_ROUTING) is sent to that waypoint.
         */
        GATEWAY,
        /** The same with PILOT_PREFER_SENDING_HBONE. */
        GATEWAY_PREFERRED,
        /** A waypoint's {@code inbound-vip} clusters: every endpoint that takes HBONE; their transport is fixed. */
        INBOUND_VIP;

        /** The sender for a sidecar's or gateway's outbound clusters. */
        public static Sender outbound(Proxy proxy, HboneSend send) {
            if (!send.enabled() || proxy.proxyless() || disablesHbone(proxy)) {
                return NONE;
            }
            if (proxy.type() == Proxy.Type.ROUTER && send.ingressWaypoints()) {
                return send.preferred() ? GATEWAY_PREFERRED : GATEWAY;
            }
            return send.preferred() ? OUTBOUND_PREFERRED : OUTBOUND;
        }

        /** istiod's supportTunnel with the sidecar opt-out of buildEnvoyLbEndpoint, on the endpoint's own TLS mode. */
        boolean tunnels(IstioEndpoint e) {
            return switch (this) {
                case NONE -> false;
                case OUTBOUND, GATEWAY -> e.supportsHbone() && !IstioEndpoint.TLS_ISTIO.equals(e.tlsMode());
                case OUTBOUND_PREFERRED, GATEWAY_PREFERRED, INBOUND_VIP -> e.supportsHbone();
            };
        }

        boolean toServiceWaypoints() {
            return this == GATEWAY || this == GATEWAY_PREFERRED;
        }
    }

    /**
     * istiod's findServiceWaypoint for a gateway: the endpoints of the HBONE port of the waypoint
     * {@code svc} asks gateways to use, or null when it asks for none (or has no VIP, or its
     * waypoint is not a ready one for service traffic: then its own endpoints are sent).
     */
    static List<IstioEndpoint> serviceWaypointEndpoints(PushContext push, Service svc) {
        if (vip(svc, "").isEmpty()) {
            return null; // a waypoint takes VIP traffic only
        }
        WaypointServices.Waypoint waypoint = push.waypointServices().ingressWaypoint(svc).orElse(null);
        if (waypoint == null) {
            return null;
        }
        Service waypointSvc = push.service(waypointHost(waypoint, push.domainSuffix())).orElse(null);
        Optional<Port> hbone = waypointSvc == null ? Optional.empty() : waypointSvc.port(HBONE_PORT);
        String trafficType = waypointSvc == null ? "" : waypointSvc.labels().getOrDefault(WaypointServices.WAYPOINT_FOR,
                "service");
        if (hbone.isEmpty() || !(trafficType.equals("service") || trafficType.equals("all"))) {
            return null;
        }
        EndpointIndex.Shards shards = push.endpoints().shards(waypointSvc.hostname(), waypointSvc.namespace());
        List<IstioEndpoint> out = new ArrayList<>();
        for (IstioEndpoint e : shards == null ? List.<IstioEndpoint>of() : shards.all()) {
            if (e.servicePortName().equals(hbone.get().name()) && e.sentToProxies()) {
                out.add(e);
            }
        }
        return out;
    }

    /** The hostname of a waypoint's Service, which the deployment controller names after its Gateway. */
    public static String waypointHost(WaypointServices.Waypoint waypoint, String domainSuffix) {
        return waypoint.hostname(domainSuffix);
    }

    /** The service's VIP in the endpoint's cluster, else its default address ("" for none), as istiod picks it. */
    static String vip(Service svc, String clusterId) {
        List<String> vips = svc.clusterVips().getOrDefault(clusterId, List.of());
        if (!vips.isEmpty()) {
            return vips.getFirst();
        }
        if (!svc.defaultAddress().isEmpty() && !svc.defaultAddress().equals("0.0.0.0")) {
            return svc.defaultAddress();
        }
        return svc.clusterVips().values().stream().flatMap(List::stream).findFirst().orElse("");
    }

    /**
     * {@code ep}, built for the waypoint endpoint {@code e}, sent to that waypoint through
     * {@code connect_originate}: the tunnel's {@code local} is the service's {@code vip:port}, its
     * {@code waypoint} the waypoint pod's HBONE address.
     */
    static void throughWaypoint(LbEndpoint.Builder ep, IstioEndpoint e, String local) {
        String waypoint = hostPort(e.address(), e.endpointPort());
        ep.setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setEnvoyInternalAddress(
                EnvoyInternalAddress.newBuilder().setServerListenerName(CONNECT_ORIGINATE).setEndpointId(waypoint))));
        ep.getMetadataBuilder().putFilterMetadata(ORIGINAL_DST_METADATA, Struct.newBuilder()
                .putFields("local", Value.newBuilder().setStringValue(local).build())
                .putFields("waypoint", Value.newBuilder().setStringValue(waypoint).build()).build());
        markTunnel(ep);
    }

    /** istiod's node metadata DISABLE_HBONE_SEND (a StringBool: Go's ParseBool). */
    public static boolean disablesHbone(Proxy proxy) {
        return switch (proxy.metadata().getOrDefault("DISABLE_HBONE_SEND", "")) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            default -> false;
        };
    }

    /** {@code ep} (built for {@code e}) sent through {@code connect_originate}. */
    static void throughTunnel(LbEndpoint.Builder ep, IstioEndpoint e, Sender sender) {
        String target = hostPort(e.address(), e.endpointPort());
        ep.setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setEnvoyInternalAddress(
                EnvoyInternalAddress.newBuilder().setServerListenerName(CONNECT_ORIGINATE).setEndpointId(target))));
        ep.getMetadataBuilder().putFilterMetadata(ORIGINAL_DST_METADATA, Struct.newBuilder()
                .putFields("local", Value.newBuilder().setStringValue(target).build()).build());
        if (sender != Sender.INBOUND_VIP) {
            markTunnel(ep);
        }
    }

    /** The transport-socket match metadata that picks a cluster's {@code hbone} socket. */
    private static void markTunnel(LbEndpoint.Builder ep) {
        ep.getMetadataBuilder().putFilterMetadata(TRANSPORT_SOCKET_MATCH, Struct.newBuilder()
                .putFields("tunnel", Value.newBuilder().setStringValue(IstioEndpoint.TUNNEL_HTTP).build()).build());
    }

    /** Go's net.JoinHostPort: an IPv6 address in brackets. */
    static String hostPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
