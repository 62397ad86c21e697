package io.meshpilot.networking;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.NetworkGateways;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A proxy's view of the networks: first only the endpoints of the networks it asked to see
 * ({@link NetworkView}), then split-horizon EDS (istiod's EndpointsByNetworkFilter, for
 * sidecars and gateways): once any
 * network has an east-west gateway, a proxy gets the endpoints of its own network directly and,
 * for each locality, one endpoint per gateway in place of the endpoints of another network
 * behind it. A gateway's weight is the sum of the endpoint weights it replaces; every weight is
 * first multiplied by {@link NetworkGateways#scaleFactor()} so that an endpoint's weight splits
 * evenly over several gateways of its network. As istiod does for sidecars: an endpoint of a
 * network without a gateway stays direct; an endpoint the client will not reach with Istio mTLS
 * (its tlsMode as {@link EndpointMtls} left it: rule TLS mode, sidecar, PeerAuthentication) is
 * left out when it would have to cross a gateway (the gateway routes by the mTLS SNI), and so is
 * one whose network's gateways are all of an IP family the proxy has no address of (istiod's
 * filterGatewaysByIPFamily); a proxy that names no network of its own reaches every network
 * that has a gateway through it. Networks may reuse pod addresses, so one address:port is sent
 * directly only once (gRPC rejects duplicates), the endpoint of the proxy's own network preferred.
 */
final class SplitHorizonFilter {
    private SplitHorizonFilter() {
    }

    /**
     * @param endpoints    the endpoints EndpointBuilder selected for one cluster, in its order
     * @return the endpoints to send, gateways after the direct endpoints of their locality
     */
    static List<IstioEndpoint> apply(List<IstioEndpoint> endpoints, NetworkGateways gateways, NetworkView view) {
        if (!view.requested().isEmpty()) {
            endpoints = endpoints.stream().filter(view::visible).toList();
        }
        String proxyNetwork = view.network();
        if (!gateways.multiNetwork()) {
            return oneEndpointPerAddress(endpoints, proxyNetwork);
        }
        int scale = gateways.scaleFactor();
        List<IstioEndpoint> direct = new ArrayList<>(endpoints.size());
        Map<Locality, Map<NetworkGateway, Long>> gatewayWeights = new LinkedHashMap<>();
        for (IstioEndpoint e : endpoints) {
            List<NetworkGateway> through = gateways.forEndpoint(e.network(), e.clusterId());
            long weight = (long) (e.lbWeight() > 0 ? e.lbWeight() : 1) * scale;
            boolean forceGateway = proxyNetwork.isEmpty() && !e.network().isEmpty() && !through.isEmpty();
            if (!forceGateway && (sameOrUnset(proxyNetwork, e.network()) || through.isEmpty())) {
                direct.add(withWeight(e, weight));
                continue;
            }
            through = view.ipMode().reachable(through);
            if (through.isEmpty() || !IstioEndpoint.TLS_ISTIO.equals(e.tlsMode())) {
                continue; // its address is not reachable either: left out, not sent directly
            }
            Map<NetworkGateway, Long> byGateway = gatewayWeights.computeIfAbsent(e.locality(),
                    l -> new TreeMap<>(NetworkGateway.ORDER));
            long share = weight / through.size();
            for (NetworkGateway g : through) {
                byGateway.merge(g, share, Long::sum);
            }
        }
        List<IstioEndpoint> out = new ArrayList<>(oneEndpointPerAddress(direct, proxyNetwork));
        gatewayWeights.forEach((locality, byGateway) -> byGateway.forEach((g, w) -> out.add(gatewayEndpoint(g,
                locality, w))));
        return out;
    }

    /**
     * The endpoints sent with their own address, one per address:port: where two networks reuse
     * an address, the one of the proxy's network (the one that address reaches from the proxy),
     * else the first.
     */
    private static List<IstioEndpoint> oneEndpointPerAddress(List<IstioEndpoint> direct, String proxyNetwork) {
        Map<String, IstioEndpoint> byAddress = new LinkedHashMap<>();
        for (IstioEndpoint e : direct) {
            byAddress.merge(e.address() + ":" + e.endpointPort(), e, (kept, other) ->
                    !kept.network().equals(proxyNetwork) && other.network().equals(proxyNetwork) ? other : kept);
        }
        return byAddress.size() == direct.size() ? direct : List.copyOf(byAddress.values());
    }

    /** istiod's Proxy.InNetwork: equal, or either side unset. */
    private static boolean sameOrUnset(String proxyNetwork, String endpointNetwork) {
        return proxyNetwork.isEmpty() || endpointNetwork.isEmpty() || proxyNetwork.equals(endpointNetwork);
    }

    /** Weights are unsigned 32-bit in EDS; the model's are ints, so a product past that is clipped. */
    private static int clip(long weight) {
        return (int) Math.min(Math.max(weight, 1), Integer.MAX_VALUE);
    }

    private static IstioEndpoint withWeight(IstioEndpoint e, long weight) {
        int w = clip(weight);
        if (w == (e.lbWeight() > 0 ? e.lbWeight() : 1)) {
            return e;
        }
        return new IstioEndpoint(e.address(), e.endpointPort(), e.servicePortName(), e.labels(), e.serviceAccount(),
                e.network(), e.locality(), e.tlsMode(), w, e.health(), e.workloadName(), e.namespace(),
                e.sendUnhealthy());
    }

    /**
     * The endpoint that stands for a gateway: its address and port, Istio mTLS, no workload; its
     * cluster and network as labels (istiod's AugmentLabels for gateways), which failover
     * priorities on {@code topology.istio.io/cluster} read.
     */
    private static IstioEndpoint gatewayEndpoint(NetworkGateway g, Locality locality, long weight) {
        Map<String, String> labels = new HashMap<>();
        if (!g.cluster().isEmpty()) {
            labels.put(IstioEndpoint.CLUSTER_LABEL, g.cluster());
        }
        if (!g.network().isEmpty()) {
            labels.put(LocalityLoadBalancer.NETWORK_LABEL, g.network());
        }
        return new IstioEndpoint(g.address(), g.port(), "", labels, "",
                g.network(), locality, IstioEndpoint.TLS_ISTIO, clip(weight), IstioEndpoint.HealthStatus.HEALTHY,
                "", "");
    }
}
