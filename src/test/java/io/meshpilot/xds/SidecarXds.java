package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.LocalityLoadBalancer;
import io.meshpilot.networking.NetworkView;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * One Envoy sidecar's complete configuration, the four state-of-the-world responses (CDS, EDS,
 * LDS, RDS), built two ways for the sidecar translation benchmark and its test:
 * <ul>
 * <li>{@link #uncached}: the builders directly, every resource packed into an Any and every
 * response serialized, on every call (a server without PILOT_ENABLE_XDS_CACHE, or the first
 * proxy of its scope);</li>
 * <li>{@link #cached}: the server's own push path ({@link AdsProtocol#sotwResponse}) over
 * an enabled {@link XdsCache} and {@link SharedResponses}, serialized as its marshaller does
 * (shared responses' bytes were encoded once). After one proxy of a scope warmed them, this is
 * what each further proxy of that scope costs.</li>
 * </ul>
 * It lives in the xds package (test sources) because the generators, the cache and the shared
 * responses are package-private; they stay so. {@link #cached} uses generators over a cache of
 * this helper's own, as each server has its own.
 */
public final class SidecarXds implements AutoCloseable {
    /**
     * What a connected sidecar subscribes to besides wildcard CDS and LDS: the route names its
     * listeners reference and its EDS clusters. Held per connection as the server holds them
     * (sorted once); a new instance per proxy, as each connection has its own.
     */
    public record Subscriptions(Set<String> routes, Set<String> edsClusters) {
    }

    /** The four responses, in the order Envoy asks, and their total serialized size. */
    public record Config(DiscoveryResponse cds, DiscoveryResponse eds, DiscoveryResponse lds, DiscoveryResponse rds,
                         long bytes) {
        public List<DiscoveryResponse> responses() {
            return List.of(cds, eds, lds, rds);
        }
    }

    private final XdsCache cache = new XdsCache(true);
    private final SharedResponses shared = new SharedResponses();
    private final Generators generators = Generators.standalone(cache);

    /** What {@code proxy} would subscribe to after receiving its LDS and CDS (read from an uncached build). */
    public static Subscriptions subscriptions(Proxy proxy, PushContext push) throws Exception {
        ProxyScope scope = push.scope(proxy);
        Set<String> eds = new TreeSet<>();
        for (Cluster c : ClusterBuilder.all(push, scope)) {
            if (c.getType() == Cluster.DiscoveryType.EDS) {
                eds.add(c.getName());
            }
        }
        return new Subscriptions(routeNames(SidecarListenerBuilder.listeners(proxy, push, scope)),
                SubscribedNames.of(eds));
    }

    /** The route configurations {@code listeners} reference over RDS: what Envoy asks for next, sorted. */
    static Set<String> routeNames(List<Listener> listeners) throws InvalidProtocolBufferException {
        Set<String> routes = new TreeSet<>();
        for (Listener l : listeners) {
            List<FilterChain> chains = new ArrayList<>(l.getFilterChainsList());
            if (l.hasDefaultFilterChain()) {
                chains.add(l.getDefaultFilterChain());
            }
            for (FilterChain c : chains) {
                for (var f : c.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        HttpConnectionManager hcm = f.getTypedConfig().unpack(HttpConnectionManager.class);
                        if (hcm.hasRds()) {
                            routes.add(hcm.getRds().getRouteConfigName());
                        }
                    }
                }
            }
        }
        return SubscribedNames.of(routes);
    }

    /** The builders directly, as a server without the cache: everything built, packed and serialized. */
    public static Config uncached(Proxy proxy, PushContext push, Subscriptions subs) {
        DiscoveryResponse cds = cds(proxy, push);
        DiscoveryResponse eds = eds(proxy, push, subs);
        DiscoveryResponse lds = lds(proxy, push);
        DiscoveryResponse rds = rds(proxy, push, subs);
        long bytes = 0;
        for (DiscoveryResponse r : List.of(cds, eds, lds, rds)) {
            bytes += r.toByteArray().length; // what the gRPC marshaller does for each stream
        }
        return new Config(cds, eds, lds, rds, bytes);
    }

    /** Uncached CDS: istiod's sidecar order, outbound, then BlackHole/Passthrough, then inbound. */
    public static DiscoveryResponse cds(Proxy proxy, PushContext push) {
        List<Any> clusters = packed(ClusterBuilder.all(push, push.scope(proxy)));
        clusters.addAll(packed(SidecarClusterBuilder.meshClusters(push.mesh())));
        clusters.addAll(packed(SidecarClusterBuilder.inboundClusters(proxy, push)));
        return response(TypeUrls.CLUSTER, push, clusters);
    }

    /** Uncached EDS: one assignment per subscribed cluster. */
    public static DiscoveryResponse eds(Proxy proxy, PushContext push, Subscriptions subs) {
        ProxyScope scope = push.scope(proxy);
        List<Any> endpoints = new ArrayList<>();
        for (String n : subs.edsClusters()) {
            EndpointBuilder.build(n, push, scope, NetworkView.of(proxy), LocalityLoadBalancer.ProxyLocality.of(proxy))
                    .ifPresent(a -> endpoints.add(Any.pack(a)));
        }
        return response(TypeUrls.ENDPOINT, push, endpoints);
    }

    public static DiscoveryResponse lds(Proxy proxy, PushContext push) {
        return response(TypeUrls.LISTENER, push, packed(SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy))));
    }

    /** Uncached RDS: one route configuration per subscribed route name. */
    public static DiscoveryResponse rds(Proxy proxy, PushContext push, Subscriptions subs) {
        ProxyScope scope = push.scope(proxy);
        List<Any> routes = new ArrayList<>();
        for (String n : subs.routes()) {
            SidecarRouteBuilder.build(n, push, scope, proxy.labels()).ifPresent(r -> routes.add(Any.pack(r)));
        }
        return response(TypeUrls.ROUTE, push, routes);
    }

    /** The server's push path with the cache and shared responses: see the class comment. */
    public Config cached(Proxy proxy, PushContext push, Subscriptions subs) {
        DiscoveryResponse cds = sotw(proxy, TypeUrls.CLUSTER, SubscribedNames.EMPTY, true, push);
        DiscoveryResponse eds = sotw(proxy, TypeUrls.ENDPOINT, subs.edsClusters(), false, push);
        DiscoveryResponse lds = sotw(proxy, TypeUrls.LISTENER, SubscribedNames.EMPTY, true, push);
        DiscoveryResponse rds = sotw(proxy, TypeUrls.ROUTE, subs.routes(), false, push);
        long bytes = 0;
        for (DiscoveryResponse r : List.of(cds, eds, lds, rds)) {
            byte[] encoded = shared.encoded(r); // the marshaller writes a shared response's bytes as they are
            bytes += encoded != null ? encoded.length : r.toByteArray().length;
        }
        return new Config(cds, eds, lds, rds, bytes);
    }

    private DiscoveryResponse sotw(Proxy proxy, String typeUrl, Set<String> names, boolean wildcard, PushContext push) {
        return AdsProtocol.sotwResponse(proxy, generators.forType(typeUrl, proxy), typeUrl, names, wildcard, push,
                cache, shared);
    }

    private static List<Any> packed(List<? extends Message> resources) {
        List<Any> out = new ArrayList<>(resources.size());
        resources.forEach(r -> out.add(Any.pack(r)));
        return out;
    }

    /** As the server builds a response (a nonce per response). */
    private static DiscoveryResponse response(String typeUrl, PushContext push, List<Any> resources) {
        return DiscoveryResponse.newBuilder().setTypeUrl(typeUrl).setVersionInfo(Long.toString(push.version()))
                .setNonce(UUID.randomUUID().toString()).addAllResources(resources).build();
    }

    /** The generators over this helper's cache, as the server's are over its own. */
    Generators generators() {
        return generators;
    }

    @Override
    public void close() {
        // nothing global to restore: the cache and generators are this helper's own
    }
}
