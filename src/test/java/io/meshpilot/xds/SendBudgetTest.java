package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meshpilot.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The server-wide budget of bytes in flight, with real threads waiting in it: writers go in
 * arrival order, the bound holds, and a response larger than the whole budget goes alone.
 */
class SendBudgetTest {
    private final SendBudget budget = new SendBudget(100);
    /** The writers that got their bytes, in the order they got them. */
    private final List<String> granted = new CopyOnWriteArrayList<>();

    @Test
    void writersWaitInOrderAndNeverPassTheBound() throws Exception {
        budget.acquire(60, this);
        Thread big = waiting(60, "big");
        // 10 bytes would fit now, but a writer came first: small responses do not starve a large one
        Thread small = waiting(10, "small");
        assertEquals(List.of(), granted);

        budget.release(60);
        big.join(10_000);
        small.join(10_000);
        // both fit now and are let go together (the threads then record it in either order)
        assertEquals(Set.of("big", "small"), Set.copyOf(granted));
        assertEquals(70, budget.inFlight());
        budget.release(70);
        assertEquals(0, budget.inFlight());
    }

    @Test
    void aResponseLargerThanTheBudgetGoesWhenNothingElseIsInFlight() throws Exception {
        budget.acquire(10, this);
        Thread huge = waiting(500, "huge");
        budget.release(10);
        huge.join(10_000);
        assertEquals(List.of("huge"), granted);
        assertEquals(500, budget.inFlight());

        Thread next = waiting(1, "next"); // while the large one is in flight
        budget.release(500);
        next.join(10_000);
        assertEquals(List.of("huge", "next"), granted);
    }

    @Test
    void parkedBytesLetOthersGoAndTheLongestParkedIsEvictedWhenTheParkedAccountIsFull() throws Exception {
        List<String> evicted = new CopyOnWriteArrayList<>();
        budget.acquire(60, this);
        budget.acquire(40, this);
        Thread c = waiting(50, "c");
        SendBudget.Parking a = budget.park(60, () -> evicted.add("a"));
        c.join(10_000);
        assertEquals(List.of("c"), granted, "the stalled stream's parked bytes no longer hold the others");
        assertEquals(90, budget.inFlight());
        budget.park(40, () -> evicted.add("b"));
        assertEquals(List.of(), evicted, "100 parked bytes fit the parked account");
        budget.park(50, () -> evicted.add("c"));
        assertEquals(List.of("a"), evicted, "the longest-parked stream made room");
        assertEquals(90, budget.parked());
        budget.unpark(a); // its writer ends the evicted stream: nothing more to give back
        assertEquals(90, budget.parked());
        assertEquals(0, budget.inFlight());
    }

    @Test
    void aBudgetOfNothingIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new SendBudget(0));
    }

    /** A writer asking for {@code bytes}, started and seen waiting; it adds {@code name} to {@link #granted} once it has them. */
    private Thread waiting(long bytes, String name) throws InterruptedException {
        int before = budget.waiting();
        Thread t = Thread.ofVirtual().start(() -> {
            budget.acquire(bytes, name);
            granted.add(name);
        });
        Await.until("the " + name + " writer waits for " + bytes + " bytes", Duration.ofSeconds(10),
                () -> budget.waiting() == before + 1);
        return t;
    }
}
