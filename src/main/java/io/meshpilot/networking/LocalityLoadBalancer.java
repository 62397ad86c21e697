package io.meshpilot.networking;

import com.google.protobuf.BoolValue;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.LocalityLoadBalancerSetting;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.model.TrafficDistribution;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Locality load balancing as istiod's loadbalancer package computes it: the effective
 * {@code localityLbSetting} (the DestinationRule's, else the one the service's traffic
 * distribution implies, else the mesh config's; {@code enabled: false} in the rule or the mesh
 * turns it off) and what it does to one proxy's ClusterLoadAssignment:
 * {@code distribute} rewrites the locality weights for the first rule whose {@code from}
 * matches the proxy's locality; otherwise, only when the cluster's policy has outlier
 * detection (without it Envoy never detects that the preferred endpoints failed, so it never
 * fails over), priorities by {@code failoverPriority} labels and then by locality (same
 * region/zone/subzone 0, same region/zone 1, same region 2, other regions 3, a region other
 * than the {@code failover} target of the proxy's region 4), renumbered without gaps.
 */
public final class LocalityLoadBalancer {
    /** The topology labels istiod adds to proxies' and endpoints' labels (labelutil.AugmentLabels). */
    static final String REGION_LABEL = "topology.kubernetes.io/region";
    static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    static final String SUBZONE_LABEL = "topology.istio.io/subzone";
    static final String NETWORK_LABEL = "topology.istio.io/network";
    static final String CLUSTER_LABEL = "topology.istio.io/cluster";
    static final String HOSTNAME_LABEL = "kubernetes.io/hostname";
    /** The node metadata key of the Kubernetes node the proxy runs on (istiod's Proxy.GetNodeName). */
    static final String NODE_NAME = "NODE_NAME";

    /** istiod's GetEffectiveLbSetting for TrafficDistributionPreferSameZone: network, then region, then zone. */
    private static final LocalityLoadBalancerSetting PREFER_SAME_ZONE = LocalityLoadBalancerSetting.newBuilder()
            .setEnabled(BoolValue.of(true))
            .addAllFailoverPriority(List.of(NETWORK_LABEL, REGION_LABEL, ZONE_LABEL)).build();
    /** For TrafficDistributionPreferSameNode: network, region, zone, subzone, then the node. */
    private static final LocalityLoadBalancerSetting PREFER_SAME_NODE = LocalityLoadBalancerSetting.newBuilder()
            .setEnabled(BoolValue.of(true))
            .addAllFailoverPriority(List.of(NETWORK_LABEL, REGION_LABEL, ZONE_LABEL, SUBZONE_LABEL, HOSTNAME_LABEL))
            .build();

    private LocalityLoadBalancer() {
    }

    /** The calling proxy as locality load balancing sees it: its locality and its (topology-augmented) labels. */
    public record ProxyLocality(Locality locality, Map<String, String> labels) {
        public ProxyLocality {
            labels = Map.copyOf(labels);
        }

        /**
         * istiod's AugmentLabels for a proxy (xds/ads.go setTopologyLabels): its node locality,
         * its labels plus region, zone, subzone, cluster, the Kubernetes node and network.
         */
        public static ProxyLocality of(Proxy proxy) {
            Map<String, String> out = withTopology(proxy.labels(), proxy.locality(), proxy.network());
            if (proxy.clusterId() != null && !proxy.clusterId().isEmpty()) {
                out.put(CLUSTER_LABEL, proxy.clusterId());
            }
            String node = proxy.metadata().getOrDefault(NODE_NAME, "");
            if (!node.isEmpty()) {
                out.put(HOSTNAME_LABEL, node);
            }
            return new ProxyLocality(proxy.locality(), out);
        }
    }

    /**
     * What applies to one cluster: the effective setting, and whether failover is on (the
     * cluster's traffic policy has outlier detection, or the service's traffic distribution
     * forces it: istiod's LocalityLBSettings.Force, which relies on endpoint health instead).
     */
    public record Policy(LocalityLoadBalancerSetting setting, boolean failover) {
        /**
         * istiod's GetEffectiveLbSetting (without zone-aware settings) for a cluster with merged
         * traffic policy {@code policy} of a service with {@code distribution}: the rule's
         * setting, else the forced one of the traffic distribution, else the mesh's; null when
         * locality LB is off.
         */
        public static Policy of(MeshConfig mesh, TrafficPolicy policy, TrafficDistribution distribution) {
            boolean outlierDetection = policy.hasOutlierDetection();
            if (policy.getLoadBalancer().hasLocalityLbSetting()) {
                var rule = policy.getLoadBalancer().getLocalityLbSetting();
                return disabled(rule) ? null : new Policy(rule, outlierDetection);
            }
            switch (distribution) {
                case PREFER_SAME_ZONE -> {
                    return new Policy(PREFER_SAME_ZONE, true);
                }
                case PREFER_SAME_NODE -> {
                    return new Policy(PREFER_SAME_NODE, true);
                }
                case ANY -> { }
            }
            if (mesh.hasLocalityLbSetting() && !disabled(mesh.getLocalityLbSetting())) {
                return new Policy(mesh.getLocalityLbSetting(), outlierDetection);
            }
            return null;
        }

        /**
         * The policy of outbound cluster {@code cluster} as {@code scope} sees its DestinationRule
         * (istiod's getOutlierDetectionAndLoadBalancerSettings: the subset's policy merged over the
         * host's, for the port); null when locality LB is off.
         */
        public static Policy of(PushContext push, ProxyScope scope, ClusterNames.Outbound cluster) {
            var rule = push.destinationRule(cluster.host(), scope).map(c -> (DestinationRule) c.spec());
            TrafficPolicy host = rule.map(DestinationRule::getTrafficPolicy).orElse(TrafficPolicy.getDefaultInstance());
            TrafficPolicy subset = rule.stream().flatMap(r -> r.getSubsetsList().stream())
                    .filter(s -> s.getName().equals(cluster.subset()) && s.hasTrafficPolicy())
                    .map(Subset::getTrafficPolicy).findFirst().orElse(null);
            TrafficDistribution distribution = push.service(cluster.host(), scope).map(Service::trafficDistribution)
                    .orElse(TrafficDistribution.ANY);
            return of(push.mesh(), TrafficPolicies.forSubset(host, subset, cluster.port()), distribution);
        }

        /** Whether the assignment differs from the plain one grouped by locality. */
        public boolean changesAssignment() {
            return setting.getDistributeCount() > 0 || failover;
        }

        /**
         * The part of an EDS cache key that this policy adds for {@code proxy}: what the
         * assignment depends on besides the DestinationRule and the mesh config (the proxy's
         * locality and its values of the failover-priority labels).
         */
        public CacheKey cacheKey(ProxyLocality proxy) {
            List<String> values = new ArrayList<>();
            if (failover && setting.getDistributeCount() == 0) {
                for (String label : setting.getFailoverPriorityList()) {
                    values.add(proxy.labels().getOrDefault(labelName(label), ""));
                }
            }
            return new CacheKey(failover, proxy.locality(), values);
        }
    }

    /**
     * What a policy's assignment depends on of one proxy, as a value: the locality and the
     * failover-priority label values (in the rule's order) come from the proxy's node, so they
     * stay fields and are never joined into a string another proxy could spell.
     */
    public record CacheKey(boolean failover, Locality locality, List<String> failoverLabelValues) {
        public CacheKey {
            failoverLabelValues = List.copyOf(failoverLabelValues);
        }
    }

    private static boolean disabled(LocalityLoadBalancerSetting s) {
        return s.hasEnabled() && !s.getEnabled().getValue();
    }

    /**
     * istiod's LocalityLBSettings.ApplyToCluster for the cluster itself: Envoy weighs
     * localities only with {@code locality_weighted_lb_config}, set when {@code distribute} is
     * given or failover applies with {@code failover} or {@code failoverPriority} rules (set
     * otherwise, it would change how LEAST_REQUEST and the others pick endpoints).
     */
    public static void applyToCluster(Cluster.Builder c, MeshConfig mesh, TrafficPolicy policy,
                                      TrafficDistribution distribution) {
        Policy effective = Policy.of(mesh, policy, distribution);
        if (effective == null) {
            return;
        }
        LocalityLoadBalancerSetting s = effective.setting();
        boolean failoverRules = s.getFailoverCount() > 0 || s.getFailoverPriorityCount() > 0;
        if (s.getDistributeCount() > 0 || effective.failover() && failoverRules) {
            c.getCommonLbConfigBuilder().setLocalityWeightedLbConfig(
                    Cluster.CommonLbConfig.LocalityWeightedLbConfig.getDefaultInstance());
        }
    }

    /**
     * istiod's ApplyLocalityLoadBalancer: rewrites {@code cla} for {@code proxy}.
     * {@code members} holds, per entry of {@code cla.endpoints} and in the same order, the
     * endpoints it was built from (for the failover-priority labels).
     */
    public static void apply(ClusterLoadAssignment.Builder cla, List<List<IstioEndpoint>> members, ProxyLocality proxy,
                             Policy policy) {
        LocalityLoadBalancerSetting s = policy.setting();
        if (s.getDistributeCount() > 0) {
            applyWeights(cla, proxy.locality(), s.getDistributeList());
        } else if (policy.failover()) {
            if (s.getFailoverPriorityCount() > 0) {
                applyFailoverPriorities(cla, members, proxy.labels(), s.getFailoverPriorityList());
                if (s.getFailoverCount() > 0) {
                    applyLocalityFailover(cla, proxy.locality(), s.getFailoverList());
                }
            } else {
                applyLocalityFailover(cla, proxy.locality(), s.getFailoverList());
            }
        }
    }

    /**
     * istiod's applyLocalityWeights: the first rule whose {@code from} matches the proxy; each
     * {@code to} pattern's weight is shared among the localities it matches (not matched by an
     * earlier pattern) in proportion to their weights, rounded up; localities no pattern
     * matches keep their place but lose their endpoints.
     */
    private static void applyWeights(ClusterLoadAssignment.Builder cla, Locality proxy,
                                     List<LocalityLoadBalancerSetting.Distribute> rules) {
        for (var rule : rules) {
            if (!matches(proxy, rule.getFrom())) {
                continue;
            }
            Set<Integer> unmatched = new TreeSet<>();
            for (int i = 0; i < cla.getEndpointsCount(); i++) {
                unmatched.add(i);
            }
            rule.getToMap().forEach((pattern, weight) -> {
                Map<Integer, Long> original = new TreeMap<>();
                long total = 0;
                for (int i : unmatched) {
                    var group = cla.getEndpoints(i);
                    if (matches(locality(group), pattern)) {
                        long w = group.hasLoadBalancingWeight()
                                ? Integer.toUnsignedLong(group.getLoadBalancingWeight().getValue()) : 1;
                        original.put(i, w);
                        total += w;
                    }
                }
                unmatched.removeAll(original.keySet());
                long sum = total;
                long to = Integer.toUnsignedLong(weight);
                original.forEach((i, w) -> {
                    double share = (double) (w * to) / sum;
                    if (share > 0) {
                        cla.getEndpointsBuilder(i).setLoadBalancingWeight(UInt32Value.of((int) Math.ceil(share)));
                    }
                });
            });
            for (int i : unmatched) {
                cla.getEndpointsBuilder(i).clearLbEndpoints();
            }
            return;
        }
    }

    /** istiod's applyLocalityFailover: locality priorities composed with those already set (x5), then renumbered. */
    private static void applyLocalityFailover(ClusterLoadAssignment.Builder cla, Locality proxy,
                                              List<LocalityLoadBalancerSetting.Failover> failover) {
        int[] priorities = new int[cla.getEndpointsCount()];
        for (int i = 0; i < priorities.length; i++) {
            Locality ep = locality(cla.getEndpoints(i));
            int priority = lbPriority(proxy, ep);
            if (priority == 3) {
                for (var f : failover) {
                    if (f.getFrom().equals(proxy.region())) {
                        if (!ep.region().equals(f.getTo())) {
                            priority = 4;
                        }
                        break;
                    }
                }
            }
            priorities[i] = cla.getEndpoints(i).getPriority() * 5 + priority;
        }
        int[] compact = compact(priorities);
        for (int i = 0; i < compact.length; i++) {
            cla.getEndpointsBuilder(i).setPriority(compact[i]);
        }
    }

    /** istiod's util.LbPriority. */
    private static int lbPriority(Locality proxy, Locality ep) {
        if (!proxy.region().equals(ep.region())) {
            return 3;
        }
        if (!proxy.zone().equals(ep.zone())) {
            return 2;
        }
        return proxy.subzone().equals(ep.subzone()) ? 0 : 1;
    }

    /**
     * istiod's applyFailoverPriorities: each locality is split by how many of the priority
     * labels (in order) its endpoints share with the proxy, then the priorities are
     * renumbered. A leading {@code topology.istio.io/network} that differs only lowers the
     * priority below all same-network ones. {@code label=value} compares with that value
     * instead of the proxy's. Nothing changes for a proxy without labels.
     */
    private static void applyFailoverPriorities(ClusterLoadAssignment.Builder cla, List<List<IstioEndpoint>> members,
                                                Map<String, String> proxyLabels, List<String> failoverPriority) {
        if (proxyLabels.isEmpty() || members.isEmpty()) {
            return;
        }
        List<LocalityLbEndpoints.Builder> split = new ArrayList<>();
        for (int g = 0; g < cla.getEndpointsCount(); g++) {
            split.addAll(splitByPriority(cla.getEndpoints(g), members.get(g), proxyLabels, failoverPriority));
        }
        int[] priorities = split.stream().mapToInt(LocalityLbEndpoints.Builder::getPriority).toArray();
        int[] compact = compact(priorities);
        cla.clearEndpoints();
        for (int i = 0; i < compact.length; i++) {
            cla.addEndpoints(split.get(i).setPriority(compact[i]));
        }
    }

    private static List<LocalityLbEndpoints.Builder> splitByPriority(LocalityLbEndpoints group,
                                                                     List<IstioEndpoint> endpoints,
                                                                     Map<String, String> proxyLabels,
                                                                     List<String> failoverPriority) {
        int lowest = failoverPriority.size();
        boolean network = failoverPriority.getFirst().equals(NETWORK_LABEL);
        Map<Integer, List<Integer>> byPriority = new TreeMap<>();
        for (int i = 0; i < endpoints.size(); i++) {
            IstioEndpoint e = endpoints.get(i);
            Map<String, String> epLabels = withTopology(e.labels(), e.locality(), e.network());
            int priority = 0;
            int adjust = 0;
            for (int j = 0; j < lowest; j++) {
                String entry = failoverPriority.get(j);
                String name = labelName(entry);
                String wanted = entry.contains("=") ? entry.substring(entry.indexOf('=') + 1) : proxyLabels.get(name);
                if (!Objects.equals(wanted == null ? "" : wanted, epLabels.getOrDefault(name, ""))) {
                    if (j == 0 && network) {
                        adjust = lowest; // another network: below every same-network priority
                        continue;
                    }
                    priority = lowest - j;
                    break;
                }
            }
            byPriority.computeIfAbsent(priority + adjust, p -> new ArrayList<>()).add(i);
        }
        List<LocalityLbEndpoints.Builder> out = new ArrayList<>();
        byPriority.forEach((priority, indexes) -> {
            LocalityLbEndpoints.Builder b = group.toBuilder().clearLbEndpoints().setPriority(priority);
            int weight = 0;
            for (int i : indexes) {
                LbEndpoint ep = group.getLbEndpoints(i);
                b.addLbEndpoints(ep);
                weight += ep.getLoadBalancingWeight().getValue();
            }
            out.add(b.setLoadBalancingWeight(UInt32Value.of(weight)));
        });
        return out;
    }

    /** Priorities from 0 without gaps, keeping their order (Envoy and gRPC want no empty priority). */
    private static int[] compact(int[] priorities) {
        int[] distinct = Arrays.stream(priorities).distinct().sorted().toArray();
        Map<Integer, Integer> rank = new HashMap<>();
        for (int i = 0; i < distinct.length; i++) {
            rank.put(distinct[i], i);
        }
        int[] out = new int[priorities.length];
        for (int i = 0; i < priorities.length; i++) {
            out[i] = rank.get(priorities[i]);
        }
        return out;
    }

    /** istiod's util.LocalityMatch: region (or *), then zone and subzone when the pattern names them (or *). */
    static boolean matches(Locality locality, String pattern) {
        Locality p = Locality.parse(pattern);
        return (p.region().equals("*") || p.region().equals(locality.region()))
                && (p.zone().isEmpty() || p.zone().equals("*") || p.zone().equals(locality.zone()))
                && (p.subzone().isEmpty() || p.subzone().equals("*") || p.subzone().equals(locality.subzone()));
    }

    private static Locality locality(LocalityLbEndpoints group) {
        var l = group.getLocality();
        return new Locality(l.getRegion(), l.getZone(), l.getSubZone());
    }

    /** The label of a failoverPriority entry ({@code label} or {@code label=value}). */
    private static String labelName(String entry) {
        int eq = entry.indexOf('=');
        return eq < 0 ? entry : entry.substring(0, eq);
    }

    private static Map<String, String> withTopology(Map<String, String> labels, Locality locality, String network) {
        Map<String, String> out = new HashMap<>(labels);
        if (!locality.region().isEmpty()) {
            out.put(REGION_LABEL, locality.region());
        }
        if (!locality.zone().isEmpty()) {
            out.put(ZONE_LABEL, locality.zone());
        }
        if (!locality.subzone().isEmpty()) {
            out.put(SUBZONE_LABEL, locality.subzone());
        }
        if (network != null && !network.isEmpty()) {
            out.putIfAbsent(NETWORK_LABEL, network);
        }
        return out;
    }
}
