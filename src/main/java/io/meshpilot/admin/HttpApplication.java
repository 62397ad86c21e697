package io.meshpilot.admin;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Application;
import java.util.Set;

/** The admin surface on the http listener (istiod's 8080): readiness, admin API, debug. */
@ApplicationScoped
public class HttpApplication extends Application {
    @Override
    public Set<Class<?>> getClasses() {
        return Set.of(ReadyResource.class, ServerResource.class, DebugResource.class, ConfigResource.class,
                ServiceResource.class, ProxyResource.class, CaResource.class,
                DebugModelResource.class, ProfilingResource.class, PrettyJsonFilter.class, ClientGoneInterceptor.class);
    }
}
