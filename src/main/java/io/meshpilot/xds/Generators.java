package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.envoy.GatewayClusterBuilder;
import io.meshpilot.networking.envoy.GatewayListenerBuilder;
import io.meshpilot.networking.envoy.GatewayRouteBuilder;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import io.meshpilot.networking.grpcgen.GrpcInboundListenerBuilder;
import io.meshpilot.networking.grpcgen.GrpcListenerBuilder;
import io.meshpilot.networking.grpcgen.GrpcRouteBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which generator serves which type for which proxy (istiod picks by the GENERATOR metadata,
 * then the proxy type): proxyless gRPC clients get the gRPC generator's LDS/RDS and the
 * shared CDS/EDS; Envoy sidecars get istiod's sidecar CDS, EDS, LDS and RDS; gateways (router
 * proxies) get the listeners, routes and clusters of the Gateways that select them. Envoy
 * proxies get SDS (gateways' credentialName secrets) from {@link SecretGenerator}.
 */
final class Generators {
    private Generators() {
    }

    /** Shared across proxies; set by the DiscoveryServer at start. */
    static volatile XdsCache cache = new XdsCache(false);

    /**
     * SDS over the running server's credentials; set by the DiscoveryServer at start. Envoy
     * proxies only (proxyless gRPC clients get their certificates from their agent), and only
     * through {@link #forConnection}: what a stream may have depends on its verified identities.
     */
    static volatile SecretGenerator sds = new SecretGenerator(() -> io.meshpilot.security.credentials.CredentialStore.EMPTY);

    /** istio.io/debug/syncz over the connections of the running DiscoveryServer; set at start. */
    static volatile Generator syncz = (proxy, push, names, wildcard) -> List.of();

    /**
     * EDS. An assignment depends on the service's endpoints and, for a subset, on the labels
     * of the DestinationRule the proxy sees, so it is shared by cluster and that rule.
     */
    static final Generator EDS = (proxy, push, names, wildcard) -> {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : ordered(names)) {
            ClusterNames.Outbound o = ClusterNames.parseOutbound(n);
            if (o == null || push.service(o.host(), scope).isEmpty()) {
                continue;
            }
            String rule = o.subset().isEmpty() ? "" : push.destinationRule(o.host(), scope)
                    .map(c -> c.key().toString()).orElse("");
            Any cla = cache.endpoints(n, rule, () -> EndpointBuilder.build(n, push, scope).map(Any::pack).orElse(null));
            if (cla != null) {
                out.add(cla);
            }
        }
        return out;
    };

    /** CDS; sidecars' wildcard list is shared by every proxy of the same {@link ProxyScope#key()}. */
    static final Generator CDS = (proxy, push, names, wildcard) -> {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        if (wildcard && !proxy.proxyless()) {
            List<Any> shared = cache.clusters(push.version(), scope.key(),
                    () -> ClusterBuilder.all(push, scope).stream().map(Any::pack).toList());
            if (proxy.type() != Proxy.Type.SIDECAR) {
                // istiod's gateway CDS: outbound, then BlackHole and any SNI-DNAT clusters
                List<Any> gateway = GatewayClusterBuilder.gatewayClusters(push, scope, MergedGateway.of(proxy, push))
                        .stream().map(Any::pack).toList();
                List<Any> all = new ArrayList<>(shared.size() + gateway.size());
                all.addAll(shared);
                all.addAll(gateway);
                return all;
            }
            // istiod's sidecar CDS: outbound, then BlackHole/Passthrough, then the workload's inbound clusters
            List<Any> inbound = SidecarClusterBuilder.inboundClusters(proxy, push).stream().map(Any::pack).toList();
            List<Any> all = new ArrayList<>(shared.size() + 3 + inbound.size());
            all.addAll(shared);
            all.addAll(meshClusters(push));
            all.addAll(inbound);
            return all;
        } else {
            for (String n : ordered(names)) {
                ClusterBuilder.build(n, push, scope, proxy.proxyless()).ifPresent(c -> out.add(Any.pack(c)));
            }
        }
        return out;
    };

    /** BlackHole/Passthrough clusters of the push's mesh config, packed once per push. */
    private static volatile Map.Entry<Long, List<Any>> meshClusters;

    private static List<Any> meshClusters(io.meshpilot.model.PushContext push) {
        var cached = meshClusters;
        if (cached != null && cached.getKey() == push.version()) {
            return cached.getValue();
        }
        List<Any> packed = SidecarClusterBuilder.meshClusters(push.mesh()).stream().map(Any::pack).toList();
        meshClusters = Map.entry(push.version(), packed);
        return packed;
    }

    /** Envoy LDS: istiod's wildcard listener set for sidecars, the merged Gateways' listeners for routers. */
    static final Generator ENVOY_LDS = (proxy, push, names, wildcard) -> {
        if (proxy.type() != Proxy.Type.SIDECAR) {
            return GatewayListenerBuilder.listeners(proxy, push, MergedGateway.of(proxy, push)).stream()
                    .map(Any::pack).toList();
        }
        // outbound listeners are shared by the scope's proxies of one cluster (VIPs are per cluster);
        // virtualInbound holds the proxy's own ports and PeerAuthentication: built per proxy
        ProxyScope scope = push.scope(proxy);
        String key = scope.key() + "|cluster:" + proxy.clusterId() + (push.routesDependOnProxyLabels()
                ? "|labels:" + new java.util.TreeMap<>(proxy.labels()) : "");
        List<Any> outbound = cache.outboundListeners(push.version(), key,
                () -> SidecarListenerBuilder.outboundListeners(proxy, push, scope).stream().map(Any::pack).toList());
        List<Any> all = new ArrayList<>(outbound.size() + 1);
        all.addAll(outbound);
        all.add(Any.pack(SidecarListenerBuilder.inboundListener(proxy, push)));
        return all;
    };

    /** Envoy RDS: per outbound HTTP port for sidecars; per gateway port or HTTPS server for routers. */
    static final Generator ENVOY_RDS = (proxy, push, names, wildcard) -> {
        if (proxy.type() != Proxy.Type.SIDECAR) {
            MergedGateway merged = MergedGateway.of(proxy, push);
            List<Any> out = new ArrayList<>();
            for (String n : ordered(names)) {
                GatewayRouteBuilder.build(n, proxy, push, merged).ifPresent(r -> out.add(Any.pack(r)));
            }
            return out;
        }
        ProxyScope scope = push.scope(proxy);
        // shared by the proxies of a scope; per labels only when some VirtualService matches on sourceLabels
        String key = push.routesDependOnProxyLabels() ? scope.key() + "|labels:" + new java.util.TreeMap<>(proxy.labels())
                : scope.key();
        List<Any> out = new ArrayList<>();
        for (String n : ordered(names)) {
            Any r = cache.routes(push.version(), key, n, () -> SidecarRouteBuilder.build(n, push, scope, proxy.labels())
                    .map(Any::pack).orElse(null));
            if (r != null) {
                out.add(r);
            }
        }
        return out;
    };

    static final Generator GRPC_LDS = (proxy, push, names, wildcard) -> {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : ordered(names)) {
            var l = n.startsWith(GrpcInboundListenerBuilder.PREFIX) ? GrpcInboundListenerBuilder.build(n, proxy, push)
                    : GrpcListenerBuilder.build(n, scope, push);
            if (l != null) {
                out.add(Any.pack(l));
            }
        }
        return out;
    };

    static final Generator GRPC_RDS = (proxy, push, names, wildcard) -> {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : ordered(names)) {
            var r = GrpcRouteBuilder.build(n, scope, push);
            if (r != null) {
                out.add(Any.pack(r));
            }
        }
        return out;
    };

    /**
     * The names in a stable order. Subscriptions are stored sorted once (SubscribedNames),
     * so pushes do not sort a thousand names per proxy again.
     */
    static Iterable<String> ordered(java.util.Set<String> names) {
        return names instanceof SubscribedNames ? names : new TreeSet<>(names);
    }

    static final Generator EMPTY = (proxy, push, names, wildcard) -> List.of();

    /**
     * The generator for a type on one stream, or null for a type nobody serves: as
     * {@link #forType}, but SDS is bound to the identities XDS_AUTH verified on the stream
     * ({@link SecretGenerator#forCaller}). Every xDS response of a connection is generated
     * through this.
     */
    static Generator forConnection(String typeUrl, Connection con) {
        if (typeUrl.equals(TypeUrls.SECRET) && !con.proxy().proxyless()) {
            return sds.forCaller(con.identities());
        }
        return forType(typeUrl, con.proxy());
    }

    /**
     * The generator for a type and proxy, or null for a type nobody serves. SDS here has no
     * verified identity and serves nothing: streams use {@link #forConnection}.
     */
    static Generator forType(String typeUrl, Proxy proxy) {
        if (typeUrl.equals(TypeUrls.DEBUG_SYNCZ)) {
            return syncz;
        }
        return (proxy.proxyless() ? PROXYLESS : ENVOY).get(typeUrl);
    }

    // looked up on every push of every connection: built once
    private static final Map<String, Generator> PROXYLESS = Map.of(TypeUrls.LISTENER, GRPC_LDS, TypeUrls.ROUTE, GRPC_RDS,
            TypeUrls.CLUSTER, CDS, TypeUrls.ENDPOINT, EDS);
    private static final Map<String, Generator> ENVOY = Map.of(TypeUrls.LISTENER, ENVOY_LDS, TypeUrls.ROUTE, ENVOY_RDS,
            TypeUrls.CLUSTER, CDS, TypeUrls.ENDPOINT, EDS,
            TypeUrls.SECRET, EMPTY); // secrets only through forConnection, bound to the stream's verified identity
}
