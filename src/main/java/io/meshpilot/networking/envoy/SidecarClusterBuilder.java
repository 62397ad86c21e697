package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.BindConfig;
import io.envoyproxy.envoy.config.core.v3.Http1ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.ConnectionPoolSettings;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterTrafficPolicy;
import io.meshpilot.networking.TelemetryMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The clusters a sidecar's listeners need beside the outbound service clusters (istiod's
 * cluster_builder): {@code BlackHoleCluster} (STATIC, no endpoints: connections to it fail),
 * {@code PassthroughCluster} (ORIGINAL_DST: to wherever the application connected, the
 * downstream's HTTP version upstream), {@code InboundPassthroughCluster} (the same for inbound
 * traffic to ports no service declares, bound to 127.0.0.6 so iptables does not capture it
 * again) and one {@code inbound|<port>||} cluster per port of the proxy's own workload.
 * Inbound clusters follow the mesh's inboundTrafficPolicy: PASSTHROUGH (the default) sends
 * to the original destination, the pod IP, from 127.0.0.6; LOCALHOST sends to
 * 127.0.0.1:port (STATIC).
 */
public final class SidecarClusterBuilder {
    private static final System.Logger LOG = System.getLogger(SidecarClusterBuilder.class.getName());
    /** The source address istiod binds inbound upstream connections to (iptables lets it through). */
    static final String INBOUND_PASSTHROUGH_BIND = "127.0.0.6";
    /** The cluster of outbound traffic to unknown destinations (ALLOW_ANY). */
    public static final String PASSTHROUGH_CLUSTER = EnvoyFilters.PASSTHROUGH_CLUSTER;
    /** The longest protobuf Duration (istiod disables inbound ORIGINAL_DST host cleanup with it). */
    static final Duration MAX_DURATION = Duration.newBuilder().setSeconds(315576000000L).build();

    private SidecarClusterBuilder() {
    }

    /** BlackHole, Passthrough, InboundPassthrough and the inbound clusters of {@code proxy}, names unique. */
    public static List<Cluster> extraClusters(Proxy proxy, PushContext push, ProxyScope scope) {
        List<Cluster> out = new ArrayList<>(meshClusters(push.mesh()));
        out.addAll(inboundClusters(proxy, push));
        return out;
    }

    /** BlackHole, Passthrough and InboundPassthrough: the same for every sidecar of a mesh config. */
    public static List<Cluster> meshClusters(MeshConfig mesh) {
        Cluster passthrough = passthrough(mesh);
        return List.of(blackHole(mesh), passthrough, passthrough.toBuilder()
                .setName(EnvoyFilters.INBOUND_PASSTHROUGH_CLUSTER)
                .setUpstreamBindConfig(bindTo(INBOUND_PASSTHROUGH_BIND)).build());
    }

    /** What the inbound clusters of {@code proxy} depend on: proxies with equal keys get equal clusters. */
    public static String inboundKey(Proxy proxy, PushContext push) {
        return InboundPorts.key(proxy, push);
    }

    /** The inbound clusters of {@code proxy}'s own workload ports. */
    public static List<Cluster> inboundClusters(Proxy proxy, PushContext push) {
        List<Cluster> out = new ArrayList<>();
        Config sidecar = push.scope(proxy).sidecar();
        for (InboundPorts.InboundPort p : InboundPorts.of(proxy, push)) {
            Cluster c = inbound(p, push.mesh(), sidecar == null ? null : inboundPool((Sidecar) sidecar.spec(), p.targetPort()));
            if (p.service() != null && !p.service().meshExternal()) {
                // the stats filter's destination service on the server side (istiod's addTelemetryMetadata)
                Cluster.Builder b = c.toBuilder();
                TelemetryMetadata.addServices(b, List.of(p.service()));
                c = b.build();
            }
            out.add(c);
        }
        return out;
    }

    /**
     * istiod's InboundConnectionPoolForPort: the Sidecar ingress listener's connection pool for
     * the port, else the Sidecar's {@code inboundConnectionPool}; null for neither.
     */
    static ConnectionPoolSettings inboundPool(Sidecar sidecar, int port) {
        for (var in : sidecar.getIngressList()) {
            if (in.getPort().getNumber() == port && in.hasConnectionPool()) {
                return in.getConnectionPool();
            }
        }
        return sidecar.hasInboundConnectionPool() ? sidecar.getInboundConnectionPool() : null;
    }

    /**
     * The services behind each inbound cluster of {@code proxy}, by cluster name: an
     * EnvoyFilter's {@code cluster.service} matches an inbound cluster by them, as istiod
     * passes them to its cluster patcher (the name holds no host).
     */
    public static Map<String, List<String>> inboundClusterServices(Proxy proxy, PushContext push) {
        Map<String, List<String>> out = new HashMap<>();
        for (InboundPorts.InboundPort p : InboundPorts.of(proxy, push)) {
            if (p.service() != null) {
                out.computeIfAbsent(inboundName(p.targetPort()), n -> new ArrayList<>()).add(p.service().hostname());
            }
        }
        return out;
    }

    /** istiod's inbound cluster name ({@code model.BuildInboundSubsetKey}). */
    public static String inboundName(int port) {
        return "inbound|" + port + "||";
    }

    static Cluster blackHole(MeshConfig mesh) {
        return Cluster.newBuilder().setName(EnvoyFilters.BLACKHOLE_CLUSTER)
                .setType(Cluster.DiscoveryType.STATIC)
                .setConnectTimeout(connectTimeout(mesh))
                .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
                .setAltStatName(EnvoyFilters.delimited(EnvoyFilters.BLACKHOLE_CLUSTER))
                .build();
    }

    static Cluster passthrough(MeshConfig mesh) {
        Cluster.Builder c = Cluster.newBuilder().setName(EnvoyFilters.PASSTHROUGH_CLUSTER)
                .setType(Cluster.DiscoveryType.ORIGINAL_DST)
                .setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED)
                .setAltStatName(EnvoyFilters.delimited(EnvoyFilters.PASSTHROUGH_CLUSTER));
        ClusterTrafficPolicy.apply(c, TrafficPolicy.getDefaultInstance(), mesh); // default circuit breakers
        c.setConnectTimeout(connectTimeout(mesh));
        c.putTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, Any.pack(useDownstreamProtocol()));
        return c.build();
    }

    /** An inbound cluster; {@code pool} (null for none) is the Sidecar's connection pool for its port. */
    static Cluster inbound(InboundPorts.InboundPort p, MeshConfig mesh, ConnectionPoolSettings pool) {
        String name = inboundName(p.targetPort());
        Cluster.Builder c = Cluster.newBuilder().setName(name).setCommonLbConfig(Cluster.CommonLbConfig.getDefaultInstance());
        TrafficPolicy policy = pool == null ? TrafficPolicy.getDefaultInstance()
                : TrafficPolicy.newBuilder().setConnectionPool(pool).build();
        ClusterTrafficPolicy.apply(c, policy, mesh);
        if (!policy.getConnectionPool().getTcp().hasConnectTimeout()) {
            c.setConnectTimeout(connectTimeout(mesh)); // the mesh's, 10 s when it sets none
        }
        boolean localhost = mesh.getInboundTrafficPolicy().getMode()
                == MeshConfig.InboundTrafficPolicy.Mode.LOCALHOST;
        if (p.defaultEndpoint() != null) {
            defaultEndpoint(c, name, p.defaultEndpoint());
        } else if (localhost) {
            c.setType(Cluster.DiscoveryType.STATIC).setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
                    .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName(name)
                            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
                                    .setEndpoint(Endpoint.newBuilder()
                                            .setAddress(EnvoyFilters.address("127.0.0.1", p.targetPort()))))));
        } else {
            c.setType(Cluster.DiscoveryType.ORIGINAL_DST).setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED)
                    .setCleanupInterval(MAX_DURATION)
                    .setUpstreamBindConfig(bindTo(INBOUND_PASSTHROUGH_BIND));
        }
        Protocol protocol = p.servicePort().protocol();
        if (protocol == Protocol.HTTP2 || protocol == Protocol.GRPC || protocol == Protocol.GRPC_WEB) {
            c.putTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, Any.pack(
                    HttpProtocolOptions.newBuilder().setExplicitHttpConfig(HttpProtocolOptions.ExplicitHttpConfig
                            .newBuilder().setHttp2ProtocolOptions(Http2ProtocolOptions.getDefaultInstance())).build()));
        } else if (protocol == Protocol.UNSUPPORTED) {
            c.putTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, Any.pack(useDownstreamProtocol()));
        }
        return c.build();
    }

    /**
     * A Sidecar ingress listener's {@code defaultEndpoint}: a unix socket or a loopback address
     * is a static endpoint; {@code 0.0.0.0:<port>} / {@code [::]:<port>} is the original
     * destination address on that port (istiod's upstream_port_override).
     */
    private static void defaultEndpoint(Cluster.Builder c, String name, String endpoint) {
        Address address;
        if (endpoint.startsWith(EnvoyFilters.UNIX_PREFIX)) {
            address = EnvoyFilters.pipe(endpoint);
        } else {
            int colon = endpoint.lastIndexOf(':');
            int port = -1;
            try {
                port = colon < 0 ? -1 : Integer.parseInt(endpoint.substring(colon + 1));
            } catch (NumberFormatException e) {
                // validated config never gets here; a bad value must not fail the proxy's CDS
            }
            if (port <= 0 || port > 65535) {
                LOG.log(System.Logger.Level.WARNING, "Sidecar defaultEndpoint \"" + endpoint
                        + "\" is not host:port; " + name + " goes to the original destination");
                c.setType(Cluster.DiscoveryType.ORIGINAL_DST).setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED)
                        .setCleanupInterval(MAX_DURATION).setUpstreamBindConfig(bindTo(INBOUND_PASSTHROUGH_BIND));
                return;
            }
            String host = endpoint.substring(0, colon).replace("[", "").replace("]", "");
            if (host.isEmpty()) {
                host = "127.0.0.1"; // ":<port>": the workload on loopback
            }
            if (host.equals("0.0.0.0") || host.equals("::")) {
                c.setType(Cluster.DiscoveryType.ORIGINAL_DST).setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED)
                        .setCleanupInterval(MAX_DURATION)
                        .setOriginalDstLbConfig(Cluster.OriginalDstLbConfig.newBuilder()
                                .setUpstreamPortOverride(UInt32Value.of(port)))
                        .setUpstreamBindConfig(bindTo(INBOUND_PASSTHROUGH_BIND));
                return;
            }
            address = EnvoyFilters.address(host, port);
        }
        c.setType(Cluster.DiscoveryType.STATIC).setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
                .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName(name)
                        .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
                                .setEndpoint(Endpoint.newBuilder().setAddress(address)))));
    }

    static HttpProtocolOptions useDownstreamProtocol() {
        return HttpProtocolOptions.newBuilder().setUseDownstreamProtocolConfig(
                HttpProtocolOptions.UseDownstreamHttpConfig.newBuilder()
                        .setHttpProtocolOptions(Http1ProtocolOptions.getDefaultInstance())
                        .setHttp2ProtocolOptions(Http2ProtocolOptions.getDefaultInstance())).build();
    }

    private static BindConfig bindTo(String ip) {
        return BindConfig.newBuilder().setSourceAddress(SocketAddress.newBuilder().setAddress(ip).setPortValue(0)).build();
    }

    static Duration connectTimeout(MeshConfig mesh) {
        return mesh.hasConnectTimeout() ? mesh.getConnectTimeout() : Duration.newBuilder().setSeconds(10).build();
    }
}
