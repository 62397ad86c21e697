package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.networking.ClusterNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Generated resources shared across proxies (istiod's XdsCache, PILOT_ENABLE_XDS_CACHE): the
 * wildcard cluster list of a push version (identical for every sidecar), and each cluster's
 * endpoint assignment until its service's endpoints change or a full push rebuilds the
 * PushContext. One Any is built, serialized once, and sent to every proxy that needs it.
 * Dependencies decide invalidation: an EDS update of a host drops that host's assignments.
 * Assignments are keyed by values some of which come from proxies (locality, network view), so
 * they are kept in an LRU of at most PILOT_XDS_CACHE_SIZE entries (istiod's default 60000),
 * the least recently used evicted first (xds_cache_evictions{type="size"}).
 */
final class XdsCache {
    static final IstioCounter READS = IstioCounter.of("xds_cache_reads", "type", "Total number of xds cache xdsCache reads.");
    static final IstioCounter EVICTIONS = IstioCounter.of("xds_cache_evictions", "type",
            "Total number of xds cache evictions.");

    /** Wildcard clusters of a push version as seen by one proxy scope (namespace and Sidecar). */
    private record ClustersKey(long pushVersion, String scope) {
    }

    /**
     * One cluster's assignment under one variant: what it depends on besides the endpoints (a
     * value compared by equals: the DestinationRule, the proxy's locality, its networks).
     */
    private record EndpointsKey(String cluster, String host, Object variant) {
    }

    /** istiod's PILOT_XDS_CACHE_SIZE default. */
    static final int DEFAULT_MAX_ENTRIES = 60_000;

    /**
     * A resource (or list) of one push version for one proxy scope: sidecar route
     * configurations by name, and sidecar outbound listeners ({@code name} "").
     */
    private record ScopedKey(long pushVersion, String type, String scope, String name) {
    }

    private final boolean enabled;
    /** Per push version: cleared when a newer version is first stored (older ones are never read again). */
    private final Map<ScopedKey, Object> scoped = new ConcurrentHashMap<>();
    private volatile long scopedVersion = -1;
    private final Map<ClustersKey, List<Any>> clusters = new ConcurrentHashMap<>();
    /** Least recently used first; it and keysByHost are guarded by {@code endpoints}. */
    private final LinkedHashMap<EndpointsKey, Any> endpoints;
    /** The cached assignments of each host, so an endpoint change evicts without scanning the cache. */
    private final Map<String, Set<EndpointsKey>> keysByHost = new HashMap<>();
    /** Bumped on every invalidation of a host: a build that raced one is not stored. */
    private final Map<String, AtomicLong> hostGenerations = new ConcurrentHashMap<>();
    private final AtomicLong allGeneration = new AtomicLong();
    private final AtomicLong endpointGeneration = new AtomicLong();

    private AtomicLong generation(String host) {
        return hostGenerations.computeIfAbsent(host, h -> new AtomicLong());
    }

    XdsCache(boolean enabled) {
        this(enabled, DEFAULT_MAX_ENTRIES);
    }

    /** @param maxEndpoints PILOT_XDS_CACHE_SIZE: assignments kept at most (istiod: 20000 when not positive) */
    XdsCache(boolean enabled, int maxEndpoints) {
        this.enabled = enabled;
        int max = maxEndpoints > 0 ? maxEndpoints : 20_000;
        this.endpoints = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<EndpointsKey, Any> eldest) {
                if (size() <= max) {
                    return false;
                }
                forget(eldest.getKey());
                EVICTIONS.increment("size");
                return true;
            }
        };
    }

    /** Drops {@code key} from its host's index (holding the lock on {@code endpoints}). */
    private void forget(EndpointsKey key) {
        Set<EndpointsKey> keys = keysByHost.get(key.host());
        if (keys != null && keys.remove(key) && keys.isEmpty()) {
            keysByHost.remove(key.host());
        }
    }

    /** Entries held: xds_cache_size, registered by the DiscoveryServer over the current cache. */
    int size() {
        int assignments;
        synchronized (endpoints) {
            assignments = endpoints.size();
        }
        return clusters.size() + assignments + scoped.size();
    }

    /**
     * A sidecar's route configuration of a push version: routes depend on the PushContext only
     * (services, VirtualServices, DestinationRules, Sidecars), never on endpoints, so they are
     * shared by every proxy of the same {@code scope} until the next full push. Null from
     * {@code build} (a name that is no route) is not cached.
     */
    Any routes(long pushVersion, String scope, String route, Supplier<Any> build) {
        return scoped(new ScopedKey(pushVersion, "rds", scope, route), build);
    }

    /**
     * A sidecar's outbound listeners (per service port, and virtualOutbound) of a push version:
     * like routes, they depend on the PushContext and the proxy's scope only.
     */
    List<Any> outboundListeners(long pushVersion, String scope, Supplier<List<Any>> build) {
        return scoped(new ScopedKey(pushVersion, "lds", scope, ""), () -> List.copyOf(build.get()));
    }

    @SuppressWarnings("unchecked")
    private <T> T scoped(ScopedKey key, Supplier<T> build) {
        if (!enabled) {
            return build.get();
        }
        Object hit = scoped.get(key);
        READS.increment(hit == null ? "miss" : "hit");
        if (hit != null) {
            return (T) hit;
        }
        T built = build.get();
        long version = key.pushVersion();
        if (built != null && version >= scopedVersion) {
            if (version > scopedVersion) {
                synchronized (scoped) {
                    if (version > scopedVersion) {
                        scoped.clear(); // older versions are never read again
                        scopedVersion = version;
                    }
                }
            }
            scoped.put(key, built);
        }
        return built;
    }

    /** All outbound clusters of a push version (sidecars' wildcard CDS). */
    List<Any> clusters(long pushVersion, String scope, Supplier<List<Any>> build) {
        if (!enabled) {
            return build.get();
        }
        List<Any> hit = clusters.get(new ClustersKey(pushVersion, scope));
        READS.increment(hit == null ? "miss" : "hit");
        if (hit != null) {
            return hit;
        }
        List<Any> built = List.copyOf(build.get());
        clusters.keySet().removeIf(k -> k.pushVersion() < pushVersion); // older versions are never read again
        clusters.put(new ClustersKey(pushVersion, scope), built);
        return built;
    }

    /**
     * One cluster's endpoint assignment under {@code variant} (see {@link EndpointsKey}); null
     * from {@code build} (unknown cluster) is not cached.
     */
    Any endpoints(String cluster, Object variant, Supplier<Any> build) {
        if (!enabled) {
            return build.get();
        }
        ClusterNames.Outbound o = ClusterNames.parseOutbound(cluster);
        if (o == null) {
            return build.get();
        }
        EndpointsKey key = new EndpointsKey(cluster, o.host(), variant);
        Any hit;
        synchronized (endpoints) {
            hit = endpoints.get(key);
        }
        READS.increment(hit == null ? "miss" : "hit");
        if (hit != null) {
            return hit;
        }
        long all = allGeneration.get();
        long host = generation(o.host()).get();
        Any built = build.get();
        if (built != null) {
            synchronized (endpoints) {
                // store only if no invalidation happened while building (it may have read old endpoints); an
                // invalidation bumps the generation before it takes this lock, so a later one finds the key
                if (all == allGeneration.get() && host == generation(o.host()).get()) {
                    keysByHost.computeIfAbsent(o.host(), h -> new HashSet<>()).add(key);
                    endpoints.put(key, built);
                }
            }
        }
        return built;
    }

    /** Bumped on every endpoint change: what was generated from endpoints before is stale. */
    long endpointGeneration() {
        return endpointGeneration.get();
    }

    /** Endpoints of these hosts changed. */
    void invalidateHosts(Set<String> hosts) {
        if (hosts.isEmpty()) {
            return;
        }
        endpointGeneration.incrementAndGet();
        int evicted = 0;
        for (String h : hosts) {
            generation(h).incrementAndGet(); // first: a build racing this is then not stored
            synchronized (endpoints) {
                Set<EndpointsKey> keys = keysByHost.remove(h);
                if (keys != null) {
                    for (EndpointsKey k : keys) {
                        if (endpoints.remove(k) != null) {
                            evicted++;
                        }
                    }
                }
            }
        }
        EVICTIONS.add("eds", evicted);
    }

    /** A new PushContext: subsets and services may have changed under every assignment. */
    void invalidateAll() {
        endpointGeneration.incrementAndGet();
        allGeneration.incrementAndGet();
        synchronized (endpoints) {
            EVICTIONS.add("eds", endpoints.size());
            endpoints.clear();
            keysByHost.clear();
        }
    }
    /**
     * What the cache holds now, one entry per resource (istiod's Cache.Snapshot): shared
     * cluster lists, endpoint assignments, route configurations and outbound listeners.
     */
    List<CachedResource> snapshot() {
        List<CachedResource> out = new ArrayList<>();
        clusters.values().forEach(list -> list.forEach(a -> out.add(entry(TypeUrls.CLUSTER, a))));
        synchronized (endpoints) {
            endpoints.forEach((k, a) -> out.add(new CachedResource(TypeUrls.ENDPOINT, k.cluster(),
                    a.getValue().size())));
        }
        scoped.forEach((k, v) -> {
            if (k.type().equals("rds")) {
                out.add(new CachedResource(TypeUrls.ROUTE, k.name(), ((Any) v).getValue().size()));
            } else {
                ((List<?>) v).forEach(o -> out.add(entry(TypeUrls.LISTENER, (Any) o)));
            }
        });
        return out;
    }

    /** The name inside a cached Any (clusters and listeners are cached as lists, without their names). */
    private static CachedResource entry(String typeUrl, Any a) {
        String name;
        try {
            name = typeUrl.equals(TypeUrls.CLUSTER)
                    ? a.unpack(Cluster.class).getName()
                    : a.unpack(Listener.class).getName();
        } catch (InvalidProtocolBufferException e) {
            name = "";
        }
        return new CachedResource(typeUrl, name, a.getValue().size());
    }

    /** Drops every entry (istiod's Cache.ClearAll, /debug/cachez?clear=true): the next pushes rebuild them. */
    void clearAll() {
        invalidateAll();
        clusters.clear();
        scoped.clear();
    }
}
