package io.meshpilot.registry.memory;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Service;
import io.meshpilot.model.ShardKey;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.ServiceEvent;
import io.meshpilot.registry.ServicesByHostname;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A registry whose services and endpoints are set directly (istiod's memory registry), for
 * tests, benchmarks and the "Mock" registry. Reports changes like a real registry.
 */
public final class MemoryRegistry implements ServicesByHostname.Registry {
    private final String provider;
    private final String cluster;
    private final ShardKey shard;
    private final RegistryUpdates updates;
    private final Map<String, Service> services = new ConcurrentHashMap<>();
    private final Map<String, List<IstioEndpoint>> endpoints = new ConcurrentHashMap<>();
    private final ServicesByHostname byHostname = new ServicesByHostname(services, endpoints);
    private final List<Consumer<ServiceEvent>> handlers = new CopyOnWriteArrayList<>();

    public MemoryRegistry(String provider, String cluster, RegistryUpdates updates) {
        this.provider = provider;
        this.cluster = cluster;
        this.shard = new ShardKey(cluster, provider);
        this.updates = updates;
    }

    public void addService(Service s) {
        Service old = services.put(s.hostname(), s);
        updates.svcUpdate(shard, s.hostname(), s.namespace(), false);
        ServiceEvent e = new ServiceEvent(old == null ? ServiceEvent.Type.ADD : ServiceEvent.Type.UPDATE, s);
        handlers.forEach(h -> h.accept(e));
    }

    public void removeService(String hostname) {
        Service old = services.remove(hostname);
        if (old != null) {
            endpoints.remove(hostname);
            updates.svcUpdate(shard, hostname, old.namespace(), true);
            handlers.forEach(h -> h.accept(new ServiceEvent(ServiceEvent.Type.DELETE, old)));
        }
    }

    /** Replaces a service's endpoints (an EDS update). */
    public void setEndpoints(String hostname, List<IstioEndpoint> eps) {
        Service s = services.get(hostname);
        if (s == null) {
            throw new IllegalArgumentException("no service " + hostname);
        }
        endpoints.put(hostname, List.copyOf(eps));
        updates.edsUpdate(shard, hostname, s.namespace(), eps);
    }

    @Override
    public String provider() {
        return provider;
    }

    @Override
    public String cluster() {
        return cluster;
    }

    @Override
    public ServicesByHostname byHostname() {
        return byHostname;
    }

    @Override
    public void appendServiceHandler(Consumer<ServiceEvent> handler) {
        handlers.add(handler);
    }

    @Override
    public boolean hasSynced() {
        return true;
    }

    @Override
    public CompletableFuture<Void> synced() {
        return CompletableFuture.completedFuture(null);
    }
}
