package io.meshpilot.model;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The problems the generators find while they build one proxy's config from a PushContext
 * (istiod's {@code PushContext.AddMetric} from CDS, EDS, LDS and the service targets): kept
 * with that PushContext until the next one replaces it, as istiod keeps its ProxyStatus.
 * Recording what is already recorded costs a map lookup and changes nothing, so each proxy's
 * regeneration does not churn the push-status readers.
 */
public final class PushRecords {
    private final Map<String, Map<String, PushDiagnostics.Entry>> byMetric = new ConcurrentHashMap<>();
    private final AtomicLong changes = new AtomicLong();

    /** Records {@code key} of {@code metric}; as istiod's AddMetric, a key recorded again keeps the last. */
    public void add(PushMetric metric, String key, String proxy, String message) {
        Map<String, PushDiagnostics.Entry> entries = byMetric.get(metric.name());
        if (entries == null) {
            entries = byMetric.computeIfAbsent(metric.name(), m -> new ConcurrentHashMap<>());
        }
        PushDiagnostics.Entry old = entries.get(key);
        String p = proxy == null ? "" : proxy;
        String m = message == null ? "" : message;
        if (old != null && old.proxy().equals(p) && old.message().equals(m)) {
            return;
        }
        entries.put(key, new PushDiagnostics.Entry(p, m));
        changes.incrementAndGet();
    }

    /** Counts the changes so far: a reader caching {@link #snapshot()} rebuilds it when this moves. */
    public long changes() {
        return changes.get();
    }

    /** What is recorded now, as push-status entries. */
    public PushDiagnostics snapshot() {
        PushDiagnostics.Builder out = PushDiagnostics.builder();
        byMetric.forEach((metric, entries) -> {
            PushMetric m = Objects.requireNonNull(PushMetric.known().stream()
                    .filter(k -> k.name().equals(metric)).findFirst().orElse(null));
            entries.forEach((key, e) -> out.add(m, key, e.proxy(), e.message()));
        });
        return out.build();
    }
}
