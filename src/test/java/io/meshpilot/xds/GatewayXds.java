package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoy.GatewayListenerBuilder;
import io.meshpilot.networking.envoy.MergedGateway;
import java.util.Set;

/**
 * One gateway proxy's listeners and route configurations (LDS and RDS) as the server's push
 * builds them for a router ({@link AdsProtocol#sotwResponse} over the server's generators:
 * the merged Gateways, their listeners, the routes of the VirtualServices bound to them,
 * EnvoyFilter patches, each resource packed and each response serialized), for the Gateway API
 * push benchmark and its test. Gateway LDS and RDS are built per proxy (the XdsCache holds
 * sidecar config only), so this is what every gateway proxy costs on every push. It lives in
 * the xds package (test sources) because the generators are package-private, as
 * {@link SidecarXds} does for sidecars.
 */
public final class GatewayXds {
    /** The two responses and their serialized size, as the gRPC marshaller writes them. */
    public record Config(DiscoveryResponse lds, DiscoveryResponse rds, long bytes) {
    }

    private final XdsCache cache = new XdsCache(true);
    private final SharedResponses shared = new SharedResponses();
    private final Generators generators = Generators.standalone(cache);

    /**
     * The route names {@code proxy} subscribes to after its LDS: what its connection holds when a
     * push comes (read once, as Envoy asks for them once per listener change).
     */
    public static Set<String> routeNames(Proxy proxy, PushContext push) throws Exception {
        return SidecarXds.routeNames(GatewayListenerBuilder.listeners(proxy, push, MergedGateway.of(proxy, push)));
    }

    /** Wildcard LDS and RDS for {@code routeNames}, built, packed and serialized as a push does. */
    public Config config(Proxy proxy, PushContext push, Set<String> routeNames) {
        DiscoveryResponse lds = sotw(proxy, TypeUrls.LISTENER, SubscribedNames.EMPTY, true, push);
        DiscoveryResponse rds = sotw(proxy, TypeUrls.ROUTE, routeNames, false, push);
        return new Config(lds, rds, (long) lds.toByteArray().length + rds.toByteArray().length);
    }

    private DiscoveryResponse sotw(Proxy proxy, String typeUrl, Set<String> names, boolean wildcard, PushContext push) {
        return AdsProtocol.sotwResponse(proxy, generators.forType(typeUrl, proxy), typeUrl, names, wildcard, push,
                cache, shared);
    }
}
