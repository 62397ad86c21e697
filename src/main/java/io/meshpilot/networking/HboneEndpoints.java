package io.meshpilot.networking;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.EnvoyInternalAddress;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.meshpilot.model.HboneSend;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Proxy;

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
        /** A waypoint's {@code inbound-vip} clusters: every endpoint that takes HBONE; their transport is fixed. */
        INBOUND_VIP;

        /** The sender for a sidecar's or gateway's outbound clusters. */
        public static Sender outbound(Proxy proxy, HboneSend send) {
            if (!send.enabled() || proxy.proxyless() || disablesHbone(proxy)) {
                return NONE;
            }
            return send.preferred() ? OUTBOUND_PREFERRED : OUTBOUND;
        }

        /** istiod's supportTunnel with the sidecar opt-out of buildEnvoyLbEndpoint, on the endpoint's own TLS mode. */
        boolean tunnels(IstioEndpoint e) {
            return switch (this) {
                case NONE -> false;
                case OUTBOUND -> e.supportsHbone() && !IstioEndpoint.TLS_ISTIO.equals(e.tlsMode());
                case OUTBOUND_PREFERRED, INBOUND_VIP -> e.supportsHbone();
            };
        }
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
            ep.getMetadataBuilder().putFilterMetadata(TRANSPORT_SOCKET_MATCH, Struct.newBuilder()
                    .putFields("tunnel", Value.newBuilder().setStringValue(IstioEndpoint.TUNNEL_HTTP).build()).build());
        }
    }

    /** Go's net.JoinHostPort: an IPv6 address in brackets. */
    static String hostPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
