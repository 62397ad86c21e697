package io.meshpilot.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * All endpoints of all services (istiod's EndpointIndex): per (hostname, namespace) a set of
 * shards, one per registry/cluster. Updates replace one shard and touch nothing else, so an
 * endpoint change costs the same however many services exist; the answer says what kind of
 * push it needs.
 */
public final class EndpointIndex {

    /** What an update requires downstream. */
    public enum PushType {
        /** Nothing changed. */
        NONE,
        /** Only endpoints changed: an EDS push to proxies watching this service. */
        INCREMENTAL,
        /** A new service's first endpoints, or the set of service accounts changed: full push. */
        FULL
    }

    /** The endpoints of one service, by shard, with the identities they run as. */
    public static final class Shards {
        private final Map<ShardKey, List<IstioEndpoint>> byShard = new ConcurrentHashMap<>();
        private volatile Set<String> serviceAccounts = Set.of();

        public Map<ShardKey, List<IstioEndpoint>> byShard() {
            return Map.copyOf(byShard);
        }

        public Set<String> serviceAccounts() {
            return serviceAccounts;
        }

        /** All endpoints, shards in a stable order. */
        public List<IstioEndpoint> all() {
            List<IstioEndpoint> out = new ArrayList<>();
            byShard.entrySet().stream()
                    .sorted(Map.Entry.comparingByKey(Comparator.comparing(ShardKey::toString)))
                    .forEach(e -> out.addAll(e.getValue()));
            return out;
        }

        private void recomputeServiceAccounts() {
            Set<String> sa = new HashSet<>();
            byShard.values().forEach(list -> list.forEach(e -> {
                if (!e.serviceAccount().isEmpty()) {
                    sa.add(e.serviceAccount());
                }
            }));
            serviceAccounts = Set.copyOf(sa);
        }
    }

    private record Key(String hostname, String namespace) {
    }

    private final Map<Key, Shards> shards = new ConcurrentHashMap<>();

    /**
     * Replaces one shard's endpoints of a service. An empty list removes the shard (and the
     * service's entry once no shard is left).
     */
    public PushType update(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        Key key = new Key(hostname, namespace);
        if (endpoints.isEmpty()) {
            Shards s = shards.get(key);
            if (s == null) {
                return PushType.NONE;
            }
            synchronized (s) {
                if (s.byShard.remove(shard) == null) {
                    return PushType.NONE;
                }
                Set<String> before = s.serviceAccounts;
                s.recomputeServiceAccounts();
                if (s.byShard.isEmpty()) {
                    shards.remove(key, s);
                }
                return before.equals(s.serviceAccounts) ? PushType.INCREMENTAL : PushType.FULL;
            }
        }
        boolean[] created = {false};
        Shards s = shards.computeIfAbsent(key, k -> {
            created[0] = true;
            return new Shards();
        });
        synchronized (s) {
            List<IstioEndpoint> copy = List.copyOf(endpoints);
            List<IstioEndpoint> old = s.byShard.put(shard, copy);
            if (copy.equals(old)) {
                return PushType.NONE;
            }
            Set<String> before = s.serviceAccounts;
            s.recomputeServiceAccounts();
            if (created[0] || !before.equals(s.serviceAccounts)) {
                return PushType.FULL;
            }
            return PushType.INCREMENTAL;
        }
    }

    /** Drops a service's shard (service deleted in that registry). */
    public void deleteShard(ShardKey shard, String hostname, String namespace) {
        update(shard, hostname, namespace, List.of());
    }

    public Shards shards(String hostname, String namespace) {
        return shards.get(new Key(hostname, namespace));
    }

    /** hostname -> namespace -> shards, sorted (for /debug/endpointShardz). */
    public Map<String, Map<String, Shards>> snapshot() {
        Map<String, Map<String, Shards>> out = new TreeMap<>();
        shards.forEach((k, v) -> out.computeIfAbsent(k.hostname(), h -> new TreeMap<>()).put(k.namespace(), v));
        return out;
    }

    public int size() {
        return shards.size();
    }
}
