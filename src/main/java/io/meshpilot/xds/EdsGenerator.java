package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.HboneEndpoints;
import io.meshpilot.networking.LocalityLoadBalancer;
import io.meshpilot.networking.NetworkView;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.Map;

/**
 * EDS. An assignment depends on the service's endpoints, for a subset on the DestinationRule
 * the proxy sees, with locality load balancing on that rule and the proxy's locality, and in a
 * mesh with east-west gateways on the proxy's network, and on whether the proxy sends HBONE
 * (proxyless gRPC and DISABLE_HBONE_SEND do not), so the XdsCache shares it by cluster name and those.
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
        NetworkKey networkKey = networkKey(view, push);
        LocalityLoadBalancer.ProxyLocality locality = LocalityLoadBalancer.ProxyLocality.of(proxy);
        boolean keyable = keyable(proxy, view, locality);
        HboneEndpoints.Sender hbone = HboneEndpoints.Sender.outbound(proxy, push.hboneSend());
        List<Any> out = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            ClusterNames.Outbound o = ClusterNames.parseOutbound(n);
            if (o == null || push.service(o.host(), scope).isEmpty()) {
                continue;
            }
            Supplier<Any> build = () -> EndpointBuilder.build(n, push, scope, view, locality, hbone)
                    .map(a -> packRecordingEmpty(a, push)).orElse(null);
            Any cla = keyable ? cache.endpoints(n, new AssignmentKey(ruleKey(o, push, scope, locality), networkKey,
                    hbone), build) : build.get();
            if (cla != null) {
                out.add(cla);
            }
        }
        return out;
    }

    /**
     * Keys hold what the proxy sent (its locality, networks and labels); past this many
     * characters in all (Kubernetes label values, which these are, have at most 63 each) a
     * proxy's answers are built for it alone, so that no client can fill the bounded cache and
     * shared responses with keys of megabytes.
     */
    static final int MAX_PROXY_KEY_CHARS = 4096;

    static boolean keyable(Proxy proxy, NetworkView view, LocalityLoadBalancer.ProxyLocality locality) {
        long chars = proxy.network().length() + locality.locality().toString().length();
        for (String n : view.requested()) {
            chars += n.length();
        }
        for (var label : locality.labels().entrySet()) {
            chars += label.getKey().length() + label.getValue().length();
        }
        return chars <= MAX_PROXY_KEY_CHARS;
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
     * What a cluster's assignment depends on besides its name and endpoints, as values: parts
     * that come from the proxy's node stay fields, never joined into a string another proxy's
     * values could spell.
     */
    record AssignmentKey(RuleKey rule, NetworkKey network, HboneEndpoints.Sender hbone) {
    }

    /**
     * The DestinationRule defining a subset or the locality load balancing ("" for none), and
     * what of the proxy locality load balancing depends on (null when it does not apply).
     */
    record RuleKey(String rule, LocalityLoadBalancer.CacheKey locality) {
        static final RuleKey NONE = new RuleKey("", null);
    }

    /**
     * The proxy's networks: its own and its IP mode (which gateways it reaches) only in a mesh
     * with east-west gateways, where assignments differ by those (null otherwise); the networks
     * it asked to see (empty: all).
     */
    record NetworkKey(String network, Set<String> requested, NetworkView.IpMode ipMode) {
        NetworkKey {
            requested = Set.copyOf(requested);
        }
    }

    /** The cache key part of one cluster's rule, {@link RuleKey#NONE} for a cluster with neither subset nor locality LB. */
    static RuleKey ruleKey(ClusterNames.Outbound cluster, PushContext push, ProxyScope scope,
                           LocalityLoadBalancer.ProxyLocality proxy) {
        LocalityLoadBalancer.Policy locality = LocalityLoadBalancer.Policy.of(push, scope, cluster);
        boolean perProxy = locality != null && locality.changesAssignment();
        if (cluster.subset().isEmpty() && !perProxy) {
            return RuleKey.NONE;
        }
        String rule = push.destinationRule(cluster.host(), scope).map(c -> c.key().toString()).orElse("");
        return new RuleKey(rule, perProxy ? locality.cacheKey(proxy) : null);
    }

    static NetworkKey networkKey(NetworkView view, PushContext push) {
        boolean multiNetwork = push.networkGateways().multiNetwork();
        return new NetworkKey(multiNetwork ? view.network() : null, view.requested(),
                multiNetwork ? view.ipMode() : null);
    }

    /**
     * The scope of a shared EDS response: the services and rules the proxy's scope sees, its
     * networks, its locality and, when some rule has failover-priority labels, its labels as
     * that rule reads them (null otherwise).
     */
    record ResponseScope(String proxyScope, NetworkKey network, Locality locality, Map<String, String> labels,
                         HboneEndpoints.Sender hbone) {
    }

    /**
     * Assignments depend on the services and rules the proxy's scope sees, on its network (see
     * {@link #networkKey}) and, through locality load balancing, on the proxy's locality (and,
     * when some rule has failover-priority labels, on its labels as that rule reads them: with
     * the cluster and network istiod adds, so that proxies differing only in those are told apart).
     */
    @Override
    public Object responseScope(Proxy proxy, PushContext push, boolean wildcard) {
        NetworkView view = NetworkView.of(proxy);
        LocalityLoadBalancer.ProxyLocality locality = LocalityLoadBalancer.ProxyLocality.of(proxy);
        if (!keyable(proxy, view, locality)) {
            return new Object(); // equal to no other scope: this response is shared with nobody
        }
        return new ResponseScope(push.scope(proxy).key(), networkKey(view, push), proxy.locality(),
                push.endpointsDependOnProxyLabels() ? locality.labels() : null,
                HboneEndpoints.Sender.outbound(proxy, push.hboneSend()));
    }
}
