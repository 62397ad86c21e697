package io.meshpilot.registry.kube;

import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.api.mesh.v1alpha1.Network;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.util.IpAddr;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What meshNetworks says about one cluster (istiod's kube networkManager.reloadMeshNetworks).
 * An endpoint's network, as the last resort (after the pod's {@code topology.istio.io/network}
 * label and the system namespace's): a network whose endpoints include
 * {@code fromRegistry: <this cluster>} holds every endpoint of this cluster; else the network
 * whose {@code fromCidr} contains the address. And the gateways such a network names by
 * {@code registryServiceName}: Services of this cluster.
 */
final class MeshNetworkRanges {
    private static final System.Logger LOG = System.getLogger(MeshNetworkRanges.class.getName());

    private record Range(String network, byte[] prefix, int bits) {
        boolean contains(byte[] ip) {
            if (ip.length != prefix.length) {
                return false;
            }
            int full = bits / 8;
            for (int i = 0; i < full; i++) {
                if (ip[i] != prefix[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (ip[full] & mask) == (prefix[full] & mask);
        }
    }

    static final MeshNetworkRanges NONE = new MeshNetworkRanges("", List.of(), Map.of());

    private final String fromRegistry;
    private final List<Range> ranges;
    private final Map<String, List<NetworkGateway>> registryServiceGateways;

    private MeshNetworkRanges(String fromRegistry, List<Range> ranges,
                              Map<String, List<NetworkGateway>> registryServiceGateways) {
        this.fromRegistry = fromRegistry;
        this.ranges = List.copyOf(ranges);
        this.registryServiceGateways = Map.copyOf(registryServiceGateways);
    }

    static MeshNetworkRanges of(MeshNetworks networks, String clusterId) {
        if (networks == null) {
            return NONE;
        }
        String registryNetwork = "";
        List<Range> ranges = new ArrayList<>();
        Map<String, List<NetworkGateway>> serviceGateways = new HashMap<>();
        // sorted, so that overlapping or repeated claims resolve the same way every time
        for (Map.Entry<String, Network> n : new TreeMap<>(networks.getNetworksMap()).entrySet()) {
            for (Network.NetworkEndpoints e : n.getValue().getEndpointsList()) {
                if (!e.getFromCidr().isEmpty()) {
                    Range r = range(n.getKey(), e.getFromCidr());
                    if (r != null) {
                        ranges.add(r);
                    }
                }
                if (e.getFromRegistry().equals(clusterId)) {
                    if (registryNetwork.isEmpty()) {
                        registryNetwork = n.getKey();
                    } else if (!registryNetwork.equals(n.getKey())) {
                        LOG.log(Level.WARNING, "meshNetworks: networks " + registryNetwork + " and " + n.getKey()
                                + " both claim registry " + clusterId + "; its endpoints stay in " + registryNetwork);
                    }
                }
            }
            if (n.getValue().getEndpointsList().stream().anyMatch(e -> e.getFromRegistry().equals(clusterId))) {
                for (Network.IstioNetworkGateway gw : n.getValue().getGatewaysList()) {
                    if (!gw.getRegistryServiceName().isEmpty()) {
                        serviceGateways.computeIfAbsent(gw.getRegistryServiceName(), h -> new ArrayList<>())
                                .add(new NetworkGateway(n.getKey(), "", "", gw.getPort()));
                    }
                }
            }
        }
        return new MeshNetworkRanges(registryNetwork, ranges, serviceGateways);
    }

    /**
     * The gateways (network and port, no address yet) that the networks holding this cluster
     * name by {@code registryServiceName}, by service hostname.
     */
    Map<String, List<NetworkGateway>> registryServiceGateways() {
        return registryServiceGateways;
    }

    private static Range range(String network, String cidr) {
        int slash = cidr.indexOf('/');
        String addr = slash < 0 ? cidr : cidr.substring(0, slash);
        try {
            if (!IpAddr.isAddress(addr)) {
                throw new IllegalArgumentException("not an IP address");
            }
            byte[] bytes = InetAddress.getByName(addr).getAddress(); // a literal: no lookup
            int bits = slash < 0 ? bytes.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
            if (bits < 0 || bits > bytes.length * 8) {
                throw new IllegalArgumentException("prefix length out of range");
            }
            return new Range(network, bytes, bits);
        } catch (UnknownHostException | IllegalArgumentException e) {
            LOG.log(Level.WARNING, "meshNetworks: network " + network + ": fromCidr \"" + cidr
                    + "\" is not a CIDR (" + e.getMessage() + "); ignored");
            return null;
        }
    }

    /** The network of an endpoint address by meshNetworks, or "". */
    String network(String address) {
        if (!fromRegistry.isEmpty()) {
            return fromRegistry;
        }
        if (ranges.isEmpty() || !IpAddr.isAddress(address)) {
            return "";
        }
        try {
            byte[] ip = InetAddress.getByName(address).getAddress();
            for (Range r : ranges) {
                if (r.contains(ip)) {
                    return r.network();
                }
            }
        } catch (UnknownHostException e) {
            return "";
        }
        return "";
    }
}
