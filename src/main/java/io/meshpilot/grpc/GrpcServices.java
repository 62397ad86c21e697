package io.meshpilot.grpc;

import io.grpc.BindableService;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The grpc-java services MeshPilot serves, independent of the transport that hosts them
 * (xDS and the CA register here). Always holds the standard gRPC health
 * service; its overall status is SERVING between start-up and shutdown.
 */
public final class GrpcServices {
    /** Which of the two gRPC ports a service is served on. */
    public enum Ports { PLAINTEXT_AND_SECURE, SECURE_ONLY }

    /** A registered service. */
    public record Registration(ServerServiceDefinition definition, Ports ports) {
    }

    private final List<Registration> services = new CopyOnWriteArrayList<>();
    private final HealthStatusManager health = new HealthStatusManager();
    private final ActiveCalls activeCalls = new ActiveCalls();

    public GrpcServices() {
        health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
        services.add(new Registration(health.getHealthService().bindService(), Ports.PLAINTEXT_AND_SECURE));
    }

    public void register(BindableService service, Ports ports) {
        services.add(new Registration(service.bindService(), ports));
    }

    public List<Registration> services() {
        return List.copyOf(services);
    }

    public List<ServerServiceDefinition> servicesFor(boolean secure) {
        return services.stream()
                .filter(r -> secure || r.ports() == Ports.PLAINTEXT_AND_SECURE)
                .map(Registration::definition)
                .toList();
    }

    public ActiveCalls activeCalls() {
        return activeCalls;
    }

    /** Overall health: SERVING once started, NOT_SERVING when draining. */
    public void setServing(boolean serving) {
        health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES,
                serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    }
}
