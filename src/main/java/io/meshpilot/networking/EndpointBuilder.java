package io.meshpilot.networking;

import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * EDS: the ClusterLoadAssignment of one outbound cluster, as istiod builds it. Endpoints of
 * the service port (and of the subset's labels), grouped by locality, each with its weight
 * (1 when unset) and health, and Istio's endpoint metadata ({@link TelemetryMetadata}: the
 * workload for telemetry; the tlsMode transport-socket match, {@code istio} only where the client
 * will use Istio mTLS: {@link EndpointMtls}). A locality's weight is the sum of
 * its endpoints' weights, which proxyless gRPC clients need to route at all. In a mesh with
 * east-west gateways, endpoints of other networks are replaced by their gateways
 * ({@link SplitHorizonFilter}). Endpoints the proxy tunnels to go through {@code connect_originate}
 * ({@link HboneEndpoints}).
 */
public final class EndpointBuilder {
    private EndpointBuilder() {
    }

    /**
     * The assignment of a cluster, every endpoint as it is, whatever its network (the endpoints
     * of DNS clusters, which are names, not addresses a gateway stands in for).
     */
    public static Optional<ClusterLoadAssignment> build(String clusterName, PushContext push,
                                                                  ProxyScope scope) {
        return build(clusterName, push, scope, null, null);
    }

    /**
     * The assignment of a cluster for one proxy: only the networks of {@code view} it asked to
     * see, split by network when the mesh has east-west gateways ({@link SplitHorizonFilter});
     * with {@code proxy} the locality load balancing of the cluster's policy
     * ({@link LocalityLoadBalancer}) sets the priorities and weights relative to it. Empty when
     * the name is no cluster we know (a known cluster without endpoints gets an assignment with
     * none, so proxies drop stale endpoints).
     *
     * @param view null: every endpoint, no split by network
     * @param proxy null: no locality load balancing
     */
    public static Optional<ClusterLoadAssignment> build(String clusterName, PushContext push, ProxyScope scope,
                                                        NetworkView view, LocalityLoadBalancer.ProxyLocality proxy) {
        return build(clusterName, push, scope, view, proxy, HboneEndpoints.Sender.NONE);
    }

    /**
     * As {@link #build(String, PushContext, ProxyScope, NetworkView, LocalityLoadBalancer.ProxyLocality)}, the
     * endpoints {@code hbone} tunnels to reached through {@code connect_originate} ({@link HboneEndpoints}).
     */
    public static Optional<ClusterLoadAssignment> build(String clusterName, PushContext push, ProxyScope scope,
                                                        NetworkView view, LocalityLoadBalancer.ProxyLocality proxy,
                                                        HboneEndpoints.Sender hbone) {
        ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(clusterName);
        ClusterNames.Outbound o = ClusterNames.parseOutbound(clusterName);
        if (o == null) {
            return Optional.empty();
        }
        Service svc = push.service(o.host(), scope).orElse(null);
        if (svc == null || svc.port(o.port()).isEmpty()) {
            return Optional.empty();
        }
        String portName = svc.port(o.port()).get().name();
        Map<String, String> subsetLabels = SubsetLabels.of(push, scope, o.host(), o.subset());
        EndpointIndex.Shards shards = push.endpoints().shards(svc.hostname(), svc.namespace());
        List<IstioEndpoint> all = shards == null ? List.of() : shards.all();
        List<IstioEndpoint> selected = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        EndpointMtls mtls = EndpointMtls.of(push, scope, o);
        Set<IstioEndpoint> tunneled = Collections.newSetFromMap(new IdentityHashMap<>());
        for (IstioEndpoint e : all) {
            if (!e.servicePortName().equals(portName) || !LabelSelector.subsetOf(subsetLabels, e.labels()) || !e.sentToProxies()) {
                continue;
            }
            if (!seen.add(e.network() + "|" + e.address() + "|" + e.endpointPort())) {
                continue; // one endpoint reported by two shards of a network once (the first, e.g. the oldest shard)
            }
            IstioEndpoint sent = IstioEndpoint.TLS_ISTIO.equals(e.tlsMode()) && !mtls.enabled(e)
                    ? e.withTlsMode(IstioEndpoint.TLS_DISABLED) : e;
            selected.add(sent);
            if (hbone.tunnels(e)) { // on the endpoint's own TLS mode, as istiod decides
                tunneled.add(sent);
            }
        }
        // a gateway sends a service that asks for it to its waypoint instead (istiod's findServiceWaypoint)
        List<IstioEndpoint> waypoint = hbone.toServiceWaypoints() ? HboneEndpoints.serviceWaypointEndpoints(push, svc) : null;
        if (waypoint != null) {
            selected = waypoint;
        }
        if (view != null) {
            selected = SplitHorizonFilter.apply(selected, push.networkGateways(), view);
        }
        Map<String, LocalityLbEndpoints.Builder> byLocality = new TreeMap<>();
        Map<String, Integer> weights = new TreeMap<>();
        Map<String, List<IstioEndpoint>> members = new TreeMap<>();
        for (IstioEndpoint e : selected) {
            String key = e.locality().toString();
            LocalityLbEndpoints.Builder group = byLocality.computeIfAbsent(key, k -> LocalityLbEndpoints.newBuilder()
                    .setLocality(Locality.newBuilder().setRegion(e.locality().region()).setZone(e.locality().zone())
                            .setSubZone(e.locality().subzone())));
            int weight = e.lbWeight() > 0 ? e.lbWeight() : 1;
            LbEndpoint.Builder ep = LbEndpoint.newBuilder()
                    .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                            SocketAddress.newBuilder().setAddress(e.address()).setPortValue(e.endpointPort()))))
                    .setHealthStatus(health(e.health()))
                    .setLoadBalancingWeight(UInt32Value.of(weight))
                    .setMetadata(TelemetryMetadata.endpoint(e));
            if (waypoint != null) {
                HboneEndpoints.throughWaypoint(ep, e,
                        HboneEndpoints.hostPort(HboneEndpoints.vip(svc, e.clusterId()), o.port()));
            } else if (tunneled.contains(e)) {
                HboneEndpoints.throughTunnel(ep, e, hbone);
            }
            group.addLbEndpoints(ep);
            weights.merge(key, weight, Integer::sum);
            members.computeIfAbsent(key, k -> new ArrayList<>()).add(e);
        }
        byLocality.forEach((k, g) -> cla.addEndpoints(g.setLoadBalancingWeight(UInt32Value.of(weights.get(k)))));
        LocalityLoadBalancer.Policy locality = proxy == null ? null : LocalityLoadBalancer.Policy.of(push, scope, o);
        if (locality != null && locality.changesAssignment()) {
            LocalityLoadBalancer.apply(cla, List.copyOf(members.values()), proxy, locality);
        }
        return Optional.of(cla.build());
    }

    private static HealthStatus health(IstioEndpoint.HealthStatus h) {
        return switch (h) {
            case HEALTHY -> HealthStatus.HEALTHY;
            case UNHEALTHY -> HealthStatus.UNHEALTHY;
            case DRAINING, TERMINATING -> HealthStatus.DRAINING;
        };
    }
}
