package io.meshpilot.config.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.config.schema.Schemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MemoryConfigStoreTest {
    static final GroupVersionKind VS = new GroupVersionKind("networking.istio.io", "v1", "VirtualService");

    static Config vs(String ns, String name, String... hosts) {
        return Config.of(VS, ns, name, spec(hosts));
    }

    /** A VirtualService for the hosts that passes istiod's validation (one route to the first host). */
    static VirtualService spec(String... hosts) {
        return VirtualService.newBuilder().addAllHosts(List.of(hosts))
                .addHttp(HTTPRoute.newBuilder().addRoute(HTTPRouteDestination.newBuilder()
                        .setDestination(Destination.newBuilder().setHost(hosts[0]))))
                .build();
    }

    static MemoryConfigStore store() {
        MemoryConfigStore s = new MemoryConfigStore("test", Schemas.PILOT.all(), true);
        s.run();
        return s;
    }

    @Test
    void crudWithTypedErrors() {
        try (MemoryConfigStore s = store()) {
            Config created = s.create(vs("ns1", "a", "a.example.com"));
            assertEquals(1, created.generation());
            assertTrue(!created.resourceVersion().isEmpty());
            assertThrows(ConfigStoreException.AlreadyExists.class, () -> s.create(vs("ns1", "a", "x")));
            Config updated = s.update(created.withSpec(spec("b.example.com")));
            assertEquals(2, updated.generation());
            assertThrows(ConfigStoreException.Conflict.class,
                    () -> s.update(created.withSpec(spec("c"))),
                    "the first resourceVersion is stale now");
            Config labelled = s.update(updated.withLabels(Map.of("team", "x")));
            assertEquals(2, labelled.generation(), "metadata-only updates keep the generation");
            assertThrows(ConfigStoreException.NotFound.class, () -> s.update(vs("ns1", "zzz", "x")));
            assertThrows(ConfigStoreException.Conflict.class,
                    () -> s.delete("VirtualService", "ns1", "a", updated.resourceVersion()));
            s.delete("VirtualService", "ns1", "a", labelled.resourceVersion());
            assertTrue(s.get("VirtualService", "ns1", "a").isEmpty());
            assertThrows(ConfigStoreException.NotFound.class, () -> s.delete("VirtualService", "ns1", "a", ""));
        }
    }

    @Test
    void listFiltersByNamespace() {
        try (MemoryConfigStore s = store()) {
            s.create(vs("ns1", "a", "a"));
            s.create(vs("ns2", "b", "b"));
            s.create(vs("ns1", "c", "c"));
            assertEquals(3, s.list("VirtualService", null).size());
            assertEquals(List.of("a", "c"), s.list("VirtualService", "ns1").stream().map(Config::name).toList());
        }
    }

    @Test
    void statusUpdatesLeaveTheSpecAlone() {
        try (MemoryConfigStore s = store()) {
            Config c = s.create(vs("ns", "a", "a"));
            var status = Struct.newBuilder().putFields("observedGeneration",
                    Value.newBuilder().setNumberValue(1).build()).build();
            Config after = s.updateStatus(c.withSpec(spec("evil")).withStatus(status));
            assertEquals(c.spec(), after.spec());
            assertEquals(status, after.status());
        }
    }

    /** 8 threads increment a counter kept in one object through read-modify-write with resourceVersion. */
    @Test
    void concurrentWritersLoseNoUpdate() throws Exception {
        int threads = 8;
        int perThread = 200;
        try (MemoryConfigStore s = store()) {
            s.create(vs("ns", "counter", "h0"));
            AtomicInteger conflicts = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            // every writer reads the first version before any writes it: at least threads - 1
            // Conflicts, however the scheduler runs the threads (on 2 busy cores they may not
            // overlap by themselves)
            CyclicBarrier firstRead = new CyclicBarrier(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    boolean first = true;
                    for (int i = 0; i < perThread; i++) {
                        while (true) {
                            Config cur = s.get("VirtualService", "ns", "counter").orElseThrow();
                            int n = Integer.parseInt(cur.spec() instanceof VirtualService v ? v.getHosts(0).substring(1) : "0");
                            if (first) {
                                first = false;
                                firstRead.await(60, TimeUnit.SECONDS);
                            }
                            try {
                                s.update(cur.withSpec(spec("h" + (n + 1))));
                                break;
                            } catch (ConfigStoreException.Conflict e) {
                                conflicts.incrementAndGet();
                            }
                        }
                        // other objects are created and deleted concurrently, too
                        Config mine = s.create(vs("ns", "t" + id + "-" + i, "x"));
                        s.delete("VirtualService", "ns", mine.name(), mine.resourceVersion());
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
            pool.shutdown();
            VirtualService v = (VirtualService) s.get("VirtualService", "ns", "counter").orElseThrow().spec();
            assertEquals("h" + threads * perThread, v.getHosts(0), "every increment survived");
            assertTrue(conflicts.get() > 0, "writers raced, so some saw Conflict and retried");
            assertEquals(1, s.list("VirtualService", "ns").size());
        }
    }

    @Test
    void eventsArriveInOrderPerObjectAndAFailingHandlerIsIsolated() throws Exception {
        try (MemoryConfigStore s = new MemoryConfigStore("test", Schemas.PILOT.all(), true)) {
            Map<String, List<String>> seen = new ConcurrentHashMap<>();
            List<String> second = new CopyOnWriteArrayList<>();
            s.registerEventHandler("VirtualService", e -> {
                throw new IllegalStateException("broken handler");
            });
            s.registerEventHandler("VirtualService", e -> {
                Config c = e.current();
                seen.computeIfAbsent(c.name(), k -> new CopyOnWriteArrayList<>())
                        .add(e.type() + ":" + ((VirtualService) c.spec()).getHosts(0));
                second.add(c.name());
            });
            // events made before run() are held, then delivered
            Config a = s.create(vs("ns", "a", "1"));
            s.run();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            for (int t = 0; t < 4; t++) {
                int id = t;
                pool.submit(() -> {
                    Config c = s.create(vs("ns", "o" + id, "1"));
                    for (int i = 2; i <= 50; i++) {
                        c = s.update(c.withSpec(spec(Integer.toString(i))));
                    }
                    s.delete("VirtualService", "ns", c.name(), c.resourceVersion());
                    return null;
                });
            }
            pool.shutdown();
            assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
            s.update(a.withSpec(spec("2")));
            assertTrue(s.awaitEventsDelivered(30, TimeUnit.SECONDS));
            for (int t = 0; t < 4; t++) {
                List<String> events = seen.get("o" + t);
                assertEquals(51, events.size());
                assertEquals("ADD:1", events.get(0));
                for (int i = 2; i <= 50; i++) {
                    assertEquals("UPDATE:" + i, events.get(i - 1), "per-object order");
                }
                assertEquals("DELETE:50", events.get(50));
            }
            assertEquals(List.of("ADD:1", "UPDATE:2"), seen.get("a"));
        }
    }

    @Test
    void invalidObjectsAreRejectedWithTheirErrors() {
        try (MemoryConfigStore s = store()) {
            var ex = assertThrows(ConfigStoreException.Invalid.class,
                    () -> s.create(Config.of(VS, "ns", "bad", Gateway.getDefaultInstance())));
            assertTrue(ex.getMessage().contains("spec"), ex.getMessage());
        }
    }
}
