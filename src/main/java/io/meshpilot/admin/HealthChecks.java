package io.meshpilot.admin;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

/**
 * MP Health checks that agree with {@code /ready}: {@code /health/ready} is UP exactly when
 * every readiness probe passes; {@code /health/live} is UP while the process serves.
 */
@ApplicationScoped
public class HealthChecks {
    @Inject
    io.meshpilot.lifecycle.Readiness readiness;

    @Produces
    @Readiness
    HealthCheck ready() {
        return () -> {
            var failing = readiness.failing();
            return HealthCheckResponse.named("meshpilot-ready")
                    .status(failing.isEmpty())
                    .withData("failing", String.join(",", failing))
                    .build();
        };
    }

    @Produces
    @Liveness
    HealthCheck live() {
        return () -> HealthCheckResponse.named("meshpilot-live").up().build();
    }
}
