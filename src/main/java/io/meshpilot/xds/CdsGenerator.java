package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.envoy.GatewayClusterBuilder;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import io.meshpilot.networking.telemetry.MetadataExchangeFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CDS for every proxy flavour. Envoy's wildcard list is the outbound clusters shared by every
 * proxy of the same {@link ProxyScope#key()}, then for a sidecar BlackHole/Passthrough and its
 * own inbound clusters, for a gateway BlackHole and its SNI-DNAT clusters; named requests
 * (proxyless gRPC, or a proxy asking by name) get just those clusters.
 */
final class CdsGenerator implements ScopedGenerator {
    private final XdsCache cache;
    /** BlackHole/Passthrough clusters of the push's mesh config, packed once per push version. */
    private volatile Map.Entry<Long, List<Any>> meshClusters;
    /** The same with PassthroughCluster's upstream metadata exchange, for istio-proxy sidecars. */
    private volatile Map.Entry<Long, List<Any>> meshClustersWithExchange;

    CdsGenerator(XdsCache cache) {
        this.cache = cache;
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        ProxyScope scope = push.scope(proxy);
        if (wildcard && !proxy.proxyless()) {
            MergedEnvoyFilters efw = push.envoyFilters(proxy);
            if (proxy.type() != Proxy.Type.SIDECAR) {
                // istiod's gateway CDS: outbound, then BlackHole and any SNI-DNAT clusters
                List<Any> shared = sharedClusters(push, scope, efw, PatchContext.GATEWAY, ClusterBuilder.Client.GATEWAY,
                        upstreamExchange(proxy, push));
                List<Any> gateway = GatewayClusterBuilder.gatewayClusters(push, scope, MergedGateway.of(proxy, push))
                        .stream().map(Any::pack).toList();
                List<Any> all = new ArrayList<>(shared.size() + gateway.size());
                all.addAll(shared);
                all.addAll(EnvoyFilterPatches.clusters(PatchContext.GATEWAY, efw, gateway, true));
                return all;
            }
            // istiod's sidecar CDS: outbound, then BlackHole/Passthrough, then the workload's inbound clusters
            boolean exchange = upstreamExchange(proxy, push);
            List<Any> shared = sharedClusters(push, scope, efw, PatchContext.SIDECAR_OUTBOUND,
                    ClusterBuilder.Client.SIDECAR, exchange);
            List<Any> inbound = SidecarClusterBuilder.inboundClusters(proxy, push).stream().map(Any::pack).toList();
            List<Any> all = new ArrayList<>(shared.size() + 3 + inbound.size());
            all.addAll(shared);
            // istiod: BlackHole and Passthrough are patched as outbound, InboundPassthrough and the
            // workload's clusters as inbound (with the services behind them for cluster.service)
            List<Any> mesh = exchange ? meshClustersWithExchange(push) : meshClusters(push);
            all.addAll(EnvoyFilterPatches.clusters(PatchContext.SIDECAR_OUTBOUND, efw, mesh.subList(0, 2), true));
            all.addAll(EnvoyFilterPatches.clusters(PatchContext.SIDECAR_INBOUND, efw, mesh.subList(2, 3), true));
            all.addAll(efw.isEmpty() ? inbound : EnvoyFilterPatches.clusters(PatchContext.SIDECAR_INBOUND, efw, inbound,
                    SidecarClusterBuilder.inboundClusterServices(proxy, push), false));
            return all;
        }
        List<Any> out = new ArrayList<>();
        MetadataExchangeFilters mx = upstreamExchange(proxy, push) ? MetadataExchangeFilters.of(push.metadataExchange())
                : null;
        for (String n : Generators.ordered(names)) {
            ClusterBuilder.build(n, push, scope, client(proxy))
                    .map(c -> mx == null ? c : mx.withUpstreamExchange(c))
                    .ifPresent(c -> out.add(Any.pack(c)));
        }
        return out;
    }

    /**
     * The scope's outbound clusters with the proxy's EnvoyFilter patches (and their ADD
     * clusters): shared by the proxies of one scope and one set of patches.
     */
    private List<Any> sharedClusters(PushContext push, ProxyScope scope, MergedEnvoyFilters efw, PatchContext context,
                                     ClusterBuilder.Client client, boolean exchange) {
        return cache.clusters(push.version(), scope.key() + clientKey(client) + exchangeKey(exchange)
                        + envoyFilterKey(efw, context),
                () -> {
                    List<Cluster> clusters = ClusterBuilder.all(push, scope, client);
                    if (exchange) {
                        MetadataExchangeFilters mx = MetadataExchangeFilters.of(push.metadataExchange());
                        clusters = clusters.stream().map(mx::withUpstreamExchange).toList();
                    }
                    return EnvoyFilterPatches.clusters(context, efw, clusters.stream().map(Any::pack).toList(), false);
                });
    }

    /**
     * Whether the proxy's outbound clusters carry istio-proxy's upstream metadata exchange
     * (istiod's TCPClusterMx): istio-proxy only (plain Envoy would NACK it), and only with
     * PILOT_ENABLE_METADATA_EXCHANGE.
     */
    static boolean upstreamExchange(Proxy proxy, PushContext push) {
        return proxy.istioProxy() && !proxy.proxyless() && push.metadataExchange().enabled();
    }

    /** The part of a cache key or response scope that says the clusters carry the upstream metadata exchange. */
    private static String exchangeKey(boolean exchange) {
        return exchange ? "|istio-proxy" : "";
    }

    static ClusterBuilder.Client client(Proxy proxy) {
        return proxy.proxyless() ? ClusterBuilder.Client.PROXYLESS
                : proxy.type() == Proxy.Type.SIDECAR ? ClusterBuilder.Client.SIDECAR : ClusterBuilder.Client.GATEWAY;
    }

    /** The part of a cache key or response scope that names who the clusters are for (gateways differ in upstream TLS). */
    private static String clientKey(ClusterBuilder.Client client) {
        return client == ClusterBuilder.Client.GATEWAY ? "|gateway" : "";
    }

    /** The part of a cache key or response scope that names the EnvoyFilter patches applied ("" for none). */
    static String envoyFilterKey(MergedEnvoyFilters efw, PatchContext context) {
        return efw.isEmpty() ? "" : "|envoyfilters:" + context + ":" + efw.key();
    }

    /**
     * The scope's key; an Envoy wildcard list also holds the proxy's own clusters: a sidecar's
     * inbound ports, a gateway's BlackHole and AUTO_PASSTHROUGH clusters join the scope.
     */
    @Override
    public String responseScope(Proxy proxy, PushContext push, boolean wildcard) {
        String scope = push.scope(proxy).key() + clientKey(client(proxy)) + exchangeKey(upstreamExchange(proxy, push));
        if (!wildcard || proxy.proxyless()) {
            return scope;
        }
        scope += envoyFilterKey(push.envoyFilters(proxy),
                proxy.type() == Proxy.Type.SIDECAR ? PatchContext.SIDECAR_OUTBOUND : PatchContext.GATEWAY);
        if (proxy.type() == Proxy.Type.SIDECAR) {
            return scope + "|inbound:" + SidecarClusterBuilder.inboundKey(proxy, push);
        }
        return scope + "|router:" + GatewayClusterBuilder.key(MergedGateway.of(proxy, push));
    }

    /**
     * The mesh clusters of an istio-proxy sidecar: PassthroughCluster with the upstream metadata
     * exchange (istiod's buildDefaultPassthroughCluster), BlackHole and InboundPassthrough as for Envoy.
     */
    private List<Any> meshClustersWithExchange(PushContext push) {
        var cached = meshClustersWithExchange;
        if (cached != null && cached.getKey() == push.version()) {
            return cached.getValue();
        }
        MetadataExchangeFilters mx = MetadataExchangeFilters.of(push.metadataExchange());
        List<Any> packed = SidecarClusterBuilder.meshClusters(push.mesh()).stream()
                .map(c -> c.getName().equals(SidecarClusterBuilder.PASSTHROUGH_CLUSTER) ? mx.withUpstreamExchange(c) : c)
                .map(Any::pack).toList();
        meshClustersWithExchange = Map.entry(push.version(), packed);
        return packed;
    }

    private List<Any> meshClusters(PushContext push) {
        var cached = meshClusters;
        if (cached != null && cached.getKey() == push.version()) {
            return cached.getValue();
        }
        List<Any> packed = SidecarClusterBuilder.meshClusters(push.mesh()).stream().map(Any::pack).toList();
        meshClusters = Map.entry(push.version(), packed);
        return packed;
    }
}
