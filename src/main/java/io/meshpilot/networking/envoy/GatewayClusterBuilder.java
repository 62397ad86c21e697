package io.meshpilot.networking.envoy;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.ClusterNames;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * CDS a gateway gets besides the outbound service clusters (istiod's router case of
 * BuildClusters): {@code BlackHoleCluster} (no passthrough: gateways have no original-destination
 * listener) and, when a server uses AUTO_PASSTHROUGH, the SNI-DNAT clusters
 * {@code outbound_.<port>_.<subset>_.<host>} its filter chains forward to. Those are the outbound
 * clusters under another name and without upstream TLS: the client's own mTLS passes through.
 */
public final class GatewayClusterBuilder {
    private GatewayClusterBuilder() {
    }

    public static List<Cluster> gatewayClusters(PushContext push, ProxyScope scope, MergedGateway merged) {
        List<Cluster> out = new ArrayList<>();
        out.add(SidecarClusterBuilder.blackHole(push.mesh()));
        if (merged.autoPassthrough()) {
            out.addAll(sniDnatClusters(push, scope, merged));
        }
        return out;
    }

    /** What {@link #gatewayClusters} depends on beyond the scope: equal keys, equal clusters. */
    public static String key(MergedGateway merged) {
        if (!merged.autoPassthrough()) {
            return "";
        }
        StringBuilder b = new StringBuilder("dnat");
        merged.ports().forEach(p -> p.servers().stream().filter(MergedGateway.GatewayServer::autoPassthrough)
                .forEach(s -> b.append('|').append(s.hosts())));
        return b.toString();
    }

    /** A destination AUTO_PASSTHROUGH reaches by SNI: a service port, and a subset or "". */
    record SniDnatTarget(int port, String subset, String host) {
        String name() {
            return ClusterNames.sniDnat(port, subset, host);
        }
    }

    /**
     * What AUTO_PASSTHROUGH servers with {@code serverHosts} reach (istiod's
     * builtAutoPassthroughFilterChains and buildOutboundSniDnatClusters walk the same set):
     * each port but UDP of each visible mesh service whose name the hosts cover, plain and per
     * subset of its DestinationRule.
     */
    static List<SniDnatTarget> sniDnatTargets(Collection<String> serverHosts, PushContext push, ProxyScope scope) {
        List<String> patterns = serverHosts.stream().map(MergedGateway::hostName).toList();
        List<SniDnatTarget> out = new ArrayList<>();
        for (Service s : push.services(scope)) {
            if (s.meshExternal() || patterns.stream().noneMatch(h -> GatewayRouteBuilder.matches(h, s.hostname()))) {
                continue;
            }
            List<String> subsets = new ArrayList<>();
            subsets.add("");
            push.destinationRule(s.hostname(), scope).ifPresent(dr -> ((DestinationRule) dr.spec()).getSubsetsList()
                    .forEach(sub -> subsets.add(sub.getName())));
            for (Port p : s.ports()) {
                if (p.protocol() != Protocol.UDP) {
                    subsets.forEach(subset -> out.add(new SniDnatTarget(p.port(), subset, s.hostname())));
                }
            }
        }
        return out;
    }

    private static List<Cluster> sniDnatClusters(PushContext push, ProxyScope scope, MergedGateway merged) {
        List<String> hosts = new ArrayList<>();
        merged.ports().forEach(p -> p.servers().stream().filter(MergedGateway.GatewayServer::autoPassthrough)
                .forEach(s -> hosts.addAll(s.hosts())));
        List<Cluster> out = new ArrayList<>();
        for (SniDnatTarget t : sniDnatTargets(hosts, push, scope)) {
            String name = t.name();
            ClusterBuilder.build(ClusterNames.outbound(t.port(), t.subset(), t.host()), push, scope,
                    ClusterBuilder.Client.GATEWAY).ifPresent(c -> {
                Cluster.Builder b = c.toBuilder().setName(name).clearTransportSocket().clearTransportSocketMatches();
                if (b.hasEdsClusterConfig()) {
                    b.getEdsClusterConfigBuilder().setServiceName(name);
                }
                if (b.hasLoadAssignment()) {
                    b.setLoadAssignment(b.getLoadAssignment().toBuilder().setClusterName(name));
                }
                out.add(b.build());
            });
        }
        return out;
    }
}
