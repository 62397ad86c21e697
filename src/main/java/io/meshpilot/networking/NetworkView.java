package io.meshpilot.networking;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.Proxy;
import io.meshpilot.util.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a proxy's EDS depends on about networks: its own network (its {@code NETWORK} metadata,
 * "" when it names none) and the networks it asked to see (istiod's ProxyView, from
 * {@code REQUESTED_NETWORK_VIEW}, comma-separated; empty: all), and the IP families its
 * addresses have (which east-west gateways it can reach).
 *
 * @param requested the requested networks; endpoints without a network stay visible, as in istiod
 * @param ipMode    the families of the proxy's IP addresses
 */
public record NetworkView(String network, Set<String> requested, IpMode ipMode) {
    static final String REQUESTED_NETWORK_VIEW = "REQUESTED_NETWORK_VIEW";

    /** istiod's Proxy IP mode (DiscoverIPMode over its IP addresses); UNKNOWN when none parses. */
    public enum IpMode {
        UNKNOWN, IPV4, IPV6, DUAL;

        public static IpMode of(List<String> ips) {
            boolean v4 = false;
            boolean v6 = false;
            for (String ip : ips) {
                if (IpAddr.isAddress(ip)) {
                    IpAddr a = IpAddr.parse(ip);
                    v4 |= a.is4();
                    v6 |= a.is6();
                }
            }
            return v4 && v6 ? DUAL : v4 ? IPV4 : v6 ? IPV6 : UNKNOWN;
        }

        /**
         * istiod's filterGatewaysByIPFamily: the gateways whose address family the proxy has
         * (an IPv4-mapped IPv6 address counts as IPv4); all of them when its mode is unknown or
         * dual.
         */
        List<NetworkGateway> reachable(List<NetworkGateway> gateways) {
            if (this == UNKNOWN || this == DUAL) {
                return gateways;
            }
            List<NetworkGateway> out = new ArrayList<>(gateways.size());
            for (NetworkGateway g : gateways) {
                if (IpAddr.isAddress(g.address())) {
                    IpAddr a = IpAddr.parse(g.address());
                    boolean v4 = a.is4() || a.is4In6();
                    if (v4 ? this == IPV4 : this == IPV6) {
                        out.add(g);
                    }
                }
            }
            return out.size() == gateways.size() ? gateways : out;
        }
    }

    public NetworkView {
        requested = Set.copyOf(requested);
    }

    /** A view of a proxy whose IP families are unknown: every gateway is reachable. */
    public NetworkView(String network, Set<String> requested) {
        this(network, requested, IpMode.UNKNOWN);
    }

    public static NetworkView of(Proxy proxy) {
        Set<String> requested = new TreeSet<>();
        for (String n : proxy.metadata().getOrDefault(REQUESTED_NETWORK_VIEW, "").split(",")) {
            if (!n.isBlank()) {
                requested.add(n.strip());
            }
        }
        return new NetworkView(proxy.network(), requested, IpMode.of(proxy.ips()));
    }

    /** Whether the proxy may see {@code endpoint} at all. */
    boolean visible(IstioEndpoint endpoint) {
        return requested.isEmpty() || endpoint.network().isEmpty() || requested.contains(endpoint.network());
    }
}
