package io.meshpilot.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Readiness probes: {@code /ready} and MP Health {@code /health/ready} answer ready only when
 * every probe passes. Components register probes (config synced,
 * registries synced, started, not shutting down).
 */
public class Readiness {
    private final Map<String, BooleanSupplier> probes = new ConcurrentHashMap<>();

    private final Map<String, Supplier<List<String>>> groups = new ConcurrentHashMap<>();

    public void register(String name, BooleanSupplier probe) {
        probes.put(name, probe);
    }

    /**
     * A probe over parts that come and go (informers): it fails with one name per part that is
     * not ready, {@code prefix:part}, so readiness says which.
     */
    public void registerGroup(String prefix, Supplier<List<String>> notReady) {
        groups.put(prefix, notReady);
    }

    /** Names of the probes that fail now, sorted; empty when ready. */
    public List<String> failing() {
        List<String> out = new ArrayList<>();
        probes.forEach((name, probe) -> {
            boolean ok;
            try {
                ok = probe.getAsBoolean();
            } catch (RuntimeException e) {
                ok = false;
            }
            if (!ok) {
                out.add(name);
            }
        });
        groups.forEach((prefix, notReady) -> {
            try {
                notReady.get().forEach(part -> out.add(prefix + ":" + part));
            } catch (RuntimeException e) {
                out.add(prefix);
            }
        });
        out.sort(null);
        return out;
    }

    public boolean ready() {
        return failing().isEmpty();
    }

    public List<String> probeNames() {
        return Stream.concat(probes.keySet().stream(), groups.keySet().stream()).sorted().toList();
    }
}
