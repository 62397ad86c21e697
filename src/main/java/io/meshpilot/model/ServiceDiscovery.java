package io.meshpilot.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Read access to services and their instances (istiod's model.ServiceDiscovery). */
public interface ServiceDiscovery {
    /** All services, sorted by hostname then namespace. */
    List<Service> services();

    Optional<Service> service(String hostname);

    /** Instances of a service's port (by port number), optionally only those whose labels include {@code labels}. */
    List<ServiceInstance> instances(Service service, int port, Map<String, String> labels);
}
