package io.meshpilot.xds;

import java.lang.ref.WeakReference;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
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
 * <p>Proxies that request the same names in the same order share one instance (sidecars of a
 * scope ask for the same 1,000 EDS clusters, in the order of the CDS response they share). The
 * names are then held once instead of once per proxy (most of a sidecar's memory in the
 * server), and a shared response is found by an identity comparison instead of comparing
 * 1,000 names per push.
 */
final class SubscribedNames extends AbstractSet<String> {
    static final SubscribedNames EMPTY = new SubscribedNames(List.of());
    /** Keyed by the requested list each instance holds, so an entry lives as long as its instance. */
    private static final Map<List<String>, WeakReference<SubscribedNames>> SHARED = new WeakHashMap<>();

    private final Set<String> members;
    private final List<String> ordered;
    /** The names in the order they were requested (the same String objects as the members). */
    private final List<String> asRequested;
    private final int hash;

    private SubscribedNames(List<String> requested) {
        this.members = Set.copyOf(new HashSet<>(requested));
        String[] sorted = members.toArray(String[]::new);
        Arrays.sort(sorted);
        this.ordered = List.of(sorted);
        this.asRequested = requested;
        this.hash = members.hashCode();
    }

    /** Computed once: shared responses are looked up by their names. */
    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof SubscribedNames other) {
            return other == this || other.hash == hash && other.members.equals(members);
        }
        return super.equals(o);
    }

    /** The subscription to {@code names}, shared with every other subscription to them in that order. */
    static SubscribedNames of(Collection<String> names) {
        if (names.isEmpty()) {
            return EMPTY;
        }
        List<String> requested = List.copyOf(names);
        SubscribedNames existing = shared(requested);
        if (existing != null) {
            return existing;
        }
        SubscribedNames created = new SubscribedNames(requested);
        synchronized (SHARED) {
            SubscribedNames raced = shared(requested);
            if (raced != null) {
                return raced;
            }
            SHARED.put(created.asRequested, new WeakReference<>(created));
        }
        return created;
    }

    private static SubscribedNames shared(List<String> requested) {
        synchronized (SHARED) {
            WeakReference<SubscribedNames> ref = SHARED.get(requested);
            return ref == null ? null : ref.get();
        }
    }

    /** Whether {@code names} (a request's list, possibly with repeats) is exactly this subscription. */
    boolean sameAs(List<String> names) {
        if (names.size() < members.size()) {
            return false;
        }
        if (inRequestedOrder(names)) {
            return true;
        }
        for (String n : names) {
            if (!members.contains(n)) {
                return false;
            }
        }
        // every name is a member; they are all of them only if as many distinct ("a, a" is not "a, b")
        return new HashSet<>(names).size() == members.size();
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
        return members.contains(o);
    }

    @Override
    public Iterator<String> iterator() {
        return ordered.iterator();
    }

    @Override
    public int size() {
        return members.size();
    }
}
