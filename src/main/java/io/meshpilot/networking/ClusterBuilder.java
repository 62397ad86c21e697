package io.meshpilot.networking;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.model.Port;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * CDS: outbound clusters ({@code outbound|port|subset|host}) per service port and per
 * DestinationRule subset: EDS for mesh endpoints, STRICT_DNS (LOGICAL_DNS for
 * DNS_ROUND_ROBIN and for gRPC) with the endpoints inline for DNS resolution, ORIGINAL_DST
 * for resolution NONE (not for gRPC); endpoints over ADS. Envoy clusters get the DestinationRule's
 * traffic policy for their port and subset ({@link TrafficPolicies}): load balancer, connection
 * pool and outlier detection ({@link ClusterTrafficPolicy}); upstream TLS ({@link UpstreamTls}), tried
 * after HBONE while HBONE is sent ({@link HboneTransportSockets}). Proxyless
 * gRPC clients get only the load-balancer policy (the subset's over the host's), and only the
 * policies gRPC implements over {@code lb_policy} (round robin, ring hash), as istiod's gRPC
 * generator: grpc-js-xds NACKs a whole CDS response holding a {@code LEAST_REQUEST} (or
 * {@code RANDOM}) cluster.
 */
public final class ClusterBuilder {
    private ClusterBuilder() {
    }

    /**
     * Who the clusters are for. A DestinationRule's {@code credentialName} (a Secret of the
     * cluster) is applied at gateways only: istiod leaves a sidecar's SIMPLE or MUTUAL cluster with
     * one without TLS, so that a rule meant for a gateway does not hand every sidecar of its scope
     * a Secret reference it may not read (and cannot start without).
     */
    public enum Client {
        SIDECAR, GATEWAY, PROXYLESS
    }

    /** The cluster of one name for a sidecar, or empty when the name is no known service port (or subset). */
    public static Optional<Cluster> build(String name, PushContext push, ProxyScope scope) {
        return build(name, push, scope, Client.SIDECAR);
    }

    /**
     * The cluster of one name for Envoy or, when {@code proxyless}, for a gRPC client: only
     * round robin or ring hash then, other simple policies fall back to round robin (istiod's
     * gRPC generator warns "cannot apply LbPolicy" and leaves ROUND_ROBIN).
     */
    public static Optional<Cluster> build(String name, PushContext push, ProxyScope scope, boolean proxyless) {
        return build(name, push, scope, proxyless ? Client.PROXYLESS : Client.SIDECAR);
    }

    /** The cluster of one name for {@code client}, or empty when the name is no known service port (or subset). */
    public static Optional<Cluster> build(String name, PushContext push, ProxyScope scope, Client client) {
        boolean proxyless = client == Client.PROXYLESS;
        ClusterNames.Outbound o = ClusterNames.parseOutbound(name);
        if (o == null || !name.startsWith("outbound|")) { // SNI-DNAT clusters are the gateway builder's
            return Optional.empty();
        }
        Service svc = push.service(o.host(), scope).orElse(null);
        if (svc == null || svc.port(o.port()).isEmpty()) {
            return Optional.empty();
        }
        var drConfig = push.destinationRule(o.host(), scope);
        var dr = drConfig.map(c -> (DestinationRule) c.spec());
        Subset subset = null;
        if (!o.subset().isEmpty()) {
            subset = dr.flatMap(d -> d.getSubsetsList().stream()
                    .filter(s -> s.getName().equals(o.subset())).findFirst()).orElse(null);
            if (subset == null) {
                return Optional.empty();
            }
        }
        TrafficPolicy hostPolicy = dr.map(DestinationRule::getTrafficPolicy).orElse(TrafficPolicy.getDefaultInstance());
        TrafficPolicy policy = proxyless ? grpcPolicy(hostPolicy, subset) : envoyPolicy(hostPolicy, subset, o.port());
        Cluster.Builder c = Cluster.newBuilder().setName(name)
                .setLbPolicy(proxyless ? grpcLbPolicy(policy) : lbPolicy(policy));
        switch (svc.resolution()) {
            case DNS_LB, DNS_ROUND_ROBIN_LB -> {
                // the proxy resolves the names itself: endpoints go inline, not over EDS (EDS
                // endpoints must be IPs). gRPC knows only LOGICAL_DNS, with one endpoint.
                boolean logical = proxyless || svc.resolution() == Resolution.DNS_ROUND_ROBIN_LB;
                var assignment = EndpointBuilder.build(name, push, scope)
                        .orElse(ClusterLoadAssignment.getDefaultInstance());
                if (logical) {
                    assignment = firstEndpointOnly(assignment);
                    if (proxyless && assignment.getEndpointsCount() == 0) {
                        return Optional.empty(); // gRPC rejects a LOGICAL_DNS cluster without its one endpoint
                    }
                }
                if (assignment.getEndpointsCount() == 0) {
                    push.addMetric(PushMetric.DNS_NO_ENDPOINT_CLUSTERS, name, "",
                            (logical ? "LOGICAL_DNS" : "STRICT_DNS") + " cluster without endpoints " + name
                                    + " found while pushing CDS");
                }
                c.setType(logical ? Cluster.DiscoveryType.LOGICAL_DNS : Cluster.DiscoveryType.STRICT_DNS)
                        .setLoadAssignment(assignment.toBuilder().setClusterName(name));
            }
            case PASSTHROUGH -> {
                if (proxyless) {
                    return Optional.empty(); // gRPC has no original-destination clusters
                }
                c.setType(Cluster.DiscoveryType.ORIGINAL_DST).setLbPolicy(Cluster.LbPolicy.CLUSTER_PROVIDED);
            }
            // istiod's maybeApplyEdsConfig: named service, over ADS, no initial fetch timeout (Envoy's is 15 s)
            default -> c.setType(Cluster.DiscoveryType.EDS)
                    .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setServiceName(name)
                            .setEdsConfig(ConfigSource.newBuilder()
                                    .setAds(AggregatedConfigSource.getDefaultInstance())
                                    .setInitialFetchTimeout(Duration.getDefaultInstance())
                                    .setResourceApiVersion(ApiVersion.V3)));
        }
        if (!proxyless) {
            TelemetryMetadata.addServices(c, List.of(svc));
            drConfig.ifPresent(d -> TelemetryMetadata.addConfig(c, d.key()));
            // istiod gives every sidecar cluster a common_lb_config, then the traffic policy
            c.setCommonLbConfig(Cluster.CommonLbConfig.getDefaultInstance());
            ClusterTrafficPolicy.apply(c, policy, push.mesh());
            if (c.getLbPolicy() != Cluster.LbPolicy.CLUSTER_PROVIDED) {
                ClusterTrafficPolicy.loadBalancer(c, policy.getLoadBalancer());
            }
            LocalityLoadBalancer.applyToCluster(c, push.mesh(), policy, svc.trafficDistribution());
            ClusterTrafficPolicy.http2(c, svc.port(o.port()).get().protocol(), policy, push.mesh());
            // the rule's TLS, else auto mTLS (mesh default on) for services inside the mesh whose
            // namespace or mesh PeerAuthentication does not DISABLE mTLS (istiod's buildAutoMtlsSettings)
            boolean serviceAutoMtls = (!push.mesh().hasEnableAutoMtls() || push.mesh().getEnableAutoMtls().getValue())
                    && !svc.meshExternal()
                    && ServiceMtlsMode.of(push.peerAuthentications(), push.rootNamespace(), svc.namespace())
                            != PeerAuthentication.MutualTLS.Mode.DISABLE;
            boolean autoMtls = serviceAutoMtls && svc.resolution() != Resolution.PASSTHROUGH;
            if (policy.hasTls() || autoMtls) {
                var accounts = push.endpoints().shards(svc.hostname(), svc.namespace());
                UpstreamTls.apply(c, policy.getTls(), policy.hasTls(), UpstreamTls.sni(o.port(), o.subset(), o.host()),
                        accounts == null ? Set.of() : accounts.serviceAccounts(), client == Client.GATEWAY);
            }
            if (push.hboneSend().enabled()) {
                HboneTransportSockets.apply(c, policy.hasTls() ? HboneTransportSockets.Tls.RULE
                        : serviceAutoMtls ? HboneTransportSockets.Tls.AUTO : HboneTransportSockets.Tls.NONE,
                        policy.getTls().getMode());
            }
        }
        return Optional.of(c.build());
    }

    /** Envoy's policy for the cluster: istiod's port-level selection and subset merge. */
    private static TrafficPolicy envoyPolicy(TrafficPolicy host, Subset subset, int port) {
        if (subset == null) {
            return TrafficPolicies.forPort(host, port);
        }
        return TrafficPolicies.forSubset(host, subset.hasTrafficPolicy() ? subset.getTrafficPolicy() : null, port);
    }

    /** gRPC's policy as before the Envoy traffic policy: the subset's when it sets a load balancer. */
    private static TrafficPolicy grpcPolicy(TrafficPolicy host, Subset subset) {
        if (subset != null && subset.hasTrafficPolicy() && subset.getTrafficPolicy().hasLoadBalancer()) {
            return subset.getTrafficPolicy();
        }
        return host;
    }

    /**
     * Every outbound cluster {@code scope} may see: each service port, and each subset of the
     * DestinationRule that applies to it.
     */
    public static List<Cluster> all(PushContext push, ProxyScope scope) {
        return all(push, scope, Client.SIDECAR);
    }

    /** Every outbound cluster of the scope for {@code client}. */
    public static List<Cluster> all(PushContext push, ProxyScope scope, Client client) {
        List<Cluster> out = new ArrayList<>();
        for (Service svc : push.services(scope)) {
            for (Port p : svc.ports()) {
                build(ClusterNames.outbound(p.port(), "", svc.hostname()), push, scope, client).ifPresent(out::add);
                push.destinationRule(svc.hostname(), scope).ifPresent(dr -> {
                    for (Subset s : ((DestinationRule) dr.spec()).getSubsetsList()) {
                        build(ClusterNames.outbound(p.port(), s.getName(), svc.hostname()), push, scope, client)
                                .ifPresent(out::add);
                    }
                });
            }
        }
        return out;
    }

    /** LOGICAL_DNS takes exactly one locality with one endpoint: the first. */
    private static ClusterLoadAssignment firstEndpointOnly(
            ClusterLoadAssignment cla) {
        for (var locality : cla.getEndpointsList()) {
            if (locality.getLbEndpointsCount() > 0) {
                return cla.toBuilder().clearEndpoints().addEndpoints(locality.toBuilder().clearLbEndpoints()
                        .addLbEndpoints(locality.getLbEndpoints(0)).clearLoadBalancingWeight()).build();
            }
        }
        return cla.toBuilder().clearEndpoints().build();
    }

    /** What gRPC's xDS clients accept in {@code lb_policy}: ROUND_ROBIN and RING_HASH. */
    private static Cluster.LbPolicy grpcLbPolicy(TrafficPolicy policy) {
        return lbPolicy(policy) == Cluster.LbPolicy.RING_HASH ? Cluster.LbPolicy.RING_HASH : Cluster.LbPolicy.ROUND_ROBIN;
    }

    /**
     * Envoy's policy: istiod's default is LEAST_REQUEST (defaultLBAlgorithm, since Istio 1.14;
     * ROUND_ROBIN only with ENABLE_LEGACY_LB_ALGORITHM_DEFAULT), also when a load balancer is set
     * without a simple policy (locality settings alone).
     */
    private static Cluster.LbPolicy lbPolicy(TrafficPolicy policy) {
        if (!policy.hasLoadBalancer()) {
            return Cluster.LbPolicy.LEAST_REQUEST;
        }
        LoadBalancerSettings lb = policy.getLoadBalancer();
        if (lb.hasConsistentHash()) {
            return Cluster.LbPolicy.RING_HASH;
        }
        return switch (lb.getSimple()) {
            case ROUND_ROBIN -> Cluster.LbPolicy.ROUND_ROBIN;
            case RANDOM -> Cluster.LbPolicy.RANDOM;
            default -> Cluster.LbPolicy.LEAST_REQUEST;
        };
    }
}
