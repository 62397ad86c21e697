package io.meshpilot.networking;

import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;

/**
 * Which DestinationRule traffic policy applies to one cluster, as istiod chooses it
 * (GetPortLevelTrafficPolicy, MergeSubsetTrafficPolicy). A {@code portLevelSettings} entry
 * for the cluster's port replaces its policy as a whole: fields the entry leaves out fall back
 * to defaults, they are not inherited from the level above (as Istio's API documents). A
 * subset's policy then overrides the host's field by field (load balancer, connection pool,
 * outlier detection, TLS; tunnel, proxy protocol and retry budget too), unless the subset has an entry for
 * the port: that entry replaces all four fields, unset ones included. The results carry no
 * port-level settings: they are the policy of that one port.
 */
public final class TrafficPolicies {
    private TrafficPolicies() {
    }

    /** The policy for {@code port}: its port-level entry if there is one, else {@code policy}. */
    public static TrafficPolicy forPort(TrafficPolicy policy, int port) {
        TrafficPolicy.PortTrafficPolicy entry = portEntry(policy, port);
        if (entry == null) {
            return policy.toBuilder().clearPortLevelSettings().build();
        }
        // the entry stands alone: tunnel, proxy protocol and retry budget are not carried over
        TrafficPolicy.Builder b = TrafficPolicy.newBuilder();
        if (entry.hasLoadBalancer()) {
            b.setLoadBalancer(entry.getLoadBalancer());
        }
        if (entry.hasConnectionPool()) {
            b.setConnectionPool(entry.getConnectionPool());
        }
        if (entry.hasOutlierDetection()) {
            b.setOutlierDetection(entry.getOutlierDetection());
        }
        if (entry.hasTls()) {
            b.setTls(entry.getTls());
        }
        return b.build();
    }

    /**
     * The policy of a subset's cluster on {@code port}: the host's (for the port) overridden by the
     * subset's (for the port); {@code subset} is null when the subset has no traffic policy.
     */
    public static TrafficPolicy forSubset(TrafficPolicy host, TrafficPolicy subset, int port) {
        TrafficPolicy base = forPort(host, port);
        if (subset == null) {
            return base;
        }
        boolean wholesale = portEntry(subset, port) != null;
        TrafficPolicy over = forPort(subset, port);
        TrafficPolicy.Builder merged = base.toBuilder(); // has no port-level settings left
        // a subset's port entry replaces even the fields it leaves unset
        if (over.hasLoadBalancer()) {
            merged.setLoadBalancer(over.getLoadBalancer());
        } else if (wholesale) {
            merged.clearLoadBalancer();
        }
        if (over.hasConnectionPool()) {
            merged.setConnectionPool(over.getConnectionPool());
        } else if (wholesale) {
            merged.clearConnectionPool();
        }
        if (over.hasOutlierDetection()) {
            merged.setOutlierDetection(over.getOutlierDetection());
        } else if (wholesale) {
            merged.clearOutlierDetection();
        }
        if (over.hasTls()) {
            merged.setTls(over.getTls());
        } else if (wholesale) {
            merged.clearTls();
        }
        if (over.hasTunnel()) {
            merged.setTunnel(over.getTunnel());
        }
        if (over.hasProxyProtocol()) {
            merged.setProxyProtocol(over.getProxyProtocol());
        }
        if (over.hasRetryBudget()) {
            merged.setRetryBudget(over.getRetryBudget());
        }
        return merged.build();
    }

    /** The first port-level entry naming {@code port} (istiod takes the first match). */
    private static TrafficPolicy.PortTrafficPolicy portEntry(TrafficPolicy policy, int port) {
        for (TrafficPolicy.PortTrafficPolicy p : policy.getPortLevelSettingsList()) {
            if (p.hasPort() && p.getPort().getNumber() == port) {
                return p;
            }
        }
        return null;
    }
}
