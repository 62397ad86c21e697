package io.meshpilot.testing.kube;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * {@code ?watch=true}: a chunked stream of newline-separated watch events, as the real server
 * writes them. From no resourceVersion (or "0") the current objects come first as ADDED; from a
 * resourceVersion, the changes after it, or one ERROR event with a 410 Expired Status when that
 * history is compacted. Label and field selectors turn a change into or out of the selection
 * into ADDED or DELETED, as the watch cache does. With {@code allowWatchBookmarks=true} a
 * BOOKMARK carrying the current resourceVersion is sent every {@code bookmarkInterval}.
 * The stream ends after {@code timeoutSeconds} (default 30 minutes, the real server's minimum
 * request timeout), when the server stops, or when {@link #closeAll()} is called.
 */
final class WatchStreams {
    private static final long DEFAULT_TIMEOUT_SECONDS = 1800;
    private static final ObjectStore.Event END = new ObjectStore.Event(-1, "", "END", null, null);

    private final ObjectStore store;
    private final Set<BlockingQueue<ObjectStore.Event>> open = ConcurrentHashMap.newKeySet();
    private volatile Duration bookmarkInterval = Duration.ofSeconds(2);

    WatchStreams(ObjectStore store) {
        this.store = store;
    }

    void bookmarkInterval(Duration interval) {
        this.bookmarkInterval = interval;
    }

    int openCount() {
        return open.size();
    }

    /** Ends every open watch stream (the clients see the stream close, as when a server restarts). */
    void closeAll() {
        open.forEach(q -> q.offer(END));
    }

    int serve(HttpExchange exchange, ResourceType type, String namespace, Map<String, String> query)
            throws IOException {
        Predicate<JsonObject> selector = Selector.of(query.get("labelSelector"), query.get("fieldSelector"));
        String rv = query.get("resourceVersion");
        Long from = rv == null || rv.isEmpty() || rv.equals("0") ? null : parseRevision(rv);
        boolean bookmarks = "true".equals(query.get("allowWatchBookmarks"));
        long timeoutSeconds = query.containsKey("timeoutSeconds")
                ? Long.parseLong(query.get("timeoutSeconds")) : DEFAULT_TIMEOUT_SECONDS;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);

        BlockingQueue<ObjectStore.Event> queue = new LinkedBlockingQueue<>();
        Consumer<ObjectStore.Event> sink = queue::offer;
        List<ObjectStore.Event> initial;
        try {
            initial = store.watch(type, from, sink);
        } catch (ApiError gone) {
            // the real server answers 200 and reports the expiry as the stream's only event
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                JsonObject error = new JsonObject();
                error.addProperty("type", "ERROR");
                error.add("object", gone.status());
                write(out, error);
            }
            return 200;
        }
        open.add(queue);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, 0);
        long lastSent = from == null ? store.revision() : from;
        try (OutputStream out = exchange.getResponseBody()) {
            for (ObjectStore.Event e : initial) {
                lastSent = Math.max(lastSent, sendIfSelected(out, type, namespace, selector, e));
            }
            out.flush();
            long nextBookmark = System.nanoTime() + bookmarkInterval.toNanos();
            while (true) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    break;
                }
                long wait = Math.min(deadline - now, bookmarks ? Math.max(0, nextBookmark - now) : deadline - now);
                ObjectStore.Event e = queue.poll(wait, TimeUnit.NANOSECONDS);
                if (e == END) {
                    break;
                }
                if (e != null) {
                    lastSent = Math.max(lastSent, sendIfSelected(out, type, namespace, selector, e));
                    // send everything already queued before flushing, as one chunk
                    List<ObjectStore.Event> more = new ArrayList<>();
                    queue.drainTo(more);
                    boolean ended = false;
                    for (ObjectStore.Event m : more) {
                        if (m == END) {
                            ended = true;
                            break;
                        }
                        lastSent = Math.max(lastSent, sendIfSelected(out, type, namespace, selector, m));
                    }
                    out.flush();
                    if (ended) {
                        break;
                    }
                }
                if (bookmarks && System.nanoTime() >= nextBookmark) {
                    lastSent = bookmark(out, type, queue, namespace, selector, lastSent);
                    nextBookmark = System.nanoTime() + bookmarkInterval.toNanos();
                }
            }
        } catch (IOException | InterruptedException e) {
            // the client went away (or the server is stopping): the watch ends
        } finally {
            store.unwatch(sink);
            open.remove(queue);
        }
        return 200;
    }

    /**
     * A BOOKMARK at the store's revision, after any event already queued up to that revision,
     * so a bookmark never claims a version whose events the client has not been sent.
     */
    private long bookmark(OutputStream out, ResourceType type, BlockingQueue<ObjectStore.Event> queue,
                          String namespace, Predicate<JsonObject> selector, long lastSent) throws IOException {
        long revision = store.revision();
        List<ObjectStore.Event> queued = new ArrayList<>();
        queue.drainTo(queued);
        for (ObjectStore.Event e : queued) {
            if (e == END) {
                queue.offer(END);
                break;
            }
            lastSent = Math.max(lastSent, sendIfSelected(out, type, namespace, selector, e));
        }
        long at = Math.max(revision, lastSent);
        JsonObject object = new JsonObject();
        object.addProperty("kind", type.kind());
        object.addProperty("apiVersion", type.apiVersion());
        JsonObject meta = new JsonObject();
        meta.addProperty("resourceVersion", Long.toString(at));
        object.add("metadata", meta);
        JsonObject event = new JsonObject();
        event.addProperty("type", "BOOKMARK");
        event.add("object", object);
        write(out, event);
        out.flush();
        return at;
    }

    /** Writes the event as this watch sees it; returns its revision (0 when filtered out). */
    private static long sendIfSelected(OutputStream out, ResourceType type, String namespace,
                                       Predicate<JsonObject> selector, ObjectStore.Event e) throws IOException {
        if (!e.storageKey().equals(type.storageKey())) {
            return 0;
        }
        if (namespace != null && !namespace.equals(Json.string(e.object(), "metadata", "namespace"))) {
            return 0;
        }
        boolean now = selector.test(e.object());
        boolean before = e.previous() != null && selector.test(e.previous());
        String kind = switch (e.type()) {
            case "ADDED" -> now ? "ADDED" : null;
            case "MODIFIED" -> now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : null;
            case "DELETED" -> now ? "DELETED" : null;
            default -> null;
        };
        if (kind == null) {
            return e.revision();
        }
        JsonObject event = new JsonObject();
        event.addProperty("type", kind);
        event.add("object", ApiHandler.served(type, e.object()));
        write(out, event);
        return e.revision();
    }

    private static void write(OutputStream out, JsonObject event) throws IOException {
        out.write((Json.GSON.toJson(event) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static long parseRevision(String rv) {
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException e) {
            throw ApiError.badRequest("invalid resource version \"" + rv + "\"");
        }
    }
}
