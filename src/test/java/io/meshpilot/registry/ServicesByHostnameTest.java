package io.meshpilot.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.ServiceDiscovery;
import io.meshpilot.model.ServiceInstance;
import io.meshpilot.registry.memory.MemoryRegistry;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The read side the memory and Kubernetes registries share: services sorted by hostname, one
 * found by hostname, instances of one service port whose labels include the asked ones.
 * Checked through the memory registry (the Kubernetes one is read the same way by
 * KubeServiceRegistryTest against the API server stand-in).
 */
class ServicesByHostnameTest {

    static Service service(String host) {
        return new Service(host, "default", List.of(new Port("http", 80, Protocol.HTTP), new Port("grpc", 90, Protocol.GRPC)),
                "10.0.0.1", Map.of("c1", List.of("10.0.0.1")), "", Resolution.CLIENT_SIDE_LB, false, Set.of(), Map.of(),
                "Mock", "c1", Instant.EPOCH, null);
    }

    static IstioEndpoint endpoint(String ip, String portName, Map<String, String> labels) {
        return new IstioEndpoint(ip, 8080, portName, labels, "", "", Locality.NONE, "disabled", 0, null, "", "default");
    }

    @Test
    void aRegistryAnswersReadersFromWhatItWasLastGiven() {
        MemoryRegistry registry = new MemoryRegistry("Mock", "c1", new RecordingUpdates());
        ServiceDiscovery readers = registry;
        registry.addService(service("z.example"));
        registry.addService(service("a.example"));
        registry.setEndpoints("a.example", List.of(
                endpoint("10.1.0.1", "http", Map.of("version", "v1")),
                endpoint("10.1.0.2", "http", Map.of("version", "v2")),
                endpoint("10.1.0.3", "grpc", Map.of("version", "v1"))));

        assertEquals(List.of("a.example", "z.example"), readers.services().stream().map(Service::hostname).toList());
        assertEquals(Optional.empty(), readers.service("nowhere.example"));
        Service a = readers.service("a.example").orElseThrow();
        assertEquals(List.of("10.1.0.1", "10.1.0.2"), addresses(readers.instances(a, 80, Map.of())));
        assertEquals(List.of("10.1.0.2"), addresses(readers.instances(a, 80, Map.of("version", "v2"))));
        assertEquals(List.of("10.1.0.3"), addresses(readers.instances(a, 90, Map.of("version", "v1"))));
        assertEquals(List.of(), readers.instances(a, 81, Map.of()), "a port the service does not have");
        assertEquals(List.of(), readers.instances(readers.service("z.example").orElseThrow(), 80, Map.of()),
                "a service without endpoints");

        registry.removeService("a.example");
        assertEquals(List.of("z.example"), readers.services().stream().map(Service::hostname).toList());
        assertEquals(List.of(), readers.instances(a, 80, Map.of()), "its endpoints left with it");
    }

    static List<String> addresses(List<ServiceInstance> instances) {
        return instances.stream().map(i -> i.endpoint().address()).toList();
    }
}
