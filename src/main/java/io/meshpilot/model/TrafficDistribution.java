package io.meshpilot.model;

/**
 * Where a service prefers its traffic to go (istiod's model.TrafficDistribution, from a
 * Kubernetes Service's {@code spec.trafficDistribution} or the
 * {@code networking.istio.io/traffic-distribution} annotation). Anything but {@link #ANY} makes
 * locality failover the default for the service's clusters and sends unhealthy endpoints.
 */
public enum TrafficDistribution {
    /** No preference. */
    ANY,
    /** PreferClose or PreferSameZone: the same zone, then region, then network. */
    PREFER_SAME_ZONE,
    /** PreferSameNode: the same node, then subzone, zone, region and network. */
    PREFER_SAME_NODE
}
