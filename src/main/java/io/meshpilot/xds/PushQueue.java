package io.meshpilot.xds;

import io.meshpilot.model.PushRequest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * istiod's push queue: at most one pending push per connection, in arrival order. A request
 * for a connection that is already waiting merges into its pending push (keeping its place);
 * one for a connection a worker is pushing right now is held and queued again when that push
 * is done, so a connection is never pushed by two workers at once and a burst of changes
 * costs a busy proxy one more push, not one per change.
 */
final class PushQueue {
    /** A connection's pending push: the merged request, and when it was first queued. */
    record Item(Connection connection, PushRequest request, long queuedNanos) {
    }

    private final LinkedHashMap<Connection, Item> pending = new LinkedHashMap<>();
    private final Map<Connection, Item> held = new HashMap<>();
    private final Set<Connection> processing = new HashSet<>();
    private boolean closed;

    synchronized void enqueue(Connection con, PushRequest request) {
        if (closed) {
            return;
        }
        Item waiting = pending.get(con);
        if (waiting != null) {
            pending.put(con, new Item(con, waiting.request().merge(request), waiting.queuedNanos()));
            return;
        }
        if (processing.contains(con)) {
            held.merge(con, new Item(con, request, System.nanoTime()),
                    (a, b) -> new Item(con, a.request().merge(b.request()), a.queuedNanos()));
            return;
        }
        pending.put(con, new Item(con, request, System.nanoTime()));
        notifyAll();
    }

    /** The oldest pending push, marked as being processed; blocks while there is none. Null once closed. */
    synchronized Item dequeue() throws InterruptedException {
        while (pending.isEmpty() && !closed) {
            wait();
        }
        if (closed) {
            return null;
        }
        Iterator<Item> it = pending.values().iterator();
        Item next = it.next();
        it.remove();
        processing.add(next.connection());
        return next;
    }

    /** The push of {@code con} is done: a request held meanwhile is queued now. */
    synchronized void done(Connection con) {
        processing.remove(con);
        Item again = held.remove(con);
        if (again != null && !closed) {
            pending.put(con, again);
            notifyAll();
        }
    }

    /** Pushes waiting (for /debug and tests). */
    synchronized int pending() {
        return pending.size() + held.size();
    }

    synchronized void close() {
        closed = true;
        pending.clear();
        held.clear();
        notifyAll();
    }
}
