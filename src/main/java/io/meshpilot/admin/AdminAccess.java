package io.meshpilot.admin;

import com.google.gson.JsonObject;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.microprofile.server.ServerCdiExtension;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.lifecycle.HelidonPhase;
import io.meshpilot.model.Environment;
import io.meshpilot.security.Authenticator;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.DebugAuthorizer;
import io.meshpilot.xds.DiscoveryServer;
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
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Who may call the admin surface, as istiod's allowAuthenticatedOrLocalhost: {@code /debug/*}
 * and {@code /api/*} answer loopback callers freely; any other caller must authenticate with
 * the CA's authenticators ({@code Authorization: Bearer <token>} through JWT_RULE or, in
 * Kubernetes mode, a TokenReview; the client-certificate one too, though the admin listeners
 * are plaintext as istiod's 8080 and 15014) and is then authorized by {@link DebugAuthorizer}. Unauthenticated: 401; not allowed: 403;
 * a workload namespace asking about another namespace's proxy: 404, as istiod (it cannot tell
 * that proxy from one connected elsewhere). Probes, metrics, version and the OpenAPI document
 * stay open (kubelet and Prometheus call from outside). Installed as a Helidon filter on the
 * http and monitoring sockets, ahead of every JAX-RS resource.
 */
@ApplicationScoped
public class AdminAccess {
    private static final System.Logger LOG = System.getLogger(AdminAccess.class.getName());
    /** istiod's default system namespace, when the mesh config names no root namespace. */
    private static final String ISTIO_SYSTEM = "istio-system";

    @Inject
    Listeners listeners;

    @Inject
    Authenticators authenticators;

    @Inject
    PilotFeatures features;

    @Inject
    Environment environment;

    @Inject
    DiscoveryServer xds;

    private final RefusalLog refusals = new RefusalLog();

    void install(@Observes @Priority(HelidonPhase.BEFORE_BIND) @Initialized(ApplicationScoped.class) Object event,
                 BeanManager beanManager) {
        ServerCdiExtension server = beanManager.getExtension(ServerCdiExtension.class);
        boolean separateMonitoring = listeners.monitoring() != null;
        DebugAuthorizer authorizer = new DebugAuthorizer(features.debugAuth());
        server.serverRoutingBuilder().addFilter(new AccessFilter(separateMonitoring ? "/metrics" : null, authorizer));
        if (separateMonitoring) {
            server.serverNamedRoutingBuilder(ListenerNames.MONITORING)
                    .addFilter(new AccessFilter("/health", authorizer));
            server.serverNamedRoutingBuilder(ListenerNames.MONITORING).addFilter(CounterTypes.forIstioCounters());
        } else {
            server.serverRoutingBuilder().addFilter(CounterTypes.forIstioCounters());
        }
    }

    /** Paths that need an authenticated or local caller. */
    static boolean isProtected(String path) {
        // the /debug index names the pages only; istiod serves it without its auth wrapper
        return path.startsWith("/debug/") || path.startsWith("/api/");
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

    private String systemNamespace() {
        String root = environment.mesh().getRootNamespace();
        return root.isEmpty() ? ISTIO_SYSTEM : root;
    }

    /** The HTTP caller as the authenticators see a gRPC one: its address and verified TLS chain. */
    private static CallPeer peerOf(RoutingRequest req) {
        List<X509Certificate> chain = new ArrayList<>();
        req.remotePeer().tlsCertificates().ifPresent(certs -> {
            for (Certificate c : certs) {
                if (c instanceof X509Certificate x) {
                    chain.add(x);
                }
            }
        });
        return new CallPeer(CallPeer.HTTP, req.remotePeer().address(), chain, req.isSecure());
    }

    /**
     * Helidon serves its observe endpoints (/metrics, /health) on every listener that has one;
     * istiod keeps metrics on 15014 and probes on 8080, so the other listener answers 404.
     */
    private final class AccessFilter implements Filter {
        private final String notHere;
        private final DebugAuthorizer authorizer;

        AccessFilter(String notHere, DebugAuthorizer authorizer) {
            this.notHere = notHere;
            this.authorizer = authorizer;
        }

        @Override
        public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
            String path = req.path().path();
            if (notHere != null && (path.equals(notHere) || path.startsWith(notHere + "/"))) {
                res.status(Status.NOT_FOUND_404).send();
                return;
            }
            if (!isProtected(path) || isTrusted(req.remotePeer().address())) {
                chain.proceed();
                return;
            }
            String remote = String.valueOf(req.remotePeer().address());
            Authenticator.Caller caller;
            try {
                caller = authenticators.authenticate(peerOf(req), name -> req.headers().all(HeaderNames.create(name),
                        List::of));
            } catch (Authenticator.AuthenticationException e) {
                refuse(res, Status.UNAUTHORIZED_401, "unauthenticated: only loopback callers and callers that "
                        + "authenticate (client certificate or bearer token) may call " + path + ": " + e.getMessage(),
                        hostOf(req), path + " from " + remote + ": " + e.getMessage());
                return;
            }
            if (path.startsWith("/api/") && !req.prologue().method().equals(Method.GET)
                    && !req.prologue().method().equals(Method.HEAD)) {
                // the REST writes reach the cluster with istiod's own rights: no caller identity
                // is enough for them (istiod has no such surface at all)
                refuse(res, Status.FORBIDDEN_403, "forbidden: " + req.prologue().method().text() + " " + path
                        + " is accepted from loopback callers only; authenticated remote callers may read",
                        String.join(",", caller.identities()), path + " from " + remote + " as " + caller.identities());
                return;
            }
            switch (authorizer.decide(caller.identities(), path, systemNamespace())) {
                case DebugAuthorizer.Decision.Everything everything -> chain.proceed();
                case DebugAuthorizer.Decision.Forbidden forbidden -> refuse(res, Status.FORBIDDEN_403,
                        "forbidden: " + caller.identities() + " may not call " + path + ": " + forbidden.reason(),
                        String.join(",", caller.identities()), path + " from " + remote + " as " + caller.identities());
                case DebugAuthorizer.Decision.OwnNamespace own -> {
                    String proxyId = req.query().first("proxyID").orElse("");
                    if (!proxyId.isEmpty() && xds.connectedOutside(proxyId, own.namespace())) {
                        refusals.log(String.join(",", caller.identities()), () -> "debug request refused (404): "
                                + path + " from " + remote + " as " + caller.identities() + " about " + proxyId
                                + " of another namespace");
                        // istiod answers as if the proxy were not here, in the endpoints' own text
                        res.status(Status.NOT_FOUND_404).header(HeaderValues.CONTENT_TYPE_TEXT_PLAIN)
                                .send(DebugResource.NOT_CONNECTED);
                        return;
                    }
                    chain.proceed();
                }
            }
        }

        private void refuse(RoutingResponse res, Status status, String reason, String caller, String what) {
            refusals.log(caller, () -> "debug request refused (" + status.code() + "): " + what);
            res.status(status).header(HeaderValues.CONTENT_TYPE_JSON).send(errorJson(reason));
        }
    }

    private static String hostOf(RoutingRequest req) {
        return req.remotePeer().address() instanceof InetSocketAddress isa && isa.getAddress() != null
                ? isa.getAddress().getHostAddress() : String.valueOf(req.remotePeer().address());
    }

    static String errorJson(String message) {
        JsonObject o = new JsonObject();
        o.addProperty("error", message);
        return o.toString();
    }

    /**
     * Refusals are logged once per caller (address when unauthenticated, identities when not
     * allowed), so a scraper polling without credentials does not fill the log; later ones
     * go to FINE.
     */
    static final class RefusalLog {
        private static final int MAX_CALLERS = 1024;
        private final Set<String> logged = ConcurrentHashMap.newKeySet();

        void log(String caller, Supplier<String> message) {
            if (logged.size() >= MAX_CALLERS) {
                logged.clear();
            }
            LOG.log(logged.add(caller) ? Level.WARNING : Level.DEBUG, message);
        }
    }
}
