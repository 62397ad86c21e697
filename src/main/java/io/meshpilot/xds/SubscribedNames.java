package io.meshpilot.xds;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * The resource names of one subscription: hashed for membership (every ACK compares the
 * names it repeats) and sorted once for iteration (every push walks them in a stable order).
 * Immutable.
 */
final class SubscribedNames extends AbstractSet<String> {
    static final SubscribedNames EMPTY = new SubscribedNames(List.of());

    private final Set<String> members;
    private final List<String> ordered;
    /** The names in the order they were requested (the same String objects as the members). */
    private final String[] asRequested;
    private final int hash;

    private SubscribedNames(Collection<String> names) {
        this.members = Set.copyOf(new HashSet<>(names));
        String[] sorted = members.toArray(String[]::new);
        Arrays.sort(sorted);
        this.ordered = List.of(sorted);
        this.asRequested = names.toArray(String[]::new);
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

    static SubscribedNames of(Collection<String> names) {
        return names.isEmpty() ? EMPTY : new SubscribedNames(names);
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
        if (names.size() != asRequested.length) {
            return false;
        }
        for (int i = 0; i < asRequested.length; i++) {
            if (!asRequested[i].equals(names.get(i))) {
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
