package io.meshpilot.networking.validation;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import java.util.List;

/**
 * Everything one proxy was sent: LDS, RDS, CDS and EDS. {@code endpoints} null means "not
 * given" (a golden without EDS): then EDS clusters are not required to have an assignment;
 * an empty list means the proxy got none, and every EDS cluster lacks one.
 */
public record ProxyConfig(List<Listener> listeners, List<RouteConfiguration> routes, List<Cluster> clusters,
                          List<ClusterLoadAssignment> endpoints) {
    public ProxyConfig {
        listeners = List.copyOf(listeners);
        routes = List.copyOf(routes);
        clusters = List.copyOf(clusters);
        endpoints = endpoints == null ? null : List.copyOf(endpoints);
    }

    /** Without EDS. */
    public static ProxyConfig of(List<Listener> listeners, List<RouteConfiguration> routes, List<Cluster> clusters) {
        return new ProxyConfig(listeners, routes, clusters, null);
    }

    public boolean hasEndpoints() {
        return endpoints != null;
    }
}
