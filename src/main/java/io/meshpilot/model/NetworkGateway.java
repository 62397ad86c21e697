package io.meshpilot.model;

import java.util.Comparator;

/**
 * The east-west gateway of a network (istiod's model.NetworkGateway): where a proxy of another
 * network sends traffic for this network's endpoints (mTLS with the endpoint's SNI, on 15443
 * by default).
 *
 * @param network the network it serves
 * @param cluster the cluster it runs in; "" for a meshNetworks gateway given by address
 * @param address an IP address, or a hostname (a load balancer's name)
 * @param port    the port that takes cross-network mTLS
 */
public record NetworkGateway(String network, String cluster, String address, int port) {
    /** istiod's SortGateways (address, then port), then network and cluster so that the order is total. */
    public static final Comparator<NetworkGateway> ORDER = Comparator.comparing(NetworkGateway::address)
            .thenComparingInt(NetworkGateway::port).thenComparing(NetworkGateway::network)
            .thenComparing(NetworkGateway::cluster);
}
