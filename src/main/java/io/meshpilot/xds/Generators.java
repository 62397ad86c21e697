package io.meshpilot.xds;

import io.meshpilot.model.Proxy;
import io.meshpilot.security.credentials.CredentialsController;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Which generator serves which type for which proxy, for one DiscoveryServer (istiod picks by
 * the GENERATOR metadata, then the proxy type): proxyless gRPC clients get the gRPC
 * generator's LDS/RDS and the shared CDS/EDS; Envoy sidecars get istiod's sidecar CDS, EDS, LDS
 * and RDS; gateways (router proxies) get the listeners, routes and clusters of the Gateways
 * that select them; Envoy proxies get the WasmPlugins and EnvoyFilter-inserted extension
 * configs their listeners reference over ECDS ({@link EcdsGenerator}). Envoy proxies get SDS (gateways' credentialName secrets) from
 * {@link SecretGenerator}, bound to the stream's verified identities.
 */
final class Generators {
    private final Map<String, Generator> envoy;
    private final Map<String, Generator> proxyless;
    private final SecretGenerator sds;
    private final SyncStatusGenerator syncz;

    /**
     * @param cache       resources shared across proxies
     * @param credentials what SDS serves
     * @param connections what istio.io/debug/syncz reports on
     */
    Generators(XdsCache cache, Supplier<CredentialsController> credentials, Supplier<Collection<Connection>> connections) {
        Generator cds = new CdsGenerator(cache);
        Generator eds = new EdsGenerator(cache);
        this.sds = new SecretGenerator(credentials);
        this.syncz = new SyncStatusGenerator(connections);
        this.proxyless = Map.of(TypeUrls.LISTENER, new GrpcLdsGenerator(), TypeUrls.ROUTE, new GrpcRdsGenerator(),
                TypeUrls.CLUSTER, cds, TypeUrls.ENDPOINT, eds, TypeUrls.DEBUG_SYNCZ, syncz);
        this.envoy = Map.of(TypeUrls.LISTENER, new EnvoyLdsGenerator(cache), TypeUrls.ROUTE, new EnvoyRdsGenerator(cache),
                TypeUrls.CLUSTER, cds, TypeUrls.ENDPOINT, eds, TypeUrls.DEBUG_SYNCZ, syncz,
                TypeUrls.EXTENSION_CONFIG, new EcdsGenerator(),
                TypeUrls.SECRET, EMPTY); // secrets only through forConnection, bound to the stream's verified identity
    }

    /** Generators over a cache of their own, no credentials and no connections (tests, benchmarks). */
    static Generators standalone(XdsCache cache) {
        CredentialsController none = new CredentialsController();
        return new Generators(cache, () -> none, List::of);
    }

    /**
     * The generator for a type on one stream, or null for a type nobody serves: as
     * {@link #forType}, but SDS is bound to the identities XDS_AUTH verified on the stream
     * ({@link SecretGenerator#forCaller}). Every xDS response of a connection is generated
     * through this.
     */
    Generator forConnection(String typeUrl, Connection con) {
        if (typeUrl.equals(TypeUrls.SECRET) && !con.proxy().proxyless()) {
            return sds.forCaller(con.identities());
        }
        return forType(typeUrl, con.proxy());
    }

    /**
     * As {@link #forConnection} for a debug type, but reporting only on the proxies of
     * {@code namespace}: what a caller of a workload namespace may read.
     */
    Generator forDebugOfNamespace(String typeUrl, Proxy proxy, String namespace) {
        Generator g = forType(typeUrl, proxy);
        return g == syncz ? syncz.ofNamespace(namespace) : g;
    }

    /**
     * The generator for a type and proxy, or null for a type nobody serves. SDS here has no
     * verified identity and serves nothing: streams use {@link #forConnection}.
     */
    Generator forType(String typeUrl, Proxy proxy) {
        return (proxy.proxyless() ? proxyless : envoy).get(typeUrl);
    }

    /**
     * The names in a stable order. Subscriptions are stored sorted once (SubscribedNames),
     * so pushes do not sort a thousand names per proxy again.
     */
    static Iterable<String> ordered(Set<String> names) {
        return names instanceof SubscribedNames ? names : new TreeSet<>(names);
    }

    private static final Generator EMPTY = (proxy, push, names, wildcard) -> List.of();
}
