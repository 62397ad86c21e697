package io.meshpilot.load;

import com.google.protobuf.Duration;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.Value;
import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.networking.ClusterTrafficPolicy;
import io.meshpilot.networking.UpstreamTls;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * java-control-plane ({@code io.envoyproxy.controlplane:server}) as the load tool's comparison
 * target: its stock {@link V3DiscoveryServer} over a {@link SimpleCache} (one group for every
 * node) on a grpc-java Netty server, serving the clusters and endpoints MeshPilot serves for the
 * load tool's generated config (S services x E endpoints): the same names, content and order.
 *
 * <p>{@code java ... io.meshpilot.load.JcpServer <services> <endpoints> [<port>]} (an ephemeral
 * port unless given: a restarted server takes its predecessor's) prints
 * {@code java-control-plane: grpc=<port> ready}, then reads commands from stdin, one per line:
 * {@code change} sets a snapshot with every endpoint's port moved (from 19000+e to 20000+e, the
 * change MeshPilot gets through its config file), answering {@code changed}; {@code heap}
 * answers {@code heap: <used heap bytes>} (the JVM's heap usage, as MeshPilot's
 * {@code memory_usedHeap_bytes}; the load tool runs {@code jcmd GC.run} first); {@code direct}
 * answers {@code direct: <bytes>}, grpc-java's Netty direct memory as MeshPilot's
 * {@code meshpilot_grpc_netty_direct_memory_bytes} counts it.
 */
public final class JcpServer {
    static final String GROUP = "all";

    private JcpServer() {
    }

    public static void main(String[] argv) throws Exception {
        int services = Integer.parseInt(argv[0]);
        int endpoints = Integer.parseInt(argv[1]);
        SimpleCache<String> cache = new SimpleCache<>(node -> GROUP);
        List<Cluster> clusters = clusters(services);
        // clusters and endpoints versioned separately: an endpoint change re-sends EDS only,
        // as MeshPilot's incremental push does
        cache.setSnapshot(GROUP, Snapshot.create(clusters, "1", assignments(services, endpoints, 19000), "1",
                List.of(), "1", List.of(), "1", List.of(), "1"));
        V3DiscoveryServer discovery = new V3DiscoveryServer(cache);
        int port = argv.length > 2 ? Integer.parseInt(argv[2]) : 0;
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .maxInboundMessageSize(4 * 1024 * 1024)
                .addService(discovery.getAggregatedDiscoveryServiceImpl())
                .build().start();
        System.out.println("java-control-plane: grpc=" + server.getPort() + " ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int version = 1;
        String line;
        while ((line = in.readLine()) != null) {
            switch (line.trim()) {
                case "change" -> {
                    version++;
                    int base = version % 2 == 0 ? 20000 : 19000;
                    cache.setSnapshot(GROUP, Snapshot.create(clusters, "1", assignments(services, endpoints, base),
                            Integer.toString(version), List.of(), "1", List.of(), "1", List.of(), "1"));
                    System.out.println("changed");
                }
                case "heap" -> System.out.println("heap: "
                        + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                case "direct" -> System.out.println("direct: " + PlatformDependent.usedDirectMemory());
                default -> System.out.println("unknown command: " + line);
            }
            System.out.flush();
        }
        server.shutdownNow();
    }

    static String host(int s) {
        return "svc-" + s + ".default.svc.cluster.local";
    }

    static String clusterName(int s) {
        return "outbound|8080||" + host(s);
    }

    /** Services in MeshPilot's order: by host name. */
    static List<Integer> byHost(int services) {
        TreeMap<String, Integer> hosts = new TreeMap<>();
        for (int s = 0; s < services; s++) {
            hosts.put(host(s), s);
        }
        return List.copyOf(hosts.values());
    }

    /**
     * As MeshPilot's ClusterBuilder for a service without a DestinationRule: EDS over ADS, least
     * request, the mesh's 10 s connect timeout, istiod's unlimited circuit-breaker thresholds,
     * auto mTLS.
     */
    static List<Cluster> clusters(int services) {
        List<Cluster> out = new ArrayList<>();
        for (int s : byHost(services)) {
            Cluster.Builder c = Cluster.newBuilder();
            // auto mTLS for the mesh-internal services, no service accounts on their endpoints
            UpstreamTls.autoMtls(c, UpstreamTls.sni(8080, "",
                    clusterName(s).substring(clusterName(s).lastIndexOf('|') + 1)), Set.of());
            // istiod's telemetry metadata: a ServiceEntry host's name is the host
            c.setMetadata(Metadata.newBuilder().putFilterMetadata("istio", Struct.newBuilder().putFields("services",
                    Value.newBuilder().setListValue(ListValue.newBuilder().addValues(Value.newBuilder().setStructValue(
                            Struct.newBuilder().putFields("host", Value.newBuilder().setStringValue(host(s)).build())
                                    .putFields("name", Value.newBuilder().setStringValue(host(s)).build())
                                    .putFields("namespace", Value.newBuilder().setStringValue("default").build()))))
                            .build()).build()));
            out.add(c.setName(clusterName(s)).setType(Cluster.DiscoveryType.EDS)
                    .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setServiceName(clusterName(s))
                            .setEdsConfig(ConfigSource.newBuilder()
                                    .setAds(AggregatedConfigSource.getDefaultInstance())
                                    .setInitialFetchTimeout(Duration.getDefaultInstance())
                                    .setResourceApiVersion(ApiVersion.V3)))
                    .setLbPolicy(Cluster.LbPolicy.LEAST_REQUEST)
                    .setCommonLbConfig(Cluster.CommonLbConfig.getDefaultInstance())
                    .setConnectTimeout(Duration.newBuilder().setSeconds(10))
                    .setCircuitBreakers(CircuitBreakers.newBuilder()
                            .addThresholds(ClusterTrafficPolicy.defaultThresholds()))
                    .build());
        }
        // then BlackHole/Passthrough/InboundPassthrough, as every sidecar gets them
        out.addAll(SidecarClusterBuilder.meshClusters(
                new MeshConfigLoader().defaults()));
        return out;
    }

    /**
     * As MeshPilot's EndpointBuilder for the load tool's WorkloadEntries: one (empty) locality
     * weighted by its endpoints, each endpoint healthy, weight 1, with Istio's metadata
     * (workload {@code <name>;<namespace>;<app label>;;Kubernetes}: the embedded registry's cluster; no tlsMode: no service account).
     */
    static List<ClusterLoadAssignment> assignments(int services, int endpoints, int basePort) {
        List<ClusterLoadAssignment> out = new ArrayList<>();
        for (int s : byHost(services)) {
            LocalityLbEndpoints.Builder group = LocalityLbEndpoints.newBuilder()
                    .setLocality(Locality.getDefaultInstance());
            for (int e = 0; e < endpoints; e++) {
                String address = "10." + (s / 250) + "." + (s % 250) + "." + (e + 1);
                group.addLbEndpoints(LbEndpoint.newBuilder()
                        .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                                SocketAddress.newBuilder().setAddress(address).setPortValue(basePort + e))))
                        .setHealthStatus(HealthStatus.HEALTHY)
                        .setLoadBalancingWeight(UInt32Value.of(1))
                        .setMetadata(metadata("svc-" + s + "-" + e, "svc-" + s, "default")));
            }
            out.add(ClusterLoadAssignment.newBuilder().setClusterName(clusterName(s))
                    .addEndpoints(group.setLoadBalancingWeight(UInt32Value.of(endpoints))).build());
        }
        return out;
    }

    /** istiod's endpoint telemetry metadata for a WorkloadEntry labelled {@code app: <service>}: no tlsMode (disabled). */
    private static Metadata metadata(String workload, String service, String namespace) {
        Struct istio = Struct.newBuilder().putFields("workload", Value.newBuilder()
                .setStringValue(workload + ";" + namespace + ";" + service + ";;Kubernetes").build()).build();
        return Metadata.newBuilder().putFilterMetadata("istio", istio).build();
    }
}
