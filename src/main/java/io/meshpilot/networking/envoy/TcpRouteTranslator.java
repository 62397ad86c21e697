package io.meshpilot.networking.envoy;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.config.Config;
import io.meshpilot.model.PushContext;
import java.util.List;

/**
 * The tcp_proxy for the destinations of a VirtualService {@code tcp} or {@code tls} route
 * (istiod's buildOutboundNetworkFilters): one destination is a plain cluster, several are
 * weighted clusters (zero weights dropped), with the VirtualService as stat prefix.
 */
final class TcpRouteTranslator {
    private TcpRouteTranslator() {
    }

    static Filter tcpProxy(List<RouteDestination> route, int listenerPort, Config vs, PushContext push) {
        HttpRouteTranslator.Context ctx = new HttpRouteTranslator.Context(listenerPort, vs.namespace(), vs.name(),
                vs.namespace(), null, push.domainSuffix(), null, PushContext.MESH_GATEWAY, push);
        if (route.size() == 1) {
            String cluster = HttpRouteTranslator.cluster(route.get(0).getDestination(), ctx);
            return EnvoyFilters.tcpProxy(cluster, cluster);
        }
        TcpProxy.WeightedCluster.Builder weighted = TcpProxy.WeightedCluster.newBuilder();
        for (RouteDestination d : route) {
            if (d.getWeight() > 0) {
                weighted.addClusters(TcpProxy.WeightedCluster.ClusterWeight.newBuilder()
                        .setName(HttpRouteTranslator.cluster(d.getDestination(), ctx)).setWeight(d.getWeight()));
            }
        }
        TcpProxy proxy = TcpProxy.newBuilder().setStatPrefix(vs.name() + "." + vs.namespace())
                .setWeightedClusters(weighted).build();
        return Filter.newBuilder().setName(EnvoyFilters.TCP_PROXY).setTypedConfig(Any.pack(proxy)).build();
    }
}
