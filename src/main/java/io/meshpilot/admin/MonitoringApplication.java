package io.meshpilot.admin;

import io.helidon.microprofile.server.RoutingName;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * The admin surface on the monitoring listener (istiod's 15014): version and debug; Helidon
 * serves /metrics there too. When --monitoringAddr is empty this falls back to the http
 * listener, as istiod merges the two muxes.
 */
@ApplicationScoped
@RoutingName(value = "monitoring", required = false)
public class MonitoringApplication extends Application {
    @Override
    public Set<Class<?>> getClasses() {
        return Set.of(VersionResource.class, DebugResource.class, DebugModelResource.class,
                ProfilingResource.class, PrettyJsonFilter.class, ClientGoneInterceptor.class);
    }
}
