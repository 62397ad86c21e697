package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoy.GatewayListenerBuilder;
import io.meshpilot.networking.envoy.HboneOrigination;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Envoy LDS: istiod's wildcard listener set for sidecars, the merged Gateways' listeners for
 * routers, and for both {@code connect_originate} while HBONE is sent.
 */
final class EnvoyLdsGenerator implements Generator {
    private final XdsCache cache;

    EnvoyLdsGenerator(XdsCache cache) {
        this.cache = cache;
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        MergedEnvoyFilters efw = push.envoyFilters(proxy);
        if (proxy.type() != Proxy.Type.SIDECAR) {
            return withConnectOriginate(EnvoyFilterPatches.listeners(PatchContext.GATEWAY, efw,
                    GatewayListenerBuilder.listeners(proxy, push, MergedGateway.of(proxy, push)).stream()
                            .map(Any::pack).toList(), false), push);
        }
        // virtualInbound holds the proxy's own ports and PeerAuthentication: built per proxy
        ProxyScope scope = push.scope(proxy);
        List<Any> outbound = cache.outboundListeners(push.version(),
                outboundKey(proxy, push) + CdsGenerator.envoyFilterKey(efw, PatchContext.SIDECAR_OUTBOUND),
                () -> patchOutbound(efw, SidecarListenerBuilder.outboundListeners(proxy, push, scope).stream()
                        .map(Any::pack).toList()));
        List<Any> inbound = EnvoyFilterPatches.listeners(PatchContext.SIDECAR_INBOUND, efw,
                SidecarListenerBuilder.inboundListeners(proxy, push).stream().map(Any::pack).toList(), true);
        // istiod: listeners that EnvoyFilters ADD in the inbound context join the inbound listeners
        List<Any> addedInbound = EnvoyFilterPatches.listeners(PatchContext.SIDECAR_INBOUND, efw, List.of(), false);
        List<Any> all = new ArrayList<>(outbound.size() + inbound.size() + addedInbound.size());
        all.addAll(outbound);
        all.addAll(inbound);
        all.addAll(addedInbound);
        return withConnectOriginate(all, push);
    }

    /**
     * istiod's BuildListeners: while HBONE is sent, sidecars and gateways get the internal listener
     * {@code connect_originate} after the patched ones (a proxy's DISABLE_HBONE_SEND does not drop it).
     */
    private static List<Any> withConnectOriginate(List<Any> listeners, PushContext push) {
        if (!push.hboneSend().enabled()) {
            return listeners;
        }
        List<Any> out = new ArrayList<>(listeners.size() + 1);
        out.addAll(listeners);
        out.add(Any.pack(HboneOrigination.listener()));
        return out;
    }

    /**
     * istiod's patchListeners for a sidecar's outbound side: the port listeners with the ADD
     * listeners of the outbound context, virtualOutbound patched alone (no ADDs), in our order.
     */
    private static List<Any> patchOutbound(MergedEnvoyFilters efw, List<Any> outbound) {
        if (efw.isEmpty()) {
            return outbound;
        }
        // SidecarListenerBuilder.outboundListeners ends with virtualOutbound
        List<Any> ports = outbound.subList(0, outbound.size() - 1);
        List<Any> virtual = outbound.subList(outbound.size() - 1, outbound.size());
        List<Any> out = new ArrayList<>(EnvoyFilterPatches.listeners(PatchContext.SIDECAR_OUTBOUND, efw, ports, false));
        out.addAll(EnvoyFilterPatches.listeners(PatchContext.SIDECAR_OUTBOUND, efw, virtual, true));
        return out;
    }

    /**
     * A sidecar's outbound listeners are shared by the scope's proxies of one cluster (VIPs are
     * per cluster), per labels only when some VirtualService matches on sourceLabels, and per
     * applicable Telemetry/WasmPlugin set when some of those select workloads, and per the
     * workload labels tracing reads when tracing applies.
     */
    static String outboundKey(Proxy proxy, PushContext push) {
        return push.scope(proxy).key() + "|cluster:" + proxy.clusterId() + (push.routesDependOnProxyLabels()
                ? "|labels:" + new TreeMap<>(proxy.labels()) : "")
                + SidecarListenerBuilder.workloadExtensionsKey(proxy, push);
    }
}
