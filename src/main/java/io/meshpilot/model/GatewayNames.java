package io.meshpilot.model;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The addresses of east-west gateways given by hostname (a load balancer's name, a meshNetworks
 * {@code address} that is no IP), as istiod's NetworkManager resolves them in the control plane
 * (RESOLVE_HOSTNAME_GATEWAYS): EDS carries IP addresses only.
 */
@FunctionalInterface
public interface GatewayNames {
    /** Resolves nothing: hostname gateways are left out. */
    GatewayNames NONE = hostnames -> Map.of();

    /**
     * The IP addresses of each of {@code hostnames} (a name without any is left out or maps to an
     * empty list). Called with every gateway hostname of the mesh each time the gateways are
     * computed, so an implementation may forget (and stop refreshing) any other name.
     */
    Map<String, List<String>> resolve(Set<String> hostnames);
}
