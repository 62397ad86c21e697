package io.meshpilot.networking;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.cluster.v3.UpstreamConnectionOptions;
import io.envoyproxy.envoy.config.core.v3.Http1ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.RuntimeDouble;
import io.envoyproxy.envoy.config.core.v3.TcpKeepalive;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.v3.Percent;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.ConnectionPoolSettings;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings;
import io.meshpilot.api.networking.v1alpha3.OutlierDetection;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.config.protocol.Protocol;
import java.util.Optional;

/**
 * The load balancer, connection pool and outlier detection of a (merged, see
 * {@link TrafficPolicies}) traffic policy as Envoy cluster fields, as istiod's cluster_traffic_policy applies them to sidecar and
 * gateway clusters. Zero means "unset" in Istio's int fields, so zeros leave the defaults.
 */
public final class ClusterTrafficPolicy {
    /** The key Envoy looks up upstream HTTP options under in typed_extension_protocol_options. */
    public static final String HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

    /** 2^32-1 as a protobuf uint32 (Java's int bits). */
    private static final UInt32Value UNLIMITED = UInt32Value.of(-1);

    private ClusterTrafficPolicy() {
    }

    /** Applies {@code policy}'s connection pool (defaults without one) and outlier detection. */
    public static void apply(Cluster.Builder c, TrafficPolicy policy, MeshConfig mesh) {
        connectionPool(c, policy.getConnectionPool(), mesh);
        if (policy.hasOutlierDetection()) {
            outlierDetection(c, policy.getOutlierDetection());
        }
    }

    /**
     * istiod's applyLoadBalancer for Envoy: the simple policy (LEAST_REQUEST when unset or
     * LEAST_CONN) with {@code warmup} (else the deprecated {@code warmupDurationSecs}) as the
     * slow start of ROUND_ROBIN and LEAST_REQUEST; then a consistent hash turns it into MAGLEV
     * ({@code tableSize} when set) or RING_HASH ({@code ringHash.minimumRingSize} when set;
     * without an algorithm, the deprecated {@code minimumRingSize}, else Envoy's 1024).
     */
    public static void loadBalancer(Cluster.Builder c, LoadBalancerSettings lb) {
        switch (lb.getSimple()) {
            case RANDOM -> c.setLbPolicy(Cluster.LbPolicy.RANDOM);
            case ROUND_ROBIN -> {
                c.setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN);
                slowStart(lb).ifPresent(s -> c.setRoundRobinLbConfig(
                        Cluster.RoundRobinLbConfig.newBuilder().setSlowStartConfig(s)));
            }
            default -> {
                c.setLbPolicy(Cluster.LbPolicy.LEAST_REQUEST);
                slowStart(lb).ifPresent(s -> c.setLeastRequestLbConfig(
                        Cluster.LeastRequestLbConfig.newBuilder().setSlowStartConfig(s)));
            }
        }
        if (!lb.hasConsistentHash()) {
            return;
        }
        var hash = lb.getConsistentHash();
        if (hash.hasMaglev()) {
            c.setLbPolicy(Cluster.LbPolicy.MAGLEV).clearLbConfig();
            if (hash.getMaglev().getTableSize() != 0) {
                c.setMaglevLbConfig(Cluster.MaglevLbConfig.newBuilder()
                        .setTableSize(UInt64Value.of(hash.getMaglev().getTableSize())));
            }
        } else if (hash.hasRingHash()) {
            c.setLbPolicy(Cluster.LbPolicy.RING_HASH).clearLbConfig();
            if (hash.getRingHash().getMinimumRingSize() != 0) {
                c.setRingHashLbConfig(Cluster.RingHashLbConfig.newBuilder()
                        .setMinimumRingSize(UInt64Value.of(hash.getRingHash().getMinimumRingSize())));
            }
        } else {
            long size = hash.getMinimumRingSize() != 0 ? hash.getMinimumRingSize() : 1024;
            c.setLbPolicy(Cluster.LbPolicy.RING_HASH).setRingHashLbConfig(Cluster.RingHashLbConfig.newBuilder()
                    .setMinimumRingSize(UInt64Value.of(size)));
        }
    }

    /**
     * istiod's setWarmup (aggression 1, a linear ramp, and minimum weight 10%, Envoy's, when
     * unset; the runtime key is istiod's fixed "(") or setSlowStartConfig (the window only).
     */
    private static Optional<Cluster.SlowStartConfig> slowStart(LoadBalancerSettings lb) {
        if (lb.hasWarmup()) {
            var w = lb.getWarmup();
            return Optional.of(Cluster.SlowStartConfig.newBuilder().setSlowStartWindow(w.getDuration())
                    .setAggression(RuntimeDouble.newBuilder()
                            .setDefaultValue(w.hasAggression() ? w.getAggression().getValue() : 1).setRuntimeKey("("))
                    .setMinWeightPercent(Percent.newBuilder()
                            .setValue(w.hasMinimumPercent() ? w.getMinimumPercent().getValue() : 10))
                    .build());
        }
        if (lb.hasWarmupDurationSecs()) {
            return Optional.of(Cluster.SlowStartConfig.newBuilder().setSlowStartWindow(lb.getWarmupDurationSecs()).build());
        }
        return Optional.empty();
    }

    /**
     * istiod's defaults: no practical limit on connections, pending requests, requests and
     * retries (Envoy's own default of 3 parallel retries caused 503s during pod churn), with
     * the remaining budget reported as stats.
     */
    public static CircuitBreakers.Thresholds defaultThresholds() {
        return CircuitBreakers.Thresholds.newBuilder()
                .setMaxConnections(UNLIMITED).setMaxPendingRequests(UNLIMITED)
                .setMaxRequests(UNLIMITED).setMaxRetries(UNLIMITED)
                .setTrackRemaining(true).build();
    }

    private static void connectionPool(Cluster.Builder c, ConnectionPoolSettings pool, MeshConfig mesh) {
        CircuitBreakers.Thresholds.Builder t = defaultThresholds().toBuilder();
        var common = io.envoyproxy.envoy.config.core.v3.HttpProtocolOptions.newBuilder();
        boolean httpOptions = false;
        if (pool.hasHttp()) {
            var http = pool.getHttp();
            if (http.getHttp2MaxRequests() > 0) {
                t.setMaxRequests(UInt32Value.of(http.getHttp2MaxRequests())); // Envoy applies it to HTTP/2
            }
            if (http.getHttp1MaxPendingRequests() > 0) {
                t.setMaxPendingRequests(UInt32Value.of(http.getHttp1MaxPendingRequests())); // HTTP/1.1 only
            }
            if (http.getMaxRetries() > 0) {
                t.setMaxRetries(UInt32Value.of(http.getMaxRetries()));
            }
            if (http.hasIdleTimeout()) {
                common.setIdleTimeout(http.getIdleTimeout());
                httpOptions = true;
            }
            if (http.getMaxRequestsPerConnection() > 0) {
                common.setMaxRequestsPerConnection(UInt32Value.of(http.getMaxRequestsPerConnection()));
                httpOptions = true;
            }
            // istiod creates the options for max_concurrent_streams too, which lands only on
            // HTTP/2 clusters: none here yet
            httpOptions |= http.getMaxConcurrentStreams() > 0;
        }
        c.setConnectTimeout(mesh.getConnectTimeout());
        if (pool.hasTcp()) {
            var tcp = pool.getTcp();
            if (tcp.hasConnectTimeout()) {
                c.setConnectTimeout(tcp.getConnectTimeout());
            }
            if (tcp.getMaxConnections() > 0) {
                t.setMaxConnections(UInt32Value.of(tcp.getMaxConnections()));
            }
            if (tcp.hasMaxConnectionDuration()) {
                common.setMaxConnectionDuration(tcp.getMaxConnectionDuration());
                httpOptions = true;
            }
            if (!common.hasIdleTimeout() && tcp.hasIdleTimeout()) {
                common.setIdleTimeout(tcp.getIdleTimeout()); // the HTTP idle timeout wins
                httpOptions = true;
            }
        }
        keepalive(c, mesh.hasTcpKeepalive() ? mesh.getTcpKeepalive() : null);
        keepalive(c, pool.getTcp().hasTcpKeepalive() ? pool.getTcp().getTcpKeepalive() : null);
        c.setCircuitBreakers(CircuitBreakers.newBuilder().addThresholds(t));
        if (httpOptions) {
            // Envoy requires an upstream protocol: istiod's default is explicit HTTP/1.1
            HttpProtocolOptions options = HttpProtocolOptions.newBuilder().setCommonHttpProtocolOptions(common)
                    .setExplicitHttpConfig(HttpProtocolOptions.ExplicitHttpConfig.newBuilder()
                            .setHttpProtocolOptions(Http1ProtocolOptions.getDefaultInstance()))
                    .build();
            c.putTypedExtensionProtocolOptions(HTTP_PROTOCOL_OPTIONS, Any.pack(options));
        }
    }

    /**
     * Mesh-wide keepalive first, then the DestinationRule's per field; any of them turns
     * SO_KEEPALIVE on (OS defaults for what is unset). Envoy takes whole seconds.
     */
    private static void keepalive(Cluster.Builder c, ConnectionPoolSettings.TCPSettings.TcpKeepalive k) {
        if (k == null) {
            return;
        }
        UpstreamConnectionOptions.Builder opts = c.getUpstreamConnectionOptionsBuilder();
        TcpKeepalive.Builder ka = opts.getTcpKeepaliveBuilder();
        if (k.getProbes() > 0) {
            ka.setKeepaliveProbes(UInt32Value.of(k.getProbes()));
        }
        if (k.hasTime()) {
            ka.setKeepaliveTime(UInt32Value.of((int) k.getTime().getSeconds()));
        }
        if (k.hasInterval()) {
            ka.setKeepaliveInterval(UInt32Value.of((int) k.getInterval().getSeconds()));
        }
    }

    /**
     * Consecutive-error ejection only: success-rate ejection is switched off. A set error count
     * is enforced at 100% (0 when the count is 0). minHealthPercent always becomes the panic
     * threshold, so its default 0 disables Envoy's panic mode (50%), which misfires with the
     * few endpoints per service typical in Kubernetes.
     */
    private static void outlierDetection(Cluster.Builder c, OutlierDetection od) {
        var out = io.envoyproxy.envoy.config.cluster.v3.OutlierDetection.newBuilder()
                .setEnforcingSuccessRate(UInt32Value.of(0));
        if (od.hasConsecutive5XxErrors()) {
            int v = od.getConsecutive5XxErrors().getValue();
            out.setConsecutive5Xx(UInt32Value.of(v)).setEnforcingConsecutive5Xx(UInt32Value.of(v > 0 ? 100 : 0));
        }
        if (od.hasConsecutiveGatewayErrors()) {
            int v = od.getConsecutiveGatewayErrors().getValue();
            out.setConsecutiveGatewayFailure(UInt32Value.of(v))
                    .setEnforcingConsecutiveGatewayFailure(UInt32Value.of(v > 0 ? 100 : 0));
        }
        if (od.hasInterval()) {
            out.setInterval(od.getInterval());
        }
        if (od.hasBaseEjectionTime()) {
            out.setBaseEjectionTime(od.getBaseEjectionTime());
        }
        if (od.getMaxEjectionPercent() > 0) {
            out.setMaxEjectionPercent(UInt32Value.of(od.getMaxEjectionPercent()));
        }
        if (od.getSplitExternalLocalOriginErrors()) {
            out.setSplitExternalLocalOriginErrors(true).setEnforcingLocalOriginSuccessRate(UInt32Value.of(0));
            int v = od.getConsecutiveLocalOriginFailures().getValue();
            if (v > 0) {
                out.setConsecutiveLocalOriginFailure(UInt32Value.of(v))
                        .setEnforcingConsecutiveLocalOriginFailure(UInt32Value.of(100));
            }
        }
        c.setOutlierDetection(out);
        if (od.getMinHealthPercent() >= 0) {
            c.getCommonLbConfigBuilder().setHealthyPanicThreshold(Percent.newBuilder()
                    .setValue(od.getMinHealthPercent()));
        }
    }

    /**
     * istiod's setH2Options: a service port speaking HTTP/2 (HTTP2, gRPC, gRPC-Web), or an HTTP
     * port the DestinationRule (else the mesh's {@code h2UpgradePolicy}) upgrades, gets HTTP/2
     * to the upstream, keeping the common HTTP options the connection pool set. Without it
     * Envoy would speak HTTP/1.1 upstream and gRPC would fail.
     */
    public static void http2(Cluster.Builder c, Protocol port, TrafficPolicy policy, MeshConfig mesh) {
        boolean h2 = port == Protocol.HTTP2 || port == Protocol.GRPC
                || port == Protocol.GRPC_WEB;
        if (!h2 && port == Protocol.HTTP) {
            var rule = policy.getConnectionPool().getHttp().getH2UpgradePolicy();
            h2 = rule == ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy.UPGRADE
                    || rule == ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy.DEFAULT
                    && mesh.getH2UpgradePolicy() == MeshConfig.H2UpgradePolicy.UPGRADE;
        }
        if (!h2) {
            return;
        }
        HttpProtocolOptions.Builder options;
        try {
            options = c.containsTypedExtensionProtocolOptions(HTTP_PROTOCOL_OPTIONS)
                    ? c.getTypedExtensionProtocolOptionsOrThrow(HTTP_PROTOCOL_OPTIONS).unpack(HttpProtocolOptions.class)
                            .toBuilder()
                    : HttpProtocolOptions.newBuilder();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("our own HttpProtocolOptions do not unpack", e);
        }
        var http2 = Http2ProtocolOptions.newBuilder();
        int streams = policy.getConnectionPool().getHttp().getMaxConcurrentStreams();
        if (streams > 0) {
            http2.setMaxConcurrentStreams(UInt32Value.of(streams));
        }
        options.setExplicitHttpConfig(HttpProtocolOptions.ExplicitHttpConfig.newBuilder().setHttp2ProtocolOptions(http2));
        c.putTypedExtensionProtocolOptions(HTTP_PROTOCOL_OPTIONS, Any.pack(options.build()));
    }
}
