package io.meshpilot.networking.envoy;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.List;

/**
 * LDS for an Envoy sidecar, in istiod's order: the per-service-port outbound listeners, then
 * {@code virtualOutbound}, then {@code virtualInbound}. The clusters they name are outbound
 * service clusters ({@link io.meshpilot.networking.ClusterBuilder}) and
 * {@link #extraClusters}.
 */
public final class SidecarListenerBuilder {
    private SidecarListenerBuilder() {
    }

    public static List<Listener> listeners(Proxy proxy, PushContext push, ProxyScope scope) {
        List<Listener> out = new ArrayList<>(outboundListeners(proxy, push, scope));
        out.add(inboundListener(proxy, push));
        return out;
    }

    /**
     * The per-service-port listeners and {@code virtualOutbound}: they depend on the proxy's
     * scope, its cluster (VIPs) and, only when a VirtualService matches on sourceLabels, its
     * labels (see {@link PushContext#routesDependOnProxyLabels()}).
     */
    public static List<Listener> outboundListeners(Proxy proxy, PushContext push, ProxyScope scope) {
        List<Listener> out = new ArrayList<>(SidecarOutboundListenerBuilder.outbound(proxy, push, scope));
        out.add(SidecarOutboundListenerBuilder.virtualOutbound(proxy, push, scope));
        return out;
    }

    /** {@code virtualInbound}: the proxy's own workload ports under its PeerAuthentication. */
    public static Listener inboundListener(Proxy proxy, PushContext push) {
        return SidecarInboundListenerBuilder.virtualInbound(proxy, push);
    }

    /** The non-service clusters the listeners reference (see {@link SidecarClusterBuilder}). */
    public static List<Cluster> extraClusters(Proxy proxy, PushContext push, ProxyScope scope) {
        return SidecarClusterBuilder.extraClusters(proxy, push, scope);
    }
}
