package io.meshpilot.registry.ambient;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The services ServiceEntries build, per hostname, and which of them the index holds (istiod's
 * selectWorkloadServices over the services sharing a hostname): in each namespace a Kubernetes
 * Service of that hostname wins, else the oldest ServiceEntry; the canonical one is the
 * Kubernetes Service if there is one, else the oldest ServiceEntry's. Used by the controller's
 * one thread only.
 */
final class ServiceEntryHosts {
    /** One ServiceEntry's service of a hostname. */
    private record Candidate(String entry, Instant created, ServiceInfo service) {
    }

    private static final Comparator<Candidate> OLDEST_FIRST = Comparator
            .comparing(Candidate::created, Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparing(Candidate::entry);

    /** hostname -> ServiceEntry {@code namespace/name} -> its service of that hostname. */
    private final Map<String, Map<String, Candidate>> byHost = new HashMap<>();
    /** ServiceEntry {@code namespace/name} -> its hostnames. */
    private final Map<String, Set<String>> hostsByEntry = new HashMap<>();

    /**
     * Records what one ServiceEntry builds now (nothing: it is gone).
     *
     * @return the hostnames whose services may have changed: the entry's before and after
     */
    Set<String> put(String entry, Instant created, List<ServiceInfo> services) {
        Set<String> touched = new HashSet<>(hostsByEntry.getOrDefault(entry, Set.of()));
        for (String host : touched) {
            byHost.computeIfPresent(host, (h, m) -> {
                m.remove(entry);
                return m.isEmpty() ? null : m;
            });
        }
        Set<String> hosts = new HashSet<>();
        for (ServiceInfo s : services) {
            String host = s.address().address().getService().getHostname();
            hosts.add(host);
            byHost.computeIfAbsent(host, h -> new HashMap<>()).put(entry, new Candidate(entry, created, s));
        }
        if (hosts.isEmpty()) {
            hostsByEntry.remove(entry);
        } else {
            hostsByEntry.put(entry, hosts);
        }
        touched.addAll(hosts);
        return touched;
    }

    boolean has(String host) {
        return byHost.containsKey(host);
    }

    /** The ServiceEntries ({@code namespace/name}) that name the hostname. */
    Set<String> entries(String host) {
        Map<String, Candidate> m = byHost.get(host);
        return m == null ? Set.of() : Set.copyOf(m.keySet());
    }

    Set<String> entries() {
        return Set.copyOf(hostsByEntry.keySet());
    }

    /**
     * The ServiceEntries' services of one hostname the index holds, by key, canonical marked.
     *
     * @param heldByService whether a Kubernetes Service holds a key {@code namespace/hostname}
     *                      (it wins its namespace and is the canonical one)
     */
    Map<String, ServiceInfo> winners(String host, Predicate<String> heldByService) {
        Map<String, Candidate> candidates = byHost.getOrDefault(host, Map.of());
        Map<String, Candidate> byNamespace = new LinkedHashMap<>();
        candidates.values().stream().sorted(OLDEST_FIRST).forEach(c -> byNamespace.putIfAbsent(c.service().namespace(), c));
        boolean serviceCanonical = false;
        List<Candidate> held = new ArrayList<>();
        for (Candidate c : byNamespace.values()) {
            if (heldByService.test(c.service().key())) {
                serviceCanonical = true;
            } else {
                held.add(c);
            }
        }
        serviceCanonical |= heldByService.test(kubernetesKey(host));
        Map<String, ServiceInfo> out = new LinkedHashMap<>();
        for (int i = 0; i < held.size(); i++) {
            ServiceInfo s = held.get(i).service();
            // held is oldest first: the first is canonical unless a Kubernetes Service is
            out.put(s.key(), i == 0 && !serviceCanonical
                    ? s.withService(s.address().address().getService().toBuilder().setCanonical(true).build()) : s);
        }
        return out;
    }

    /** The key a Kubernetes Service of this hostname ({@code name.namespace.svc...}) is held under, or "". */
    private static String kubernetesKey(String host) {
        String[] parts = host.split("\\.", 4);
        return parts.length == 4 && parts[2].equals("svc") ? parts[1] + "/" + host : "";
    }
}
