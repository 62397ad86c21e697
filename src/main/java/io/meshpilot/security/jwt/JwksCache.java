package io.meshpilot.security.jwt;

import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.meshpilot.model.JwksResolver;
import io.meshpilot.monitoring.IstioCounter;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The key sets of RequestAuthentication rules, fetched by MeshPilot and handed to pushes to be
 * inlined (istiod's JwksResolver with PILOT_JWT_ENABLE_REMOTE_JWKS=false). A key set is fetched
 * in the background, never on a push's thread: {@link #resolve} starts the fetches of key sets it
 * has never seen and waits for them at most {@link Options#firstFetchWait} in all, then answers
 * with what is held; a key set that is not held (still fetching, the server hangs, the answer is
 * not a key set) is left out, so the push uses the fail-closed
 * {@link JwksResolver#PUBLIC_ONLY_JWKS}. Held key sets are refreshed every
 * {@link Options#refreshInterval} (PILOT_JWT_PUB_KEY_REFRESH_INTERVAL, 20 minutes); a failed fetch
 * is retried after {@link Options#retryOnFailure}, doubling up to an hour, and a failed refresh
 * keeps the keys held before, as istiod. When keys arrive or change after a push used others, the
 * change handlers run (istiod's PushFunc: a full push). Key sets unused or not refreshed for
 * {@link Options#evictAfter} are dropped.
 *
 * <p>Each fetch is bounded by the rule's timeout (5s by default) and {@link DocumentFetcher}'s
 * size limit, never goes to a link-local or cloud metadata address ({@link KeyServerAddresses}),
 * and is counted in istiod's pilot_jwks_resolver_network_fetch_{success,fail}_total; a rule
 * without jwksUri finds its key set by OIDC discovery from the issuer.
 */
public final class JwksCache implements JwksResolver, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(JwksCache.class.getName());
    static final IstioCounter FETCH_SUCCESS = IstioCounter.of("pilot_jwks_resolver_network_fetch_success_total",
            "Total number of successfully network fetch by pilot jwks resolver");
    static final IstioCounter FETCH_FAIL = IstioCounter.of("pilot_jwks_resolver_network_fetch_fail_total",
            "Total number of failed network fetch by pilot jwks resolver");

    /**
     * @param firstFetchWait  how long one {@link #resolve} waits, in all, for key sets never fetched before
     * @param refreshInterval how often held key sets are fetched again
     * @param retryOnFailure  the first delay before a failed fetch is tried again (then doubled, up to an hour)
     * @param evictAfter      a key set unused, or not refreshed, for this long is dropped
     */
    public record Options(Duration firstFetchWait, Duration refreshInterval, Duration retryOnFailure,
                          Duration evictAfter) {
        private static final Duration MAX_RETRY = Duration.ofHours(1);

        /** istiod's values, with a one-second bound on what a push waits for new key sets. */
        public static Options defaults() {
            return new Options(Duration.ofSeconds(1), Duration.ofMinutes(20), Duration.ofMinutes(1),
                    Duration.ofDays(7));
        }
    }

    /** istiod keys its cache by issuer and jwksUri; the timeout is the latest rule's. */
    private record Key(String issuer, String jwksUri) {
    }

    /** One key set: the keys held, the fetch in flight, and what the last push was given. */
    private static final class Entry {
        final Key key;
        volatile Duration timeout;
        volatile String keys; // null until a fetch succeeded
        volatile String served; // what resolve last handed out (null: the fallback)
        volatile Instant lastUsed;
        volatile Instant lastRefreshed;
        volatile String lastFailure; // null after a success
        /** Resolves waiting for this key set's first fetch: they read its outcome, no push needed. */
        final AtomicInteger waiters = new AtomicInteger();
        Duration failureDelay = Duration.ZERO; // guarded by this
        CompletableFuture<Void> inFlight; // guarded by this

        Entry(Key key, Duration timeout, Instant now) {
            this.key = key;
            this.timeout = timeout;
            this.lastUsed = now;
            this.lastRefreshed = now;
        }
    }

    private final Options options;
    private final Clock clock;
    private final DocumentFetcher fetcher = new DocumentFetcher(Duration.ofSeconds(5));
    private final Map<Key, Entry> entries = new ConcurrentHashMap<>();
    private final List<Runnable> changeHandlers = new CopyOnWriteArrayList<>();
    private final ExecutorService fetchers = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("jwks-fetch-", 0).factory());
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("jwks-refresh").factory());

    public JwksCache(Options options) {
        this(options, Clock.systemUTC());
    }

    JwksCache(Options options, Clock clock) {
        this.options = options;
        this.clock = clock;
    }

    /** Runs {@code handler} (on a fetch thread) when a push would now inline other keys than the last one did. */
    public void addChangeHandler(Runnable handler) {
        changeHandlers.add(handler);
    }

    @Override
    public Map<JwksRef, String> resolve(Collection<JwksRef> refs) {
        Instant now = clock.instant();
        long deadline = System.nanoTime() + options.firstFetchWait().toNanos();
        Map<JwksRef, Entry> byRef = new HashMap<>();
        Map<Entry, CompletableFuture<Void>> firstFetches = new HashMap<>();
        for (JwksRef ref : refs) {
            Key key = new Key(ref.issuer(), ref.jwksUri());
            Entry e = entries.get(key);
            if (e == null) {
                Entry created = new Entry(key, ref.timeout(), now);
                e = Objects.requireNonNullElse(entries.putIfAbsent(key, created), created);
                if (e == created) {
                    created.waiters.incrementAndGet();
                    CompletableFuture<Void> f = startFetch(e);
                    firstFetches.put(created, f == null ? CompletableFuture.completedFuture(null) : f);
                }
            }
            e.lastUsed = now;
            e.timeout = ref.timeout();
            byRef.put(ref, e);
        }
        for (CompletableFuture<Void> f : firstFetches.values()) {
            try {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // not held yet: this push gets the fallback; the fetch goes on and pushes when done
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // a fetch that ends from here on finds no waiter and pushes if its keys are not those read below
        firstFetches.keySet().forEach(e -> e.waiters.decrementAndGet());
        Map<JwksRef, String> out = new HashMap<>();
        byRef.forEach((ref, e) -> {
            String keys = e.keys;
            e.served = keys;
            if (keys != null) {
                out.put(ref, keys);
            }
        });
        return out;
    }

    /** Starts a fetch of {@code e} unless one is running; returns the running one (null once closed). */
    private CompletableFuture<Void> startFetch(Entry e) {
        synchronized (e) {
            if (e.inFlight != null) {
                return e.inFlight;
            }
            CompletableFuture<Void> started;
            try {
                started = CompletableFuture.runAsync(() -> fetch(e), fetchers);
            } catch (RejectedExecutionException closed) {
                return null;
            }
            e.inFlight = started;
            started.whenComplete((v, t) -> scheduleNext(e));
            return started;
        }
    }

    private void fetch(Entry e) {
        String keys;
        try {
            URI uri;
            if (e.key.jwksUri().isEmpty()) {
                KeyServerAddresses.check(URI.create(e.key.issuer()));
                uri = OidcDiscovery.jwksUri(fetcher, e.key.issuer(), e.timeout);
            } else {
                uri = URI.create(e.key.jwksUri());
            }
            KeyServerAddresses.check(uri);
            keys = fetcher.fetch(uri, e.timeout);
            checkKeySet(keys);
            FETCH_SUCCESS.increment();
        } catch (IOException | RuntimeException ex) {
            FETCH_FAIL.increment();
            String reason = ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage();
            if (!reason.equals(e.lastFailure)) {
                LOG.log(Level.WARNING, "RequestAuthentication issuer " + e.key.issuer() + ": key set from "
                        + (e.key.jwksUri().isEmpty() ? "OIDC discovery" : e.key.jwksUri()) + " unavailable: " + reason
                        + (e.keys == null ? "; tokens of this issuer are rejected until it is fetched"
                        : "; the keys fetched before stay in use"));
            }
            e.lastFailure = reason;
            return;
        }
        e.lastFailure = null;
        e.lastRefreshed = clock.instant();
        e.keys = keys;
        if (e.waiters.get() == 0 && !keys.equals(e.served)) {
            changeHandlers.forEach(JwksCache::runIsolated);
        }
    }

    /**
     * istiod's validateJWKSFormat: a JSON object with a "keys" array, so that whatever answers
     * at a jwksUri is never inlined into proxy config unless it is a key set.
     */
    static void checkKeySet(String body) throws IOException {
        try {
            JsonElement doc = JsonParser.parseString(body);
            if (!doc.isJsonObject() || !doc.getAsJsonObject().has("keys")
                    || !doc.getAsJsonObject().get("keys").isJsonArray()) {
                throw new IOException("not a key set: no \"keys\" array");
            }
        } catch (JsonParseException e) {
            throw new IOException("not a key set: not valid JSON");
        }
    }

    private void scheduleNext(Entry e) {
        Duration delay;
        synchronized (e) {
            e.inFlight = null;
            if (e.lastFailure == null) {
                e.failureDelay = Duration.ZERO;
                delay = options.refreshInterval();
            } else {
                Duration doubled = e.failureDelay.multipliedBy(2);
                e.failureDelay = e.failureDelay.isZero() ? options.retryOnFailure()
                        : doubled.compareTo(Options.MAX_RETRY) > 0 ? Options.MAX_RETRY : doubled;
                delay = e.failureDelay;
            }
        }
        try {
            scheduler.schedule(() -> refresh(e), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // closing: nothing more to refresh
        }
    }

    private void refresh(Entry e) {
        Instant now = clock.instant();
        if (now.isAfter(e.lastUsed.plus(options.evictAfter())) || now.isAfter(e.lastRefreshed.plus(options.evictAfter()))) {
            entries.remove(e.key, e);
            return;
        }
        startFetch(e);
    }

    private static void runIsolated(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException ex) {
            LOG.log(Level.ERROR, "key set change handler failed", ex);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        fetchers.shutdownNow();
        fetcher.close();
    }
}
