package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.LocalityLoadBalancer;
import io.meshpilot.networking.NetworkView;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * EDS. An assignment depends on the service's endpoints, for a subset on the DestinationRule
 * the proxy sees, with locality load balancing on that rule and the proxy's locality, and in a
 * mesh with east-west gateways on the proxy's network, so the XdsCache shares it by cluster
 * name and those.
 */
final class EdsGenerator implements ScopedGenerator {
    private final XdsCache cache;

    EdsGenerator(XdsCache cache) {
        this.cache = cache;
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        ProxyScope scope = push.scope(proxy);
        NetworkView view = NetworkView.of(proxy);
        String networkKey = networkKey(view, push);
        LocalityLoadBalancer.ProxyLocality locality = LocalityLoadBalancer.ProxyLocality.of(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            ClusterNames.Outbound o = ClusterNames.parseOutbound(n);
            if (o == null || push.service(o.host(), scope).isEmpty()) {
                continue;
            }
            Any cla = cache.endpoints(n, ruleKey(o, push, scope, locality) + networkKey,
                    () -> EndpointBuilder.build(n, push, scope, view, locality)
                            .map(a -> packRecordingEmpty(a, push)).orElse(null));
            if (cla != null) {
                out.add(cla);
            }
        }
        return out;
    }

    /** istiod's endpoint builder records a cluster without instances (pilot_eds_no_instances) as it builds it. */
    private static Any packRecordingEmpty(ClusterLoadAssignment cla,
                                          PushContext push) {
        if (cla.getEndpointsCount() == 0) {
            push.addMetric(PushMetric.EDS_NO_INSTANCES, cla.getClusterName(), "", "");
        }
        return Any.pack(cla);
    }

    /**
     * The cache key beside the cluster name: the DestinationRule defining a subset or the
     * locality load balancing, and what of the proxy locality load balancing depends on ("" for
     * a cluster with neither).
     */
    static String ruleKey(ClusterNames.Outbound cluster, PushContext push, ProxyScope scope,
                          LocalityLoadBalancer.ProxyLocality proxy) {
        LocalityLoadBalancer.Policy locality = LocalityLoadBalancer.Policy.of(push, scope, cluster);
        boolean perProxy = locality != null && locality.changesAssignment();
        if (cluster.subset().isEmpty() && !perProxy) {
            return "";
        }
        String rule = push.destinationRule(cluster.host(), scope).map(c -> c.key().toString()).orElse("");
        return perProxy ? rule + "|" + locality.cacheKey(proxy) : rule;
    }

    /**
     * The part of a cache key or response scope that names the proxy's networks: its own only in
     * a mesh with east-west gateways, where assignments differ by network; the networks it asked
     * to see when it asked ("" otherwise).
     */
    static String networkKey(NetworkView view, PushContext push) {
        String key = push.networkGateways().multiNetwork() ? "|network:" + view.network() : "";
        return view.requested().isEmpty() ? key : key + "|view:" + view.requestedKey();
    }

    /**
     * Assignments depend on the services and rules the proxy's scope sees, on its network (see
     * {@link #networkKey}) and, through locality load balancing, on the proxy's locality (and,
     * when some rule has failover-priority labels, on its labels as that rule reads them: with
     * the cluster and network istiod adds, so that proxies differing only in those are told apart).
     */
    @Override
    public String responseScope(Proxy proxy, PushContext push, boolean wildcard) {
        String key = push.scope(proxy).key() + networkKey(NetworkView.of(proxy), push) + "|locality:" + proxy.locality();
        return push.endpointsDependOnProxyLabels()
                ? key + "|labels:" + new TreeMap<>(LocalityLoadBalancer.ProxyLocality.of(proxy).labels()) : key;
    }
}
