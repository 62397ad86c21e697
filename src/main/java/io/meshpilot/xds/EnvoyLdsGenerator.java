package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoy.GatewayListenerBuilder;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/** Envoy LDS: istiod's wildcard listener set for sidecars, the merged Gateways' listeners for routers. */
final class EnvoyLdsGenerator implements Generator {
    private final XdsCache cache;

    EnvoyLdsGenerator(XdsCache cache) {
        this.cache = cache;
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        if (proxy.type() != Proxy.Type.SIDECAR) {
            return GatewayListenerBuilder.listeners(proxy, push, MergedGateway.of(proxy, push)).stream()
                    .map(Any::pack).toList();
        }
        // virtualInbound holds the proxy's own ports and PeerAuthentication: built per proxy
        ProxyScope scope = push.scope(proxy);
        List<Any> outbound = cache.outboundListeners(push.version(), outboundKey(proxy, push),
                () -> SidecarListenerBuilder.outboundListeners(proxy, push, scope).stream().map(Any::pack).toList());
        List<Any> all = new ArrayList<>(outbound.size() + 1);
        all.addAll(outbound);
        all.add(Any.pack(SidecarListenerBuilder.inboundListener(proxy, push)));
        return all;
    }

    /**
     * A sidecar's outbound listeners are shared by the scope's proxies of one cluster (VIPs are
     * per cluster), per labels only when some VirtualService matches on sourceLabels, and per
     * applicable Telemetry/WasmPlugin set when some of those select workloads.
     */
    static String outboundKey(Proxy proxy, PushContext push) {
        return push.scope(proxy).key() + "|cluster:" + proxy.clusterId() + (push.routesDependOnProxyLabels()
                ? "|labels:" + new TreeMap<>(proxy.labels()) : "")
                + SidecarListenerBuilder.workloadExtensionsKey(proxy, push);
    }
}
