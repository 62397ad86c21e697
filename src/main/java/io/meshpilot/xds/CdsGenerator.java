package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.HboneEndpoints;
import io.meshpilot.networking.UpstreamTls;
import io.meshpilot.networking.envoy.GatewayClusterBuilder;
import io.meshpilot.networking.envoy.HboneOrigination;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.networking.envoy.SidecarClusterBuilder;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import io.meshpilot.networking.telemetry.MetadataExchangeFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * CDS for every proxy flavour. Envoy's wildcard list is the outbound clusters shared by every
 * proxy of the same {@link ProxyScope#key()}, then for a sidecar BlackHole/Passthrough and its
 * own inbound clusters, for a gateway BlackHole and its SNI-DNAT clusters, and while HBONE is
 * sent {@code connect_originate}; named requests
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
                boolean istioProxy = istioProxy(proxy);
                List<Any> shared = sharedClusters(push, scope, efw, PatchContext.GATEWAY, ClusterBuilder.Client.GATEWAY,
                        istioProxy);
                // istiod builds SNI-DNAT clusters through applyDestinationRule, so istio-proxy gets them
                // as its other outbound clusters (metadata exchange, ALPN); BlackHole (first) stays bare
                UnaryOperator<Cluster> outbound = istioProxy ? istioProxyOutbound(push) : UnaryOperator.identity();
                List<Cluster> built = GatewayClusterBuilder.gatewayClusters(push, scope, MergedGateway.of(proxy, push));
                List<Any> gateway = new ArrayList<>(built.size());
                for (int i = 0; i < built.size(); i++) {
                    gateway.add(Any.pack(i == 0 ? built.get(i) : outbound.apply(built.get(i))));
                }
                List<Any> all = new ArrayList<>(shared.size() + gateway.size() + 1);
                all.addAll(shared);
                all.addAll(EnvoyFilterPatches.clusters(PatchContext.GATEWAY, efw, gateway, true));
                addConnectOriginate(all, proxy, push);
                return all;
            }
            // istiod's sidecar CDS: outbound, then BlackHole/Passthrough, then the workload's inbound clusters
            boolean istioProxy = istioProxy(proxy);
            List<Any> shared = sharedClusters(push, scope, efw, PatchContext.SIDECAR_OUTBOUND,
                    ClusterBuilder.Client.SIDECAR, istioProxy);
            List<Any> inbound = SidecarClusterBuilder.inboundClusters(proxy, push).stream().map(Any::pack).toList();
            List<Any> all = new ArrayList<>(shared.size() + 3 + inbound.size());
            all.addAll(shared);
            // istiod: BlackHole and Passthrough are patched as outbound, InboundPassthrough and the
            // workload's clusters as inbound (with the services behind them for cluster.service)
            List<Any> mesh = istioProxy && push.metadataExchange().enabled() ? meshClustersWithExchange(push)
                    : meshClusters(push);
            all.addAll(EnvoyFilterPatches.clusters(PatchContext.SIDECAR_OUTBOUND, efw, mesh.subList(0, 2), true));
            all.addAll(EnvoyFilterPatches.clusters(PatchContext.SIDECAR_INBOUND, efw, mesh.subList(2, 3), true));
            all.addAll(efw.isEmpty() ? inbound : EnvoyFilterPatches.clusters(PatchContext.SIDECAR_INBOUND, efw, inbound,
                    SidecarClusterBuilder.inboundClusterServices(proxy, push), false));
            addConnectOriginate(all, proxy, push);
            return all;
        }
        List<Any> out = new ArrayList<>();
        UnaryOperator<Cluster> outbound = istioProxy(proxy) ? istioProxyOutbound(push) : UnaryOperator.identity();
        for (String n : Generators.ordered(names)) {
            ClusterBuilder.build(n, push, scope, client(proxy))
                    .map(outbound)
                    .ifPresent(c -> out.add(Any.pack(c)));
        }
        return out;
    }

    /**
     * istiod's cluster.go: while HBONE is sent, a sidecar or gateway that does not disable it gets
     * {@code connect_originate} last, after the EnvoyFilter patches.
     */
    private static void addConnectOriginate(List<Any> clusters, Proxy proxy, PushContext push) {
        if (sendsHbone(proxy, push)) {
            clusters.add(Any.pack(HboneOrigination.cluster(push.mesh())));
        }
    }

    private static boolean sendsHbone(Proxy proxy, PushContext push) {
        return push.hboneSend().enabled() && !HboneEndpoints.disablesHbone(proxy);
    }

    /**
     * The scope's outbound clusters with the proxy's EnvoyFilter patches (and their ADD
     * clusters): shared by the proxies of one scope and one set of patches.
     */
    private List<Any> sharedClusters(PushContext push, ProxyScope scope, MergedEnvoyFilters efw, PatchContext context,
                                     ClusterBuilder.Client client, boolean istioProxy) {
        return cache.clusters(push.version(), scope.key() + clientKey(client) + istioProxyKey(istioProxy)
                        + envoyFilterKey(efw, context),
                () -> {
                    List<Cluster> clusters = ClusterBuilder.all(push, scope, client);
                    if (istioProxy) {
                        clusters = clusters.stream().map(istioProxyOutbound(push)).toList();
                    }
                    return EnvoyFilterPatches.clusters(context, efw, clusters.stream().map(Any::pack).toList(), false);
                });
    }

    /**
     * Whether the proxy gets istio-proxy's outbound clusters (plain Envoy would NACK the upstream
     * metadata exchange, and keeps its ALPN as it was).
     */
    static boolean istioProxy(Proxy proxy) {
        return proxy.istioProxy() && !proxy.proxyless();
    }

    /**
     * An istio-proxy's outbound cluster as istiod builds it: with the upstream metadata exchange
     * (TCPClusterMx, while PILOT_ENABLE_METADATA_EXCHANGE) and the Istio mutual TLS ALPN of
     * cluster_tls.go ({@code h2} for HTTP/2, {@code istio-peer-exchange} unless PILOT_DISABLE_MX_ALPN).
     */
    private static UnaryOperator<Cluster> istioProxyOutbound(PushContext push) {
        MetadataExchange settings = push.metadataExchange();
        MetadataExchangeFilters mx = MetadataExchangeFilters.of(settings);
        boolean peerExchange = settings.enabled() && settings.peerExchangeAlpn();
        return c -> UpstreamTls.withIstioProxyAlpn(settings.enabled() ? mx.withUpstreamExchange(c) : c, peerExchange);
    }

    /** The part of a cache key or response scope that says the clusters are istio-proxy's. */
    private static String istioProxyKey(boolean istioProxy) {
        return istioProxy ? "|istio-proxy" : "";
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
        String scope = push.scope(proxy).key() + clientKey(client(proxy)) + istioProxyKey(istioProxy(proxy));
        if (!wildcard || proxy.proxyless()) {
            return scope;
        }
        scope += sendsHbone(proxy, push) ? "|hbone" : "";
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
