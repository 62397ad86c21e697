package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.EnvoyInternalAddress;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport;
import io.envoyproxy.envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.metadata.v3.MetadataKind;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Port;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.ClusterTrafficPolicy;
import io.meshpilot.networking.HboneEndpoints;
import java.util.ArrayList;
import java.util.List;

/**
 * A waypoint proxy's clusters, as istiod's cluster.go (case Waypoint) and cluster_waypoint.go
 * build them: the outbound clusters its routes send to outside the services it serves, then
 * {@code main_internal} and {@code encap} (static clusters to the internal listeners of those
 * names), per served service port {@code inbound-vip|<port>|<http|tcp>[/<subset>]|<host>} (the
 * outbound cluster of the port and DestinationRule subset, over EDS, whose transport is the
 * internal upstream that hands the endpoint's tunnel metadata to {@code connect_originate}), and
 * {@code connect_originate}: an original-destination cluster that opens HBONE (HTTP/2 CONNECT in
 * Istio mutual TLS 1.3) to port 15008 of the destination, or of its waypoint when the endpoint
 * names one.
 */
public final class WaypointClusterBuilder {
    /** istiod's passthroughHttpProtocolOptions idle timeout. */
    private static final Duration INTERNAL_IDLE = Duration.newBuilder().setSeconds(300).build();

    private WaypointClusterBuilder() {
    }

    public static List<Cluster> clusters(Proxy proxy, PushContext push) {
        WaypointRoutes routes = WaypointRoutes.of(proxy, push);
        ProxyScope scope = push.scope(proxy);
        List<Cluster> out = new ArrayList<>();
        for (String name : routes.outboundClusters()) {
            ClusterBuilder.build(name, push, scope, ClusterBuilder.Client.SIDECAR).ifPresent(out::add);
        }
        out.add(internalUpstream(WaypointListenerBuilder.MAIN_INTERNAL, WaypointListenerBuilder.MAIN_INTERNAL));
        out.add(internalUpstream(WaypointListenerBuilder.ENCAP, HboneEndpoints.CONNECT_ORIGINATE));
        for (Service svc : routes.services()) {
            for (Port p : svc.ports()) {
                inboundVip(svc, p, push, scope, out);
            }
        }
        out.add(connectOriginate(proxy, push));
        return out;
    }

    /** The inbound-vip clusters of one port: tcp and/or http by its protocol, for the port and each subset. */
    private static void inboundVip(Service svc, Port p, PushContext push, ProxyScope scope, List<Cluster> out) {
        if (p.protocol() == Protocol.UDP) {
            return;
        }
        List<String> protocols = new ArrayList<>();
        if (p.protocol() == Protocol.UNSUPPORTED || !p.protocol().isHttp()) {
            protocols.add("tcp");
        }
        if (p.protocol() == Protocol.UNSUPPORTED || p.protocol().isHttp()) {
            protocols.add("http");
        }
        List<String> subsets = new ArrayList<>();
        subsets.add("");
        push.destinationRule(svc.hostname(), scope).ifPresent(dr -> ((DestinationRule) dr.spec()).getSubsetsList()
                .forEach(s -> subsets.add(s.getName())));
        for (String subset : subsets) {
            for (String protocol : protocols) {
                String name = ClusterNames.inboundVip(p.port(), protocol, subset, svc.hostname());
                ClusterBuilder.build(ClusterNames.outbound(p.port(), subset, svc.hostname()), push, scope,
                        ClusterBuilder.Client.SIDECAR).ifPresent(c -> out.add(asInboundVip(c, name)));
            }
        }
    }

    /**
     * The outbound cluster as the waypoint's: renamed, EDS by the new name, and no TLS of its own
     * (the tunnel is Istio mutual TLS): the internal upstream passes the endpoint's original
     * destination and Istio metadata on to {@code connect_originate}.
     */
    private static Cluster asInboundVip(Cluster outbound, String name) {
        Cluster.Builder c = outbound.toBuilder().setName(name).clearTransportSocketMatches()
                .setTransportSocket(waypointInternalUpstream());
        if (c.hasEdsClusterConfig()) {
            c.getEdsClusterConfigBuilder().setServiceName(name);
        }
        if (c.hasLoadAssignment()) {
            c.getLoadAssignmentBuilder().setClusterName(name);
        }
        return c.build();
    }

    /** istiod's WaypointInternalUpstreamTransportSocket: the host's original-destination and istio metadata passed through. */
    private static TransportSocket waypointInternalUpstream() {
        InternalUpstreamTransport.Builder t = InternalUpstreamTransport.newBuilder().setTransportSocket(rawBuffer());
        for (String key : List.of(HboneEndpoints.ORIGINAL_DST_METADATA, "istio")) {
            t.addPassthroughMetadata(InternalUpstreamTransport.MetadataValueSource.newBuilder()
                    .setKind(MetadataKind.newBuilder().setHost(MetadataKind.Host.getDefaultInstance())).setName(key));
        }
        return TransportSocket.newBuilder().setName("internal_upstream").setTypedConfig(Any.pack(t.build())).build();
    }

    private static TransportSocket rawBuffer() {
        return TransportSocket.newBuilder().setName(EnvoyFilters.RAW_BUFFER).setTypedConfig(Any.pack(
                RawBuffer.getDefaultInstance())).build();
    }

    /** istiod's buildInternalUpstreamCluster: one endpoint, the internal listener {@code listener}, HTTP as downstream. */
    static Cluster internalUpstream(String name, String listener) {
        return Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.STATIC)
                .setCircuitBreakers(CircuitBreakers.newBuilder().addThresholds(ClusterTrafficPolicy.defaultThresholds()))
                .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName(name).addEndpoints(
                        LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(
                                Endpoint.newBuilder().setAddress(Address.newBuilder().setEnvoyInternalAddress(
                                        EnvoyInternalAddress.newBuilder().setServerListenerName(listener)))))))
                .setTransportSocket(TransportSocket.newBuilder().setName("internal_upstream").setTypedConfig(Any.pack(
                        InternalUpstreamTransport.newBuilder().setTransportSocket(rawBuffer()).build())))
                .putTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, Any.pack(
                        withIdleTimeout(SidecarClusterBuilder.useDownstreamProtocol().toBuilder(), INTERNAL_IDLE)))
                .setAltStatName(EnvoyFilters.delimited(name))
                .build();
    }

    private static HttpProtocolOptions withIdleTimeout(HttpProtocolOptions.Builder options, Duration idle) {
        options.getCommonHttpProtocolOptionsBuilder().setIdleTimeout(idle);
        return options.build();
    }

    /** istiod's buildWaypointConnectOriginate: HBONE to peers of the waypoint's own namespace in the mesh's trust domain. */
    static Cluster connectOriginate(Proxy proxy, PushContext push) {
        MeshConfig mesh = push.mesh();
        String trustDomain = mesh.getTrustDomain().isEmpty() ? "cluster.local" : mesh.getTrustDomain();
        return HboneOrigination.cluster(mesh, "spiffe://" + trustDomain + "/ns/" + proxy.namespace() + "/sa/");
    }
}
