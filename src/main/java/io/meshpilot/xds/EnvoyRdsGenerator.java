package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoy.GatewayRouteBuilder;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** Envoy RDS: per outbound HTTP port for sidecars; per gateway port or HTTPS server for routers. */
final class EnvoyRdsGenerator implements Generator {
    private final XdsCache cache;

    EnvoyRdsGenerator(XdsCache cache) {
        this.cache = cache;
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        List<Any> out = new ArrayList<>();
        MergedEnvoyFilters efw = push.envoyFilters(proxy);
        if (proxy.type() != Proxy.Type.SIDECAR) {
            MergedGateway merged = MergedGateway.of(proxy, push);
            var portMap = efw.isEmpty() ? Map.<Integer, Set<Integer>>of()
                    : EnvoyFilterPatches.gatewayPortMap(merged);
            for (String n : Generators.ordered(names)) {
                GatewayRouteBuilder.build(n, proxy, push, merged).ifPresent(r -> out.add(
                        EnvoyFilterPatches.routeConfiguration(PatchContext.GATEWAY, efw, Any.pack(r), portMap)));
            }
            return out;
        }
        ProxyScope scope = push.scope(proxy);
        String key = routesKey(proxy, push) + CdsGenerator.envoyFilterKey(efw, PatchContext.SIDECAR_OUTBOUND);
        for (String n : Generators.ordered(names)) {
            Any r = cache.routes(push.version(), key, n, () -> EnvoyFilterPatches.routeConfiguration(
                    PatchContext.SIDECAR_OUTBOUND, efw, SidecarRouteBuilder.build(n, push, scope, proxy.labels())
                            .map(Any::pack).orElse(null)));
            if (r != null) {
                out.add(r);
            }
        }
        return out;
    }

    /** A sidecar's routes are shared by the proxies of a scope; per labels only when some VirtualService matches on sourceLabels. */
    static String routesKey(Proxy proxy, PushContext push) {
        String scope = push.scope(proxy).key();
        return push.routesDependOnProxyLabels() ? scope + "|labels:" + new TreeMap<>(proxy.labels()) : scope;
    }
}
