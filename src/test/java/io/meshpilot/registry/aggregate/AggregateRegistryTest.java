package io.meshpilot.registry.aggregate;

import io.meshpilot.registry.RecordingUpdates;
import io.meshpilot.registry.ServiceEvent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.registry.memory.MemoryRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AggregateRegistryTest {
    static Service svc(String host, String cluster, String vip, int port) {
        return new Service(host, "default", List.of(new Port("http", port, Protocol.HTTP)), vip,
                Map.of(cluster, List.of(vip)), "", Resolution.CLIENT_SIDE_LB, false, Set.of(), Map.of(), "Mock", cluster,
                Instant.EPOCH, null);
    }

    static IstioEndpoint ep(String ip) {
        return new IstioEndpoint(ip, 8080, "http", Map.of(), "", "", Locality.NONE, "disabled", 0, null, "", "default");
    }

    /** The same registries, filled in random orders, always resolve conflicts the same way. */
    @Test
    void conflictingHostnamesResolveTheSameWayEveryTime() {
        String expected = null;
        Random random = new Random(7);
        for (int round = 0; round < 200; round++) {
            RecordingUpdates updates = new RecordingUpdates();
            MemoryRegistry east = new MemoryRegistry("Mock", "east", updates);
            MemoryRegistry east2 = new MemoryRegistry("Mock2", "east", updates);
            MemoryRegistry west = new MemoryRegistry("Mock", "west", updates);
            List<Runnable> fills = new ArrayList<>(List.of(
                    () -> east.addService(svc("shared.example", "east", "10.0.0.1", 80)),
                    () -> east2.addService(svc("shared.example", "east", "10.9.9.9", 81)),
                    () -> west.addService(svc("shared.example", "west", "10.1.0.1", 82)),
                    () -> west.addService(svc("west-only.example", "west", "10.1.0.2", 80))));
            Collections.shuffle(fills, random);
            fills.forEach(Runnable::run);
            AggregateRegistry aggregate = new AggregateRegistry();
            aggregate.addRegistry(east);
            aggregate.addRegistry(east2);
            aggregate.addRegistry(west);
            Service shared = aggregate.service("shared.example").orElseThrow();
            String seen = shared.ports() + " " + new TreeMap<>(shared.clusterVips()) + " "
                    + aggregate.services().stream().map(Service::hostname).toList();
            if (expected == null) {
                expected = seen;
            }
            assertEquals(expected, seen, "round " + round);
            assertEquals(80, shared.ports().get(0).port(), "the first registry's service wins");
            assertEquals(Map.of("east", List.of("10.0.0.1"), "west", List.of("10.1.0.1")), shared.clusterVips(),
                    "another cluster's VIP is merged; the same cluster's second registry adds none");
            assertEquals(shared, aggregate.services().get(0));
        }
    }

    @Test
    void registriesComeAndGoAtRunTime() {
        RecordingUpdates updates = new RecordingUpdates();
        MemoryRegistry a = new MemoryRegistry("Mock", "a", updates);
        MemoryRegistry b = new MemoryRegistry("Mock", "b", updates);
        AggregateRegistry aggregate = new AggregateRegistry();
        List<ServiceEvent> events = new ArrayList<>();
        aggregate.appendServiceHandler(events::add);
        aggregate.addRegistry(a);
        a.addService(svc("x.example", "a", "10.0.0.1", 80));
        a.setEndpoints("x.example", List.of(ep("10.0.1.1"), ep("10.0.1.2")));
        aggregate.addRegistry(b);
        b.addService(svc("x.example", "b", "10.0.0.2", 80));
        b.setEndpoints("x.example", List.of(ep("10.0.2.1")));
        assertEquals(2, events.size(), "handlers reach registries added later too");
        Service x = aggregate.service("x.example").orElseThrow();
        assertEquals(3, aggregate.instances(x, 80, Map.of()).size(), "instances from both clusters");
        aggregate.removeRegistry(a);
        assertEquals("b", aggregate.service("x.example").orElseThrow().clusterId());
        assertEquals(1, aggregate.instances(aggregate.service("x.example").orElseThrow(), 80, Map.of()).size());
        assertTrue(aggregate.hasSynced());
    }
}
