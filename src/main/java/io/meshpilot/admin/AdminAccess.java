package io.meshpilot.admin;

import io.helidon.microprofile.server.ServerCdiExtension;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.http.Status;
import io.helidon.http.HeaderValues;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.meshpilot.lifecycle.HelidonPhase;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Who may call the admin surface: {@code /debug/*} and {@code /api/*} answer loopback callers
 * only, as istiod does for callers it cannot authenticate; everyone else gets 401. Probes, metrics, version and the OpenAPI document stay open
 * (kubelet and Prometheus call from outside). Installed as a Helidon filter on the http and
 * monitoring sockets, ahead of every JAX-RS resource.
 */
@ApplicationScoped
public class AdminAccess {
    private static final System.Logger LOG = System.getLogger(AdminAccess.class.getName());
    static final String DENIED_BODY = "{\"error\":\"unauthenticated: the admin API answers loopback callers only\"}";

    @Inject
    Listeners listeners;

    void install(@Observes @Priority(HelidonPhase.BEFORE_BIND) @Initialized(ApplicationScoped.class) Object event,
                 BeanManager beanManager) {
        ServerCdiExtension server = beanManager.getExtension(ServerCdiExtension.class);
        boolean separateMonitoring = listeners.monitoring() != null;
        server.serverRoutingBuilder().addFilter(new LoopbackFilter(separateMonitoring ? "/metrics" : null));
        if (separateMonitoring) {
            server.serverNamedRoutingBuilder(ListenerNames.MONITORING).addFilter(new LoopbackFilter("/health"));
            server.serverNamedRoutingBuilder(ListenerNames.MONITORING).addFilter(CounterTypes.forIstioCounters());
        } else {
            server.serverRoutingBuilder().addFilter(CounterTypes.forIstioCounters());
        }
    }

    /** Paths that need an authenticated or local caller. */
    static boolean isProtected(String path) {
        return path.equals("/debug") || path.startsWith("/debug/") || path.startsWith("/api/");
    }

    /** Loopback addresses (127.0.0.0/8, ::1, IPv4-mapped loopback) are trusted. */
    static boolean isTrusted(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress isa) || isa.getAddress() == null) {
            return false;
        }
        InetAddress a = isa.getAddress();
        if (a.isLoopbackAddress()) {
            return true;
        }
        byte[] b = a.getAddress();
        // ::ffff:127.x.x.x
        if (b.length == 16) {
            for (int i = 0; i < 10; i++) {
                if (b[i] != 0) {
                    return false;
                }
            }
            return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff && b[12] == 127;
        }
        return false;
    }

    /**
     * Helidon serves its observe endpoints (/metrics, /health) on every listener that has one;
     * istiod keeps metrics on 15014 and probes on 8080, so the other listener answers 404.
     */
    private static final class LoopbackFilter implements Filter {
        private final String notHere;

        LoopbackFilter(String notHere) {
            this.notHere = notHere;
        }

        @Override
        public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
            String path = req.path().path();
            if (notHere != null && (path.equals(notHere) || path.startsWith(notHere + "/"))) {
                res.status(Status.NOT_FOUND_404).send();
                return;
            }
            if (isProtected(path) && !isTrusted(req.remotePeer().address())) {
                LOG.log(Level.WARNING, "admin request refused path=" + path + " remote=" + req.remotePeer().address());
                res.status(Status.UNAUTHORIZED_401)
                        .header(HeaderValues.CONTENT_TYPE_JSON)
                        .send(DENIED_BODY);
                return;
            }
            chain.proceed();
        }
    }
}
