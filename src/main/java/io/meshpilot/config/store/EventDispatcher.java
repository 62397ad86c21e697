package io.meshpilot.config.store;

import io.meshpilot.config.ConfigEvent;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Delivers a store's events on one thread, in the order they were submitted (so per object
 * in commit order), starting when the store runs. A handler that throws is logged with the
 * object's key and the other handlers still get the event.
 */
public final class EventDispatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(EventDispatcher.class.getName());

    private final Map<String, List<Consumer<ConfigEvent>>> handlers = new ConcurrentHashMap<>();
    private final CountDownLatch running = new CountDownLatch(1);
    private final ExecutorService executor;

    public EventDispatcher(String name) {
        executor = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().name("config-events-" + name)
                .unstarted(r));
    }

    public void register(String kind, Consumer<ConfigEvent> handler) {
        handlers.computeIfAbsent(kind, k -> new CopyOnWriteArrayList<>()).add(handler);
    }

    /** Queues an event; call while holding the lock that ordered the change. */
    public void submit(ConfigEvent event) {
        String kind = (event.current() != null ? event.current() : event.old()).gvk().kind();
        executor.execute(() -> {
            try {
                running.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            for (Consumer<ConfigEvent> h : handlers.getOrDefault(kind, List.of())) {
                try {
                    h.accept(event);
                } catch (RuntimeException e) {
                    var c = event.current() != null ? event.current() : event.old();
                    LOG.log(Level.ERROR, "config event handler failed config=" + c.key() + " event=" + event.type(), e);
                }
            }
        });
    }

    public void start() {
        running.countDown();
    }

    /** Waits until every event submitted so far was delivered (tests, shutdown). */
    public boolean drain(long timeout, TimeUnit unit) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        executor.execute(done::countDown);
        return done.await(timeout, unit);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
