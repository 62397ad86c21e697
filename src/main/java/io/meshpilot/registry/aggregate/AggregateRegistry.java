package io.meshpilot.registry.aggregate;

import io.meshpilot.registry.ServiceEvent;
import io.meshpilot.registry.ServiceRegistry;
import io.meshpilot.model.ServiceDiscovery;

import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.Service;
import io.meshpilot.model.ServiceInstance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * All service registries as one (istiod's aggregate controller, Environment.ServiceDiscovery).
 * Registries are ordered and may be added and removed at run time. A hostname known to
 * several registries resolves deterministically: the first registry's service wins, and when
 * the others are other clusters their VIPs are merged into it (per cluster).
 */
public final class AggregateRegistry implements ServiceDiscovery {
    private final List<ServiceRegistry> registries = new CopyOnWriteArrayList<>();
    private final List<Consumer<ServiceEvent>> handlers = new CopyOnWriteArrayList<>();
    /** Registries that stop holding back {@link #hasSynced} at a deadline (System.nanoTime()). */
    private final Map<ServiceRegistry, Long> syncDeadlines = new ConcurrentHashMap<>();

    public void addRegistry(ServiceRegistry r) {
        handlers.forEach(r::appendServiceHandler);
        registries.add(r);
    }

    /**
     * A registry that counts as synced once {@code syncTimeout} has passed even if it has not
     * (istiod's PILOT_REMOTE_CLUSTER_TIMEOUT for remote clusters: an unreachable cluster must
     * not keep the server unready). Zero: no deadline.
     */
    public void addRegistry(ServiceRegistry r, Duration syncTimeout) {
        if (!syncTimeout.isZero()) {
            syncDeadlines.put(r, System.nanoTime() + syncTimeout.toNanos());
        }
        addRegistry(r);
    }

    public void removeRegistry(ServiceRegistry r) {
        registries.remove(r);
        syncDeadlines.remove(r);
    }

    public List<ServiceRegistry> registries() {
        return List.copyOf(registries);
    }

    /** Handlers of every registry, present and future. */
    public void appendServiceHandler(Consumer<ServiceEvent> handler) {
        handlers.add(handler);
        registries.forEach(r -> r.appendServiceHandler(handler));
    }

    @Override
    public List<Service> services() {
        return listing().services();
    }

    @Override
    public Listing listing() {
        Map<String, Service> byHost = new LinkedHashMap<>();
        Map<String, ServiceRegistry> owner = new HashMap<>();
        List<Service> shadowed = new ArrayList<>(0);
        for (ServiceRegistry r : registries) {
            for (Service s : r.services()) {
                if (merge(byHost, owner, r, s)) {
                    shadowed.add(s);
                }
            }
        }
        List<Service> out = new ArrayList<>(byHost.values());
        out.sort(Service.BY_HOST);
        return new Listing(out, shadowed);
    }

    @Override
    public Optional<Service> service(String hostname) {
        Map<String, Service> byHost = new LinkedHashMap<>();
        Map<String, ServiceRegistry> owner = new HashMap<>();
        for (ServiceRegistry r : registries) {
            r.service(hostname).ifPresent(s -> merge(byHost, owner, r, s));
        }
        return Optional.ofNullable(byHost.get(hostname));
    }

    /**
     * First registry wins; a later registry of another cluster contributes its VIPs.
     * Returns true when {@code s} is shadowed by an earlier service of its host in the same cluster.
     */
    private static boolean merge(Map<String, Service> byHost, Map<String, ServiceRegistry> owner, ServiceRegistry r,
                                 Service s) {
        Service first = byHost.get(s.hostname());
        if (first == null) {
            byHost.put(s.hostname(), s);
            owner.put(s.hostname(), r);
            return false;
        }
        if (!owner.get(s.hostname()).cluster().equals(r.cluster())) {
            if (!s.clusterVips().isEmpty()) {
                Map<String, List<String>> vips = new HashMap<>(first.clusterVips());
                s.clusterVips().forEach(vips::putIfAbsent);
                byHost.put(s.hostname(), first.withClusterVips(vips));
            }
            return false;
        }
        return true;
    }

    @Override
    public List<ServiceInstance> instances(Service service, int port, Map<String, String> labels) {
        List<ServiceInstance> out = new ArrayList<>();
        for (ServiceRegistry r : registries) {
            if (r.service(service.hostname()).isPresent()) {
                out.addAll(r.instances(service, port, labels));
            }
        }
        return out;
    }

    /** Every registry's gateways (remote clusters' included). */
    @Override
    public List<NetworkGateway> networkGateways() {
        List<NetworkGateway> out = new ArrayList<>();
        registries.forEach(r -> out.addAll(r.networkGateways()));
        return out;
    }

    /** The first registry's labels that knows the namespace (the config cluster's come first). */
    @Override
    public Map<String, String> namespaceLabels(String namespace) {
        for (ServiceRegistry r : registries) {
            Map<String, String> labels = r.namespaceLabels(namespace);
            if (!labels.isEmpty()) {
                return labels;
            }
        }
        return Map.of();
    }

    public boolean hasSynced() {
        return registries.stream().allMatch(r -> r.hasSynced() || pastDeadline(r));
    }

    /**
     * Completes once every registry there is now has synced or passed its sync deadline (as
     * {@link #hasSynced}), woken by their signals.
     */
    public CompletableFuture<Void> synced() {
        return CompletableFuture.allOf(registries.stream().map(this::syncedOrPastDeadline)
                .toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> syncedOrPastDeadline(ServiceRegistry r) {
        Long deadline = syncDeadlines.get(r);
        if (deadline == null) {
            return r.synced();
        }
        long left = Math.max(0, deadline - System.nanoTime());
        // a copy: the registry's own signal stays unsynced past the deadline
        return r.synced().copy().completeOnTimeout(null, left, TimeUnit.NANOSECONDS);
    }

    private boolean pastDeadline(ServiceRegistry r) {
        Long deadline = syncDeadlines.get(r);
        return deadline != null && System.nanoTime() - deadline >= 0;
    }
}
