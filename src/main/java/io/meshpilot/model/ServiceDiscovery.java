package io.meshpilot.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Read access to services and their instances (istiod's model.ServiceDiscovery). */
public interface ServiceDiscovery {
    /** All services, sorted by hostname then namespace. */
    List<Service> services();

    Optional<Service> service(String hostname);

    /**
     * {@link #services()} and the services it leaves out because an earlier one has their
     * hostname in the same cluster (e.g. ServiceEntries of one host in two namespaces): their
     * clusters would be istiod's duplicate Envoy clusters.
     */
    default Listing listing() {
        return new Listing(services(), List.of());
    }

    /** The services, and the ones shadowed by an earlier service of their hostname. */
    record Listing(List<Service> services, List<Service> shadowed) {
    }

    /** Instances of a service's port (by port number), optionally only those whose labels include {@code labels}. */
    List<ServiceInstance> instances(Service service, int port, Map<String, String> labels);

    /**
     * The east-west gateways this discovery found (istiod's NetworkGatewaysWatcher): Services
     * labelled with a network, meshNetworks {@code registryServiceName}s. None by default.
     */
    default List<NetworkGateway> networkGateways() {
        return List.of();
    }

    /**
     * The labels of a namespace as this discovery knows them (Kubernetes registries: the
     * Namespace's; others know none): where {@code istio.io/use-waypoint} of a namespace's
     * services is read ({@link WaypointServices}). Empty when unknown.
     */
    default Map<String, String> namespaceLabels(String namespace) {
        return Map.of();
    }
}
