package io.meshpilot.registry;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Service;
import io.meshpilot.model.ServiceDiscovery;
import io.meshpilot.model.ServiceInstance;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a registry that keeps one service and one endpoint list per hostname answers readers:
 * the Kubernetes and memory registries share it, so both list, find and select instances the
 * same way. It reads the maps its registry keeps writing (concurrent maps), never a copy, and
 * cannot change them.
 */
public final class ServicesByHostname implements ServiceDiscovery {
    private final Map<String, Service> services;
    private final Map<String, List<IstioEndpoint>> endpoints;

    /**
     * @param services  service by hostname
     * @param endpoints endpoints by the hostname of their service, as published to readers
     */
    public ServicesByHostname(Map<String, Service> services, Map<String, List<IstioEndpoint>> endpoints) {
        this.services = services;
        this.endpoints = endpoints;
    }

    @Override
    public List<Service> services() {
        return services.values().stream().sorted(Service.BY_HOST).toList();
    }

    @Override
    public Optional<Service> service(String hostname) {
        return Optional.ofNullable(services.get(hostname));
    }

    @Override
    public List<ServiceInstance> instances(Service service, int port, Map<String, String> labels) {
        return ServiceInstance.select(service, port, labels, endpoints.getOrDefault(service.hostname(), List.of()));
    }

    /**
     * A registry that answers readers from its {@link ServicesByHostname}: it writes the maps,
     * these defaults read them.
     */
    public interface Registry extends ServiceRegistry {
        /** The read side of this registry's services and endpoints. */
        ServicesByHostname byHostname();

        @Override
        default List<Service> services() {
            return byHostname().services();
        }

        @Override
        default Optional<Service> service(String hostname) {
            return byHostname().service(hostname);
        }

        @Override
        default List<ServiceInstance> instances(Service service, int port, Map<String, String> labels) {
            return byHostname().instances(service, port, labels);
        }
    }
}
