package io.meshpilot.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * Readiness probes: {@code /ready} and MP Health {@code /health/ready} answer ready only when
 * every probe passes. Components register probes (config synced,
 * registries synced, started, not shutting down).
 */
public class Readiness {
    private final Map<String, BooleanSupplier> probes = new ConcurrentHashMap<>();

    public void register(String name, BooleanSupplier probe) {
        probes.put(name, probe);
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
        out.sort(null);
        return out;
    }

    public boolean ready() {
        return failing().isEmpty();
    }

    public List<String> probeNames() {
        return probes.keySet().stream().sorted().toList();
    }
}
