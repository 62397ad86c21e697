package io.meshpilot.security.kube;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The API server's recent answers about tokens (and, keyed by user, about access reviews), so that an agent's burst of calls (a CSR per
 * certificate, the xDS stream) costs one TokenReview. Keyed by a SHA-256 of the token, never
 * the token itself; at most {@code capacity} entries, the least recently used dropped first;
 * an entry lives {@code ttl}, far less than the shortest projected token (10 minutes), so a
 * token revoked with its pod stops working soon after. Only the API server's answers are
 * kept, never a failure to reach it.
 */
final class ReviewCache<V> {
    private record Entry<V>(V value, long expiresAtNanos) {
    }

    private final long ttlNanos;
    private final int capacity;
    private final LongSupplier nanoTime;
    private final Map<String, Entry<V>> entries;

    ReviewCache(Duration ttl, int capacity, LongSupplier nanoTime) {
        this.ttlNanos = ttl.toNanos();
        this.capacity = capacity;
        this.nanoTime = nanoTime;
        this.entries = new LinkedHashMap<>(16, 0.75f, true);
    }

    synchronized Optional<V> get(String token) {
        String key = key(token);
        Entry<V> e = entries.get(key);
        if (e == null) {
            return Optional.empty();
        }
        if (nanoTime.getAsLong() - e.expiresAtNanos >= 0) {
            entries.remove(key);
            return Optional.empty();
        }
        return Optional.of(e.value);
    }

    synchronized void put(String token, V value) {
        put(token, value, ttlNanos);
    }

    /** As {@link #put(String, Object)}, for {@code ttl} instead of the cache's own (a longer life for good answers). */
    synchronized void put(String token, V value, Duration ttl) {
        put(token, value, ttl.toNanos());
    }

    private void put(String token, V value, long ttlNanos) {
        if (ttlNanos <= 0) {
            return;
        }
        entries.put(key(token), new Entry<>(value, nanoTime.getAsLong() + ttlNanos));
        var it = entries.entrySet().iterator();
        while (entries.size() > capacity && it.hasNext()) {
            it.next();
            it.remove();
        }
    }

    synchronized int size() {
        return entries.size();
    }

    private static String key(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
