package io.meshpilot.xds;

import io.envoyproxy.envoy.admin.v3.ConfigDump;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.model.AmbientIndexes;
import io.meshpilot.model.Proxy;
import io.meshpilot.security.credentials.CredentialsController;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Which generator serves which type for which proxy, for one DiscoveryServer (istiod picks by
 * the GENERATOR metadata, then the proxy type): proxyless gRPC clients get the gRPC
 * generator's LDS/RDS and the shared CDS/EDS; Envoy sidecars get istiod's sidecar CDS, EDS, LDS
 * and RDS; gateways (router proxies) get the listeners, routes and clusters of the Gateways
 * that select them; waypoint proxies get {@link WaypointGenerators}' HBONE termination and the
 * routes and clusters of the services that use them; Envoy proxies get the WasmPlugins and EnvoyFilter-inserted extension
 * configs their listeners reference over ECDS ({@link EcdsGenerator}). Envoy proxies get SDS (gateways' credentialName secrets) from
 * {@link SecretGenerator}, bound to the stream's verified identities. Every proxy may ask
 * istiod's debug types: {@code istio.io/debug/syncz} ({@link SyncStatusGenerator}),
 * {@code istio.io/debug/config_dump} ({@link ConfigDumpGenerator}) and {@code istio.io/debug}
 * ({@link DebugPageGenerator}, bound to the stream's verified identities). ztunnel nodes get
 * ambient's types: {@code istio.security.Authorization} ({@link WorkloadRbacGenerator}), the
 * Address type ({@link AddressGenerator}, delta) and the debug types syncz and config_dump; any
 * proxy may ask the Address type, as istiod registers its generator for every proxy.
 */
final class Generators {
    private final Map<String, Generator> envoy;
    private final Map<String, Generator> proxyless;
    private final Map<String, Generator> ztunnel;
    private final Map<String, Generator> waypoint;
    private final SecretGenerator sds;
    private final SyncStatusGenerator syncz;
    private final ConfigDumpGenerator configDump;
    private final DebugPageGenerator debugPages;

    /**
     * What istiod's debug types read: the connections (syncz, and the proxy config_dump
     * names), a connection's config dump without endpoints, istiod's own namespace (who may
     * read every debug page) and the admin debug pages once they are served.
     */
    record DebugSources(ConnectionTable connections, Function<Connection, ConfigDump> dump, String systemNamespace,
                        Supplier<DebugPages> pages) {
        /** No connections and no pages (tests, benchmarks). */
        static DebugSources none() {
            return new DebugSources(new ConnectionTable(), c -> ConfigDump.getDefaultInstance(), "istio-system",
                    () -> DebugPages.NONE);
        }
    }

    /**
     * @param cache       resources shared across proxies
     * @param credentials what SDS serves
     * @param debug       what the istio.io/debug types read
     * @param ambient     PILOT_ENABLE_AMBIENT and its kin: what ztunnel nodes are served
     */
    Generators(XdsCache cache, Supplier<CredentialsController> credentials, DebugSources debug,
               PilotFeatures.Ambient ambient) {
        this(cache, credentials, debug, ambient, () -> AmbientIndexes.NONE);
    }

    /**
     * @param ambient what ztunnel nodes are served (PILOT_ENABLE_AMBIENT and its kin)
     * @param indexes what ztunnel's Address type is answered from (the Environment's ambient index)
     */
    Generators(XdsCache cache, Supplier<CredentialsController> credentials, DebugSources debug,
               PilotFeatures.Ambient ambient, Supplier<AmbientIndexes> indexes) {
        Generator addresses = new AddressGenerator(indexes);
        Generator cds = new CdsGenerator(cache);
        Generator eds = new EdsGenerator(cache);
        this.sds = new SecretGenerator(credentials);
        this.syncz = new SyncStatusGenerator(debug.connections()::all);
        this.configDump = new ConfigDumpGenerator(debug.connections()::debugConnection, debug.dump());
        this.debugPages = new DebugPageGenerator(debug.systemNamespace(), debug.pages());
        this.proxyless = Map.of(TypeUrls.LISTENER, new GrpcLdsGenerator(), TypeUrls.ROUTE, new GrpcRdsGenerator(),
                TypeUrls.CLUSTER, cds, TypeUrls.ENDPOINT, eds, TypeUrls.DEBUG_SYNCZ, syncz,
                TypeUrls.DEBUG_CONFIG_DUMP, configDump);
        this.envoy = Map.of(TypeUrls.LISTENER, new EnvoyLdsGenerator(cache), TypeUrls.ROUTE, new EnvoyRdsGenerator(cache),
                TypeUrls.CLUSTER, cds, TypeUrls.ENDPOINT, eds, TypeUrls.DEBUG_SYNCZ, syncz,
                TypeUrls.DEBUG_CONFIG_DUMP, configDump,
                TypeUrls.EXTENSION_CONFIG, new EcdsGenerator(),
                TypeUrls.ADDRESS, addresses,
                TypeUrls.SECRET, EMPTY); // secrets only through forConnection, bound to the stream's verified identity
        this.ztunnel = Map.of(TypeUrls.ADDRESS, addresses, TypeUrls.WORKLOAD_AUTHORIZATION,
                new WorkloadRbacGenerator(ambient.enabled(), ambient.dryRunAuthorizationPolicies(), indexes),
                TypeUrls.DEBUG_SYNCZ, syncz, TypeUrls.DEBUG_CONFIG_DUMP, configDump);
        this.waypoint = WaypointGenerators.byType(eds, syncz, configDump, indexes);
    }

    /** Generators over a cache of their own, no credentials and no connections (tests, benchmarks). */
    static Generators standalone(XdsCache cache) {
        CredentialsController none = new CredentialsController();
        return new Generators(cache, () -> none, DebugSources.none(), PilotFeatures.Ambient.OFF);
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
        if (typeUrl.equals(TypeUrls.DEBUG_PAGE)) {
            return debugPages.forCaller(con.identities());
        }
        return forType(typeUrl, con.proxy());
    }

    /**
     * As {@link #forConnection} for a debug type, but reporting only on the proxies of
     * {@code namespace}: what a caller of a workload namespace may read.
     */
    Generator forDebugOfNamespace(String typeUrl, Proxy proxy, String namespace) {
        Generator g = forType(typeUrl, proxy);
        if (g == syncz) {
            return syncz.ofNamespace(namespace);
        }
        return g == configDump ? configDump.ofNamespace(namespace) : g;
    }

    /**
     * The generator for a type and proxy, or null for a type nobody serves. SDS here has no
     * verified identity and serves nothing: streams use {@link #forConnection}.
     */
    Generator forType(String typeUrl, Proxy proxy) {
        if (proxy.type() == Proxy.Type.ZTUNNEL) {
            return ztunnel.get(typeUrl);
        }
        if (proxy.proxyless()) {
            return proxyless.get(typeUrl);
        }
        return (proxy.type() == Proxy.Type.WAYPOINT ? waypoint : envoy).get(typeUrl);
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
