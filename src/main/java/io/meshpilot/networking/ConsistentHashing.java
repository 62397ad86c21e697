package io.meshpilot.networking;

import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings.ConsistentHashLB;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.List;
import java.util.Optional;

/**
 * The route side of a DestinationRule's {@code consistentHash}, as istiod's route package
 * writes it: the cluster gets RING_HASH or MAGLEV ({@link ClusterTrafficPolicy}), but Envoy
 * hashes only on what the route's {@code hash_policy} names, so every route to the cluster
 * carries it (without one, requests are spread without affinity).
 */
public final class ConsistentHashing {
    private ConsistentHashing() {
    }

    /** istiod's ConsistentHashToHashPolicy: header, cookie (name, path, ttl, attributes), source IP or query parameter. */
    public static Optional<RouteAction.HashPolicy> hashPolicy(ConsistentHashLB hash) {
        if (hash == null) {
            return Optional.empty();
        }
        RouteAction.HashPolicy.Builder out = RouteAction.HashPolicy.newBuilder();
        switch (hash.getHashKeyCase()) {
            case HTTP_HEADER_NAME -> out.setHeader(RouteAction.HashPolicy.Header.newBuilder()
                    .setHeaderName(hash.getHttpHeaderName()));
            case HTTP_COOKIE -> {
                var cookie = hash.getHttpCookie();
                var c = RouteAction.HashPolicy.Cookie.newBuilder().setName(cookie.getName()).setPath(cookie.getPath());
                if (cookie.hasTtl()) {
                    c.setTtl(cookie.getTtl());
                }
                for (var a : cookie.getAttributesList()) {
                    c.addAttributes(RouteAction.HashPolicy.CookieAttribute.newBuilder()
                            .setName(a.getName()).setValue(a.getValue()));
                }
                out.setCookie(c);
            }
            case USE_SOURCE_IP -> out.setConnectionProperties(RouteAction.HashPolicy.ConnectionProperties.newBuilder()
                    .setSourceIp(hash.getUseSourceIp()));
            case HTTP_QUERY_PARAMETER_NAME -> out.setQueryParameter(RouteAction.HashPolicy.QueryParameter.newBuilder()
                    .setName(hash.getHttpQueryParameterName()));
            default -> {
                return Optional.empty();
            }
        }
        return Optional.of(out.build());
    }

    /**
     * istiod's HashForHTTPDestination: the consistent hash for a route destination (host
     * resolved, subset, port; 0 for none), the first of: the subset's port-level entry, the
     * subset's, the host's port-level entry, the host's. Null when none.
     */
    public static ConsistentHashLB forDestination(PushContext push, ProxyScope scope, String host, String subset,
                                                  int port) {
        var rule = push.destinationRule(host, scope).map(c -> (DestinationRule) c.spec()).orElse(null);
        if (rule == null) {
            return null;
        }
        ConsistentHashLB hash = hashOf(rule.getTrafficPolicy());
        ConsistentHashLB portHash = port == 0 ? null : portHash(rule.getTrafficPolicy().getPortLevelSettingsList(), port);
        for (var s : rule.getSubsetsList()) {
            if (s.getName().equals(subset)) {
                ConsistentHashLB subsetPort = port == 0 ? null
                        : portHash(s.getTrafficPolicy().getPortLevelSettingsList(), port);
                ConsistentHashLB subsetHash = hashOf(s.getTrafficPolicy());
                if (subsetPort != null) {
                    return subsetPort;
                }
                if (subsetHash != null) {
                    return subsetHash;
                }
                break;
            }
        }
        return portHash != null ? portHash : hash;
    }

    /**
     * istiod's hashForService, for the default route of a service without VirtualService: the
     * host's consistent hash, or the port-level entry's for {@code port} when it has one.
     */
    public static ConsistentHashLB forService(PushContext push, ProxyScope scope, String host, int port) {
        var rule = push.destinationRule(host, scope).map(c -> (DestinationRule) c.spec()).orElse(null);
        if (rule == null) {
            return null;
        }
        for (var p : rule.getTrafficPolicy().getPortLevelSettingsList()) {
            if (p.getPort().getNumber() == port) {
                if (p.getLoadBalancer().hasConsistentHash()) {
                    return p.getLoadBalancer().getConsistentHash();
                }
                break;
            }
        }
        return hashOf(rule.getTrafficPolicy());
    }

    private static ConsistentHashLB hashOf(TrafficPolicy p) {
        return p.getLoadBalancer().hasConsistentHash() ? p.getLoadBalancer().getConsistentHash() : null;
    }

    /** istiod's portLevelSettingsConsistentHash: the first entry for the port, its hash (or none). */
    private static ConsistentHashLB portHash(List<TrafficPolicy.PortTrafficPolicy> entries, int port) {
        for (var e : entries) {
            if (e.getPort().getNumber() == port) {
                return e.getLoadBalancer().hasConsistentHash() ? e.getLoadBalancer().getConsistentHash() : null;
            }
        }
        return null;
    }
}
