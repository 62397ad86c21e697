package io.meshpilot.networking.envoy;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.telemetry.ListenerClass;
import io.meshpilot.networking.telemetry.ListenerTelemetry;
import io.meshpilot.networking.telemetry.TelemetrySelection;
import io.meshpilot.networking.telemetry.TracingConfigs;
import io.meshpilot.networking.wasm.WasmFilters;
import io.meshpilot.networking.wasm.WasmPlugins;
import java.util.ArrayList;
import java.util.List;

/**
 * LDS for an Envoy sidecar, in istiod's order: the per-service-port outbound listeners, then
 * {@code virtualOutbound}, then {@code virtualInbound} and the ingress ports bound on their own. The clusters they name are outbound
 * service clusters ({@link io.meshpilot.networking.ClusterBuilder}) and
 * {@link #extraClusters}.
 */
public final class SidecarListenerBuilder {
    private SidecarListenerBuilder() {
    }

    public static List<Listener> listeners(Proxy proxy, PushContext push, ProxyScope scope) {
        List<Listener> out = new ArrayList<>(outboundListeners(proxy, push, scope));
        out.addAll(inboundListeners(proxy, push));
        return out;
    }

    /**
     * The per-service-port listeners and {@code virtualOutbound}: they depend on the proxy's
     * scope, its cluster (VIPs) and, only when a VirtualService matches on sourceLabels, its
     * labels (see {@link PushContext#routesDependOnProxyLabels()}).
     */
    public static List<Listener> outboundListeners(Proxy proxy, PushContext push, ProxyScope scope) {
        ListenerTelemetry telemetry = ListenerTelemetry.forProxy(proxy, push);
        WasmFilters wasm = WasmFilters.forProxy(proxy, push);
        List<Listener> out = new ArrayList<>();
        for (Listener l : SidecarOutboundListenerBuilder.outbound(proxy, push, scope)) {
            out.add(telemetry.apply(wasm.applyNetwork(wasm.applyOutbound(l), ListenerClass.SIDECAR_OUTBOUND),
                    ListenerClass.SIDECAR_OUTBOUND, false));
        }
        out.add(telemetry.apply(SidecarOutboundListenerBuilder.virtualOutbound(proxy, push, scope),
                ListenerClass.SIDECAR_OUTBOUND, true));
        return out;
    }

    /**
     * {@link #inboundListener virtualInbound}, then the Sidecar ingress ports that bind their
     * own socket (captureMode NONE), as istiod's buildInboundListeners orders them.
     */
    public static List<Listener> inboundListeners(Proxy proxy, PushContext push) {
        List<Listener> out = new ArrayList<>();
        out.add(inboundListener(proxy, push));
        ListenerTelemetry telemetry = ListenerTelemetry.forProxy(proxy, push);
        WasmFilters wasm = WasmFilters.forProxy(proxy, push);
        for (Listener l : SidecarInboundListenerBuilder.boundInbound(proxy, push)) {
            out.add(telemetry.apply(wasm.applyNetwork(l, ListenerClass.SIDECAR_INBOUND), ListenerClass.SIDECAR_INBOUND,
                    true)); // istiod's buildInboundListener logs at listener level for these too
        }
        return out;
    }

    /**
     * {@code virtualInbound}: the proxy's own workload ports under its PeerAuthentication, with
     * Telemetry's access logs and tracing (WasmPlugins are placed by {@link SecurityFilters}).
     */
    public static Listener inboundListener(Proxy proxy, PushContext push) {
        Listener inbound = WasmFilters.forProxy(proxy, push).applyNetwork(
                SidecarInboundListenerBuilder.virtualInbound(proxy, push), ListenerClass.SIDECAR_INBOUND);
        return ListenerTelemetry.forProxy(proxy, push).apply(inbound, ListenerClass.SIDECAR_INBOUND, true);
    }

    /**
     * What, besides the scope, makes one proxy's outbound listeners differ from another's: being
     * istio-proxy (Istio's stats and metadata-exchange filters), the workload-selected
     * Telemetries and WasmPlugins that apply to it (empty when none selects by workload) and,
     * when tracing applies, the workload labels its tags read, and the parts of its own
     * ProxyConfig that differ from the mesh's, for the cache key of listeners shared by a scope.
     */
    public static String workloadExtensionsKey(Proxy proxy, PushContext push) {
        StringBuilder key = new StringBuilder(proxy.istioProxy() ? "|istio-proxy" : "");
        TelemetrySelection telemetry = TelemetrySelection.forProxy(proxy, push);
        if (TelemetrySelection.dependsOnWorkload(push)) {
            key.append("|telemetry:").append(telemetry.key());
        }
        key.append(TracingConfigs.workloadKey(telemetry, push, proxy));
        key.append(ListenerTelemetry.proxyConfigKey(proxy, push));
        if (WasmPlugins.dependsOnWorkload(push)) {
            key.append("|wasm:").append(WasmFilters.forProxy(proxy, push).key());
        }
        return key.toString();
    }

    /** The non-service clusters the listeners reference (see {@link SidecarClusterBuilder}). */
    public static List<Cluster> extraClusters(Proxy proxy, PushContext push, ProxyScope scope) {
        return SidecarClusterBuilder.extraClusters(proxy, push, scope);
    }
}
