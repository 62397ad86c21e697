package io.meshpilot.xds;

import io.meshpilot.networking.ClusterNames;
import java.lang.ref.WeakReference;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * The resource names of one subscription: hashed for membership (every ACK compares the
 * names it repeats) and sorted once for iteration (every push walks them in a stable order).
 * Immutable.
 *
 * <p>Subscriptions of one server to the same names share one instance ({@link Pool}), whatever
 * order they were asked in (sidecars of a scope ask for the same 1,000 EDS clusters). The names are then held once
 * instead of once per proxy (they were most of a sidecar's memory in the server), and the
 * shared response of those proxies is found by an identity comparison instead of comparing
 * 1,000 names per push. An ACK is compared in the order of the first request for the names,
 * else name by name.
 */
final class SubscribedNames extends AbstractSet<String> {
    static final SubscribedNames EMPTY = new SubscribedNames(new Key(Set.of()), List.of());
    /** The names with their hash, computed once: lookups in a {@link Pool} happen under its lock. */
    private record Key(Set<String> names, int hash) {
        Key(Set<String> names) {
            this(names, names.hashCode());
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hash == hash && k.names.equals(names);
        }
    }

    private final Key key;
    private final List<String> ordered;
    /** The names in the order of the first request for them (repeats included). */
    private final List<String> asRequested;
    /** Cluster names by service host, made when first asked (EDS subscriptions only ask). */
    private volatile Map<String, List<String>> outboundByHost;

    private SubscribedNames(Key key, List<String> requested) {
        this.key = key;
        String[] sorted = key.names().toArray(String[]::new);
        Arrays.sort(sorted);
        this.ordered = List.of(sorted);
        this.asRequested = requested;
    }

    /** Computed once: shared responses are looked up by their names. */
    @Override
    public int hashCode() {
        return key.hash();
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof SubscribedNames other) {
            return other == this || other.key.equals(key);
        }
        return super.equals(o);
    }

    /**
     * The outbound and waypoint ({@code inbound-vip}) clusters among the names, by service host:
     * an endpoint change names services, and each of the thousand proxies a push visits finds its
     * clusters of those services by a lookup instead of parsing all of its names.
     */
    Map<String, List<String>> clustersByHost() {
        Map<String, List<String>> byHost = outboundByHost;
        if (byHost == null) {
            Map<String, List<String>> grouped = new HashMap<>();
            for (String name : ordered) {
                String host = ClusterNames.host(name);
                if (host != null) {
                    grouped.computeIfAbsent(host, h -> new ArrayList<>(1)).add(name);
                }
            }
            byHost = Map.copyOf(grouped);
            outboundByHost = byHost; // racing threads compute the same value
        }
        return byHost;
    }

    /** A subscription to {@code names} of its own (not shared: see {@link Pool#of}). */
    static SubscribedNames of(Collection<String> names) {
        return names.isEmpty() ? EMPTY : new SubscribedNames(new Key(Set.copyOf(names)), List.copyOf(names));
    }

    /** The subscriptions of one server: one instance per set of names while some watch holds it. */
    static final class Pool {
        /** Weak keys held by their instance: an entry goes when no subscription uses it any more. */
        private final Map<Key, WeakReference<SubscribedNames>> shared = new WeakHashMap<>();

        /** The subscription to {@code names}, shared with every other subscription to the same names. */
        SubscribedNames of(Collection<String> names) {
            if (names.isEmpty()) {
                return EMPTY;
            }
            Key key = new Key(Set.copyOf(names)); // drops repeats
            synchronized (shared) {
                WeakReference<SubscribedNames> ref = shared.get(key);
                SubscribedNames existing = ref == null ? null : ref.get();
                if (existing != null) {
                    return existing;
                }
                SubscribedNames created = new SubscribedNames(key, List.copyOf(names));
                shared.remove(key); // a dead instance's entry keeps its own key object on put
                shared.put(key, new WeakReference<>(created));
                return created;
            }
        }
    }

    /** Whether {@code names} (a request's list, possibly with repeats) is exactly this subscription. */
    boolean sameAs(List<String> names) {
        if (names.size() < key.names().size()) {
            return false;
        }
        if (inRequestedOrder(names)) {
            return true;
        }
        for (String n : names) {
            if (!key.names().contains(n)) {
                return false;
            }
        }
        // every name is a member; they are all of them only if as many distinct ("a, a" is not "a, b")
        return new HashSet<>(names).size() == key.names().size();
    }

    /**
     * Envoy repeats a subscription in the order it first sent it; comparing in that order
     * walks two arrays instead of hashing every name into the set (an ACK of 1,000 EDS names).
     */
    private boolean inRequestedOrder(List<String> names) {
        if (names.size() != asRequested.size()) {
            return false;
        }
        for (int i = 0; i < asRequested.size(); i++) {
            if (!asRequested.get(i).equals(names.get(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean contains(Object o) {
        return key.names().contains(o);
    }

    @Override
    public Iterator<String> iterator() {
        return ordered.iterator();
    }

    @Override
    public int size() {
        return key.names().size();
    }
}
