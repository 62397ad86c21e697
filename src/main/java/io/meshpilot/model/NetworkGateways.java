package io.meshpilot.model;

import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.api.mesh.v1alpha1.Network;
import io.meshpilot.util.IpAddr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The gateways of every network, as one push sees them (istiod's NetworkGateways of its
 * NetworkManager): the meshNetworks gateways given by {@code address} and those the
 * registries found (Services labelled {@code topology.istio.io/network}, meshNetworks
 * {@code registryServiceName}). EDS carries IP addresses only: a gateway given by hostname
 * stands for one gateway per address the name resolves to ({@link GatewayNames}, istiod's
 * resolveHostnameGateways), and for none while it resolves to nothing.
 */
public final class NetworkGateways {
    public static final NetworkGateways NONE = new NetworkGateways(List.of(), List.of());

    private record NetworkAndCluster(String network, String cluster) {
    }

    private final List<NetworkGateway> all;
    private final List<NetworkGateway> unresolved;
    private final Map<String, List<NetworkGateway>> byNetwork = new HashMap<>();
    private final Map<NetworkAndCluster, List<NetworkGateway>> byNetworkAndCluster = new HashMap<>();
    private final int scaleFactor;

    private NetworkGateways(Collection<NetworkGateway> gateways, Collection<NetworkGateway> unresolved) {
        this.all = sorted(gateways);
        this.unresolved = sorted(unresolved);
        for (NetworkGateway g : all) {
            byNetwork.computeIfAbsent(g.network(), n -> new ArrayList<>()).add(g);
            byNetworkAndCluster.computeIfAbsent(new NetworkAndCluster(g.network(), g.cluster()), k -> new ArrayList<>())
                    .add(g);
        }
        int lcm = 1;
        for (List<NetworkGateway> l : byNetwork.values()) {
            lcm = lcm(lcm, l.size());
        }
        for (List<NetworkGateway> l : byNetworkAndCluster.values()) {
            lcm = lcm(lcm, l.size());
        }
        this.scaleFactor = lcm;
    }

    /**
     * The meshNetworks gateways given by address, and the registries' gateways, hostnames
     * resolved by {@code names}.
     */
    public static NetworkGateways of(MeshNetworks meshNetworks, Collection<NetworkGateway> fromRegistries,
                                     GatewayNames names) {
        List<NetworkGateway> out = new ArrayList<>();
        meshNetworks.getNetworksMap().forEach((network, n) -> {
            for (Network.IstioNetworkGateway gw : n.getGatewaysList()) {
                if (!gw.getAddress().isEmpty()) {
                    out.add(new NetworkGateway(network, "", gw.getAddress(), gw.getPort()));
                }
            }
        });
        out.addAll(fromRegistries);
        Set<String> hostnames = new TreeSet<>();
        for (NetworkGateway g : out) {
            if (!IpAddr.isAddress(g.address())) {
                hostnames.add(g.address());
            }
        }
        Map<String, List<String>> resolved = names.resolve(hostnames); // also when empty: unused names are forgotten
        if (out.isEmpty()) {
            return NONE;
        }
        List<NetworkGateway> usable = new ArrayList<>();
        for (NetworkGateway g : out) {
            if (IpAddr.isAddress(g.address())) {
                usable.add(g);
                continue;
            }
            for (String address : resolved.getOrDefault(g.address(), List.of())) {
                usable.add(new NetworkGateway(g.network(), g.cluster(), address, g.port()));
            }
        }
        return new NetworkGateways(usable, out);
    }

    private static List<NetworkGateway> sorted(Collection<NetworkGateway> gateways) {
        TreeSet<NetworkGateway> sorted = new TreeSet<>(NetworkGateway.ORDER);
        sorted.addAll(gateways);
        return List.copyOf(sorted);
    }

    /** istiod's IsMultiNetworkEnabled: some network has a gateway, so EDS is split by network. */
    public boolean multiNetwork() {
        return !all.isEmpty();
    }

    /** All gateways EDS uses (those with an IP address), in istiod's order (address, port). */
    public List<NetworkGateway> all() {
        return all;
    }

    /** Every gateway, hostnames included (istiod's Unresolved gateways, for /debug). */
    public List<NetworkGateway> unresolved() {
        return unresolved;
    }

    /**
     * The gateways to reach an endpoint of {@code network} in {@code cluster}: those running in
     * that cluster if any (closer to the endpoint, and the only ones that see a service exported
     * from that cluster alone), else all of the network's (istiod's selectNetworkGateways). An
     * endpoint whose cluster is unknown ("", e.g. a WorkloadEntry's) may use any of them.
     */
    public List<NetworkGateway> forEndpoint(String network, String cluster) {
        List<NetworkGateway> inCluster = cluster.isEmpty() ? null
                : byNetworkAndCluster.get(new NetworkAndCluster(network, cluster));
        return inCluster != null ? inCluster : byNetwork.getOrDefault(network, List.of());
    }

    /**
     * istiod's GetLBWeightScaleFactor: the least common multiple of the gateway counts per
     * network and per network and cluster, so that an endpoint's weight splits evenly over the
     * gateways in front of it.
     */
    public int scaleFactor() {
        return scaleFactor;
    }

    private static int lcm(int a, int b) {
        return a / gcd(a, b) * b;
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
