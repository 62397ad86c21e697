package io.meshpilot.xds;

import io.meshpilot.model.GatewayNames;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * istiod's networkGatewayNameCache (pilot/pkg/model/network.go): gateway hostnames resolved by
 * the control plane. A name is looked up the first time a push asks for it; the names the
 * latest push asked for are looked up again every {@link #REFRESH} (istiod follows the DNS
 * record's TTL, which the JDK's resolver does not expose; it caches answers for 30 s itself),
 * and when any name's addresses changed a full push follows ({@code onChange}). Names no push
 * asks for any more are forgotten, so the cache holds at most the gateway names of the config.
 * A lookup that fails keeps the name's last addresses (the gateway keeps being served); a name
 * never resolved has none, and its gateways are left out.
 */
final class GatewayNameCache implements GatewayNames, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GatewayNameCache.class.getName());
    static final Duration REFRESH = Duration.ofSeconds(30);

    /** Looks a name up: its IP addresses, or UnknownHostException. */
    @FunctionalInterface
    interface Resolver {
        List<String> lookup(String hostname) throws UnknownHostException;

        /** The JDK's resolver (A and AAAA records, /etc/hosts). */
        Resolver SYSTEM = hostname -> {
            List<String> out = new ArrayList<>();
            for (InetAddress a : InetAddress.getAllByName(hostname)) {
                out.add(a.getHostAddress());
            }
            return out;
        };
    }

    private final Resolver resolver;
    private final Runnable onChange;
    private final Map<String, List<String>> addresses = new ConcurrentHashMap<>();
    private volatile Set<String> watched = Set.of();
    private final ScheduledExecutorService refresher;

    GatewayNameCache(Resolver resolver, Duration refresh, Runnable onChange) {
        this.resolver = resolver;
        this.onChange = onChange;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gateway-names");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refresh, refresh.toMillis(), refresh.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public Map<String, List<String>> resolve(Set<String> hostnames) {
        watched = Set.copyOf(hostnames);
        addresses.keySet().retainAll(watched);
        Map<String, List<String>> out = new HashMap<>();
        for (String name : watched) {
            out.put(name, addresses.computeIfAbsent(name, n -> {
                List<String> found = lookup(n, List.of(), true);
                return found == null ? List.of() : found;
            }));
        }
        return out;
    }

    /** Looks every watched name up again; one push when any changed. */
    void refresh() {
        boolean changed = false;
        for (String name : watched) {
            List<String> before = addresses.getOrDefault(name, List.of());
            List<String> now = lookup(name, before, false);
            if (now != null && !now.equals(before) && watched.contains(name)) {
                addresses.put(name, now);
                LOG.log(Level.INFO, "gateway hostname " + name + " now resolves to " + now);
                changed = true;
            }
        }
        if (changed) {
            onChange.run();
        }
    }

    /**
     * The name's sorted addresses; null when the lookup fails, logged the first time and when
     * it had addresses (not again every refresh of a name that never resolves).
     */
    private List<String> lookup(String name, List<String> before, boolean first) {
        try {
            return resolver.lookup(name).stream().sorted().distinct().toList();
        } catch (UnknownHostException | RuntimeException e) {
            if (!first && before.isEmpty()) {
                return null;
            }
            LOG.log(Level.WARNING, "gateway hostname " + name + " not resolved (" + e + "); "
                    + (before.isEmpty() ? "its gateways are left out" : "its last addresses " + before + " stay"));
            return null;
        }
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
