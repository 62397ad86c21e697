package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Gateway hostnames as istiod's networkGatewayNameCache keeps them: looked up when a push first
 * asks, looked up again on refresh with one push when an answer changed, the last answer kept
 * when a lookup fails, names no push asks for forgotten. The DNS is a table the test edits; the
 * refresh is run by the test (the periodic one is an hour away).
 */
class GatewayNameCacheTest {
    final Map<String, List<String>> dns = new HashMap<>();
    final List<String> lookups = new ArrayList<>();
    final AtomicInteger pushes = new AtomicInteger();
    final GatewayNameCache cache = new GatewayNameCache(name -> {
        lookups.add(name);
        List<String> a = dns.get(name);
        if (a == null) {
            throw new UnknownHostException(name);
        }
        return a;
    }, Duration.ofHours(1), pushes::incrementAndGet);

    @AfterEach
    void close() {
        cache.close();
    }

    @Test
    void namesAreResolvedOnFirstUseAndRefreshedWithOnePushWhenTheyChange() {
        dns.put("lb.example", List.of("192.0.2.2", "192.0.2.1"));
        assertEquals(Map.of("lb.example", List.of("192.0.2.1", "192.0.2.2")), cache.resolve(Set.of("lb.example")));
        cache.resolve(Set.of("lb.example"));
        assertEquals(List.of("lb.example"), lookups, "a known name is not looked up again by a push");

        cache.refresh();
        assertEquals(0, pushes.get(), "the same answer: no push");
        dns.put("lb.example", List.of("192.0.2.3"));
        cache.refresh();
        assertEquals(1, pushes.get());
        assertEquals(Map.of("lb.example", List.of("192.0.2.3")), cache.resolve(Set.of("lb.example")));
    }

    @Test
    void aFailedLookupKeepsTheLastAddressesAndAnUnknownNameHasNone() {
        dns.put("lb.example", List.of("192.0.2.1"));
        cache.resolve(Set.of("lb.example", "gone.example"));
        dns.remove("lb.example");
        cache.refresh();
        assertEquals(0, pushes.get());
        assertEquals(Map.of("lb.example", List.of("192.0.2.1"), "gone.example", List.of()),
                cache.resolve(Set.of("lb.example", "gone.example")));
    }

    @Test
    void namesNoPushAsksForAreForgotten() {
        dns.put("old.example", List.of("192.0.2.1"));
        dns.put("new.example", List.of("192.0.2.2"));
        cache.resolve(Set.of("old.example"));
        cache.resolve(Set.of("new.example"));
        lookups.clear();
        cache.refresh();
        assertEquals(List.of("new.example"), lookups);
    }
}
