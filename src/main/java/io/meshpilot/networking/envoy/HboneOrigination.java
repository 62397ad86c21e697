package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.extensions.filters.listener.original_dst.v3.OriginalDst;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.metadata.v3.MetadataKey;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.networking.ClusterTrafficPolicy;
import io.meshpilot.networking.HboneEndpoints;

/**
 * Where a proxy opens HBONE tunnels (istiod's {@code connect_originate}): the internal listener
 * that endpoints sent over HBONE name ({@link HboneEndpoints}), and the cluster behind it. Waypoints
 * have them always; sidecars and gateways while HBONE is sent (istiod's cluster.go and listener.go
 * with PILOT_ENABLE_SENDING_HBONE).
 */
public final class HboneOrigination {
    /** istiod's HBONE idle timeout when the mesh config sets none (getHBONEIdleTimeout). */
    private static final Duration HBONE_IDLE_DEFAULT = Duration.newBuilder().setSeconds(3600).build();

    private HboneOrigination() {
    }

    /** A sidecar's or gateway's cluster: istiod's buildConnectOriginate with no peer matcher. */
    public static Cluster cluster(MeshConfig mesh) {
        return cluster(mesh, "");
    }

    /**
     * istiod's buildConnectOriginate: to port 15008 of the original destination (or the endpoint
     * metadata's {@code waypoint}), HTTP/2 with CONNECT, in Istio mutual TLS 1.3 with peers whose
     * identity starts with {@code peerSanPrefix} (empty: any of the mesh).
     */
    static Cluster cluster(MeshConfig mesh, String peerSanPrefix) {
        String name = HboneEndpoints.CONNECT_ORIGINATE;
        Duration idle = mesh.hasHboneIdleTimeout() ? mesh.getHboneIdleTimeout() : HBONE_IDLE_DEFAULT;
        HttpProtocolOptions.Builder h2Connect = HttpProtocolOptions.newBuilder().setExplicitHttpConfig(
                HttpProtocolOptions.ExplicitHttpConfig.newBuilder().setHttp2ProtocolOptions(
                        Http2ProtocolOptions.newBuilder().setAllowConnect(true)));
        h2Connect.getCommonHttpProtocolOptionsBuilder().setIdleTimeout(idle);
        return Cluster.newBuilder().setName(name)
                .setType(Cluster.DiscoveryType.ORIGINAL_DST)
                .setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED)
                .setConnectTimeout(SidecarClusterBuilder.connectTimeout(mesh))
                .setCleanupInterval(Duration.newBuilder().setSeconds(60))
                .setCircuitBreakers(CircuitBreakers.newBuilder().addThresholds(ClusterTrafficPolicy.defaultThresholds()))
                .putTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, Any.pack(h2Connect.build()))
                .setOriginalDstLbConfig(Cluster.OriginalDstLbConfig.newBuilder()
                        .setUpstreamPortOverride(UInt32Value.of(WaypointListenerBuilder.HBONE_PORT))
                        .setMetadataKey(MetadataKey.newBuilder().setKey(HboneEndpoints.ORIGINAL_DST_METADATA)
                                .addPath(MetadataKey.PathSegment.newBuilder().setKey("waypoint"))))
                .setTransportSocket(TransportSocket.newBuilder().setName(EnvoyFilters.TLS).setTypedConfig(Any.pack(
                        HboneTls.upstream(mesh, peerSanPrefix))))
                .setAltStatName(EnvoyFilters.delimited(name))
                .build();
    }

    /** istiod's buildConnectOriginateListener: tunnel to the original destination through the cluster of its name. */
    public static Listener listener() {
        String name = HboneEndpoints.CONNECT_ORIGINATE;
        TcpProxy tcp = TcpProxy.newBuilder().setStatPrefix(name).setCluster(name)
                .setTunnelingConfig(TcpProxy.TunnelingConfig.newBuilder().setHostname("%DOWNSTREAM_LOCAL_ADDRESS%"))
                .build();
        return Listener.newBuilder().setName(name)
                .setUseOriginalDst(BoolValue.of(false))
                .setInternalListener(Listener.InternalListenerConfig.getDefaultInstance())
                .addListenerFilters(ListenerFilter.newBuilder().setName(EnvoyFilters.ORIGINAL_DST)
                        .setTypedConfig(Any.pack(OriginalDst.getDefaultInstance())))
                .addFilterChains(FilterChain.newBuilder().addFilters(Filter.newBuilder().setName(EnvoyFilters.TCP_PROXY)
                        .setTypedConfig(Any.pack(tcp))))
                .build();
    }
}
