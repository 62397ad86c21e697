package io.meshpilot.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The byte budget that bounds what Helidon's response writes hold at once. */
class WriteBudgetTest {

    @Test
    void writesShareTheBudgetAndAWriterWaitsForRoom() throws Exception {
        WriteBudget budget = new WriteBudget(1000);
        int first = budget.take(700);
        assertEquals(700, first);
        assertEquals(300, budget.available());

        CountDownLatch tookSecond = new CountDownLatch(1);
        Thread second = Thread.ofVirtual().start(() -> {
            int share = budget.take(500);
            tookSecond.countDown();
            budget.give(share);
        });
        assertFalse(tookSecond.await(200, TimeUnit.MILLISECONDS), "500 bytes do not fit beside 700 of 1000");
        budget.give(first);
        assertTrue(tookSecond.await(10, TimeUnit.SECONDS), "the waiting write goes once the first gives back");
        second.join();
        assertEquals(1000, budget.available());
    }

    @Test
    void aWriteLargerThanTheBudgetTakesAllOfItAndStillGoes() {
        WriteBudget budget = new WriteBudget(1000);
        int share = budget.take(5000);
        assertEquals(1000, share);
        assertEquals(0, budget.available());
        budget.give(share);
        assertEquals(1000, budget.available());
        assertEquals(0, budget.take(0), "nothing to take for an empty write");
        assertThrows(IllegalArgumentException.class, () -> new WriteBudget(0));
    }
}
