package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.google.protobuf.Any;
import com.google.protobuf.StringValue;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class XdsCacheTest {
    static final String REVIEWS = "outbound|9080||reviews.default.svc.cluster.local";

    @Test
    void sharesAcrossProxiesAndInvalidatesByDependency() {
        XdsCache cache = new XdsCache(true);
        AtomicInteger builds = new AtomicInteger();
        Any first = cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet())));
        assertSame(first, cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet()))));
        assertEquals(1, builds.get(), "the second proxy gets the same serialized resource");
        cache.invalidateHosts(Set.of("ratings.default.svc.cluster.local"));
        assertSame(first, cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("x"))), "other hosts do not evict it");
        cache.invalidateHosts(Set.of("reviews.default.svc.cluster.local"));
        assertNotSame(first, cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet()))));
        assertEquals(2, builds.get());

        Any underRule = cache.endpoints(REVIEWS, "DestinationRule/default/reviews", () -> Any.pack(StringValue.of("r")));
        assertNotSame(underRule, cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("y"))),
                "subset labels depend on the DestinationRule a proxy sees: kept apart");

        List<Any> v1 = cache.clusters(1, "default", () -> List.of(Any.pack(StringValue.of("c1"))));
        assertSame(v1, cache.clusters(1, "default", () -> List.of()));
        assertNotSame(v1, cache.clusters(1, "other", () -> List.of(Any.pack(StringValue.of("c3")))),
                "another namespace/Sidecar sees other clusters");
        assertNotSame(v1, cache.clusters(2, "default", () -> List.of(Any.pack(StringValue.of("c2")))),
                "a new push version rebuilds");
    }

    @Test
    void aBuildThatRacedAnInvalidationIsNotStored() {
        XdsCache cache = new XdsCache(true);
        Any stale = cache.endpoints(REVIEWS, "", () -> {
            cache.invalidateHosts(Set.of("reviews.default.svc.cluster.local")); // endpoints changed mid-build
            return Any.pack(StringValue.of("old"));
        });
        Any fresh = cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("new")));
        assertNotSame(stale, fresh, "the stale build was served once but not cached");
        assertEquals(Any.pack(StringValue.of("new")), fresh);
    }

    @Test
    void disabledBuildsEveryTime() {
        XdsCache cache = new XdsCache(false);
        AtomicInteger builds = new AtomicInteger();
        cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet())));
        cache.endpoints(REVIEWS, "", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet())));
        assertEquals(2, builds.get());
    }

    @Test
    void endpointAssignmentsAreBoundedAsIstiodsCacheTheLeastRecentlyUsedGoingFirst() {
        XdsCache cache = new XdsCache(true); // PILOT_XDS_CACHE_SIZE unset: istiod's 60000
        long evictedBefore = XdsCache.EVICTIONS.value("size");
        AtomicInteger builds = new AtomicInteger();
        Any first = cache.endpoints(REVIEWS, "variant-0", () -> Any.pack(StringValue.of("first")));
        for (int i = 1; i < 60_000; i++) {
            cache.endpoints(REVIEWS, "variant-" + i, () -> Any.pack(StringValue.of("v")));
        }
        assertSame(first, cache.endpoints(REVIEWS, "variant-0", () -> Any.pack(StringValue.of("rebuilt"))),
                "60000 fit; reading variant-0 makes it the most recently used");
        cache.endpoints(REVIEWS, "variant-60000", () -> Any.pack(StringValue.of("v")));
        assertEquals(60_000, cache.size(), "one over the bound evicts one");
        assertEquals(1, XdsCache.EVICTIONS.value("size") - evictedBefore, "counted as istiod's size eviction");
        assertSame(first, cache.endpoints(REVIEWS, "variant-0", () -> Any.pack(StringValue.of("rebuilt"))));
        cache.endpoints(REVIEWS, "variant-1", () -> Any.pack(StringValue.of("v" + builds.incrementAndGet())));
        assertEquals(1, builds.get(), "variant-1, the least recently used, went and is built again");

        cache.invalidateHosts(Set.of("reviews.default.svc.cluster.local"));
        assertEquals(0, cache.size(), "an endpoint change still evicts everything of the host");
    }

    @Test
    void theBoundIsPilotXdsCacheSize() {
        XdsCache cache = new XdsCache(true, 2);
        for (String variant : List.of("a", "b", "c")) {
            cache.endpoints(REVIEWS, variant, () -> Any.pack(StringValue.of(variant)));
        }
        assertEquals(2, cache.size());
    }
}
