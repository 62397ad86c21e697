package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SubscribedNamesTest {
    private static List<String> fresh(String... names) {
        // new String objects, as a parsed request carries
        List<String> l = new ArrayList<>();
        for (String n : names) {
            l.add(new String(n.toCharArray()));
        }
        return l;
    }

    @Test
    void anAckRepeatingTheSubscriptionIsTheSameInAnyOrderOrWithRepeats() {
        SubscribedNames s = SubscribedNames.of(List.of("b", "a", "c"));
        assertTrue(s.sameAs(fresh("b", "a", "c")), "same order");
        assertTrue(s.sameAs(fresh("c", "b", "a")), "other order");
        assertTrue(s.sameAs(fresh("a", "b", "c", "a")), "a repeat");
    }

    @Test
    void aChangedSubscriptionIsNotTheSame() {
        SubscribedNames s = SubscribedNames.of(List.of("b", "a", "c"));
        assertFalse(s.sameAs(fresh("b", "a")), "one fewer");
        assertFalse(s.sameAs(fresh("b", "a", "d")), "one replaced, same size");
        assertFalse(s.sameAs(fresh("b", "a", "c", "d")), "one more");
        assertFalse(s.sameAs(fresh("b", "a", "a")), "a repeat instead of a name");
        assertFalse(SubscribedNames.EMPTY.sameAs(fresh("a")));
        assertTrue(SubscribedNames.EMPTY.sameAs(List.of()));
    }

    @Test
    void iteratesSortedAndComparesAsASet() {
        SubscribedNames s = SubscribedNames.of(List.of("b", "a", "c", "a"));
        assertEquals(List.of("a", "b", "c"), new ArrayList<>(s));
        assertEquals(SubscribedNames.of(List.of("c", "b", "a")), s);
        assertEquals(SubscribedNames.of(List.of("c", "b", "a")).hashCode(), s.hashCode());
    }

    @Test
    void subscriptionsToTheSameNamesShareOneInstanceHoldingTheFirstRequestsStrings() {
        SubscribedNames.Pool pool = new SubscribedNames.Pool();
        List<String> firstRequest = fresh("x-b", "x-a", "x-c");
        List<String> secondRequest = fresh("x-b", "x-a", "x-c");
        SubscribedNames first = pool.of(firstRequest);
        SubscribedNames second = pool.of(secondRequest);
        assertSame(first, second, "the same names: one instance");
        // the names are held once: the second request's String objects are not kept
        assertSame(firstRequest.get(1), second.iterator().next());
        assertNotSame(secondRequest.get(1), second.iterator().next());

        List<String> reordered = fresh("x-c", "x-b", "x-a");
        assertSame(first, pool.of(reordered), "another order: the same instance");
        assertTrue(first.sameAs(reordered), "an ACK in that order is still the same subscription");
        assertNotSame(first, pool.of(fresh("x-b", "x-a")), "other names");
        assertNotSame(first, new SubscribedNames.Pool().of(fresh("x-b", "x-a", "x-c")),
                "another server's subscriptions are its own");
    }

    @Test
    void aSubscriptionNoProxyHoldsIsNotKept() throws InterruptedException {
        SubscribedNames.Pool pool = new SubscribedNames.Pool();
        WeakReference<SubscribedNames> gone = new WeakReference<>(pool.of(fresh("gc-a", "gc-b")));
        for (int i = 0; i < 50 && gone.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(gone.get(), "the shared table must not hold subscriptions alive");
        SubscribedNames again = pool.of(fresh("gc-a", "gc-b"));
        assertTrue(again.sameAs(fresh("gc-b", "gc-a")));
    }
}
