package io.meshpilot.networking;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Proxy;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a proxy's EDS depends on about networks: its own network (its {@code NETWORK} metadata,
 * "" when it names none) and the networks it asked to see (istiod's ProxyView, from
 * {@code REQUESTED_NETWORK_VIEW}, comma-separated; empty: all).
 *
 * @param requested the requested networks; endpoints without a network stay visible, as in istiod
 */
public record NetworkView(String network, Set<String> requested) {
    static final String REQUESTED_NETWORK_VIEW = "REQUESTED_NETWORK_VIEW";

    public NetworkView {
        requested = Set.copyOf(requested);
    }

    public static NetworkView of(Proxy proxy) {
        Set<String> requested = new TreeSet<>();
        for (String n : proxy.metadata().getOrDefault(REQUESTED_NETWORK_VIEW, "").split(",")) {
            if (!n.isBlank()) {
                requested.add(n.strip());
            }
        }
        return new NetworkView(proxy.network(), requested);
    }

    /** Whether the proxy may see {@code endpoint} at all. */
    boolean visible(IstioEndpoint endpoint) {
        return requested.isEmpty() || endpoint.network().isEmpty() || requested.contains(endpoint.network());
    }
}
