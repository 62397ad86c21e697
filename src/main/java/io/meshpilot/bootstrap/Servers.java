package io.meshpilot.bootstrap;

import io.helidon.microprofile.server.ServerCdiExtension;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.features.Keepalive;
import io.meshpilot.features.ListenAddress;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.grpc.GrpcTransport;
import io.meshpilot.grpc.HelidonGrpcTransport;
import io.meshpilot.grpc.NettyGrpcTransport;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.security.ServingTls;
import io.meshpilot.webhook.WebhookRoutes;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Component 8: the listeners. grpc-java's Netty servers (the default gRPC transport) are
 * bound by this class; the HTTP listeners, and gRPC when Helidon serves it, are Helidon MP's
 * sockets, set up by {@link HelidonHost} from {@link #prepareHelidon} just before Helidon
 * binds. Records the port every listener really got (":0" means ephemeral).
 */
final class Servers {
    private static final System.Logger LOG = System.getLogger(Servers.class.getName());

    private final Listeners listeners;
    private final GrpcTransportKind transport;
    private final GrpcServices grpcServices;
    private final NettyGrpcTransport netty;
    private final WebhookRoutes webhooks;
    private volatile HelidonGrpcTransport helidonGrpc;
    private volatile ServerCdiExtension helidon;

    Servers(Listeners listeners, GrpcTransportKind transport, Keepalive keepalive,
            GrpcServices grpcServices, ServingTls tls, ServerTlsOptions tlsOptions, WebhookRoutes webhooks) {
        this.listeners = listeners;
        this.webhooks = webhooks;
        this.transport = transport;
        this.grpcServices = grpcServices;
        this.netty = transport == GrpcTransportKind.NETTY ? new NettyGrpcTransport(grpcServices, listeners, keepalive,
                tls.keyManager(), tls.trustManager(), tlsOptions)
                : null;
    }

    /**
     * Names the listener whose fixed port is taken before anything binds (Helidon reports a
     * failed bind only as port -1 on every socket), then binds the Netty gRPC servers.
     *
     * @param withHelidon whether Helidon's listeners will be bound too (not by a gRPC-only server)
     */
    void bindGrpc(boolean withHelidon) {
        for (var e : listeners.byName().entrySet()) {
            ListenAddress a = e.getValue();
            boolean ours = e.getKey().equals(ListenerNames.GRPC) || e.getKey().equals(ListenerNames.GRPC_SECURE);
            if (a == null || a.port() == 0 || (!withHelidon && !ours)) {
                continue;
            }
            try (var probe = new ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new InetSocketAddress(a.host(), a.port()));
            } catch (IOException ex) {
                throw new ComponentStartException(Component.SERVERS, "cannot bind the "
                        + ListenerNames.display(e.getKey()) + " listener on " + a + " (port " + a.port() + "): "
                        + ex.getMessage(), ex);
            }
        }
        if (netty != null) {
            try {
                netty.prepare();
            } catch (RuntimeException e) {
                throw new ComponentStartException(Component.SERVERS, StartupRecorder.oneLine(e), e);
            }
        }
    }

    /**
     * Inside Helidon's start, just before it binds: keeps the admin API off the gRPC and
     * webhook sockets, puts the admission webhooks on the webhook socket, and hands Helidon
     * the gRPC services it serves.
     */
    void prepareHelidon(ServerCdiExtension server) {
        helidon = server;
        // Helidon copies the default HTTP routing (our JAX-RS apps) onto every named socket
        // that has none of its own; the gRPC and webhook sockets must not serve the admin API.
        if (transport == GrpcTransportKind.HELIDON && listeners.grpc() != null) {
            server.serverNamedRoutingBuilder(ListenerNames.GRPC);
        }
        if (transport == GrpcTransportKind.HELIDON && listeners.secureGrpc() != null) {
            server.serverNamedRoutingBuilder(ListenerNames.GRPC_SECURE);
        }
        // the body limit on every HTTP listener, for HTTP/2 too (Helidon's own covers HTTP/1)
        server.serverRoutingBuilder().addFilter(new RequestBodyLimit(HttpLimits.MAX_REQUEST_BODY));
        if (listeners.monitoring() != null) {
            server.serverNamedRoutingBuilder(ListenerNames.MONITORING)
                    .addFilter(new RequestBodyLimit(HttpLimits.MAX_REQUEST_BODY));
        }
        if (listeners.https() != null) {
            server.serverNamedRoutingBuilder(ListenerNames.WEBHOOK).addFilter(new RequestBodyLimit(HttpLimits.MAX_REQUEST_BODY));
        }
        // the webhooks on their socket, or on http's when --httpsAddr is empty (as istiod)
        webhooks.register(listeners.https() != null ? server.serverNamedRoutingBuilder(ListenerNames.WEBHOOK)
                : server.serverRoutingBuilder());
        if (transport == GrpcTransportKind.HELIDON || listeners.grpc() == null) {
            if (listeners.grpc() == null) {
                LOG.log(System.Logger.Level.INFO, "--grpcAddr is empty: plaintext gRPC is multiplexed on the http "
                        + "listener and served by Helidon there");
            }
            helidonGrpc = new HelidonGrpcTransport(server, grpcServices, listeners, transport == GrpcTransportKind.HELIDON);
            try {
                helidonGrpc.prepare();
            } catch (RuntimeException e) {
                throw new ComponentStartException(Component.SERVERS, StartupRecorder.oneLine(e), e);
            }
        }
    }

    /** The port each listener bound; Helidon's must have bound when it hosts this server. */
    Map<String, Integer> boundPorts() {
        Map<String, Integer> p = new LinkedHashMap<>();
        ServerCdiExtension h = helidon;
        if (h != null) {
            // Helidon does not fail when a socket cannot bind: its port reads -1.
            for (var e : listeners.byName().entrySet()) {
                boolean helidonSocket = transport == GrpcTransportKind.HELIDON
                        || !(e.getKey().equals(ListenerNames.GRPC) || e.getKey().equals(ListenerNames.GRPC_SECURE));
                if (e.getValue() != null && helidonSocket) {
                    int bound = e.getKey().equals(ListenerNames.HTTP) ? h.port() : h.port(e.getKey());
                    if (bound < 0) {
                        throw new ComponentStartException(Component.SERVERS, "a listener could not bind (taken while "
                                + "starting?); asked for " + asked(), null);
                    }
                }
            }
            p.put(ListenerNames.display(ListenerNames.HTTP), h.port());
        }
        if (netty != null) {
            p.putAll(netty.boundPorts());
        }
        if (helidonGrpc != null) {
            p.putAll(helidonGrpc.boundPorts());
        }
        if (h != null) {
            p.put(ListenerNames.MONITORING, listeners.monitoring() == null ? h.port() : h.port(ListenerNames.MONITORING));
            p.put(ListenerNames.WEBHOOK, listeners.https() == null ? h.port() : h.port(ListenerNames.WEBHOOK));
        }
        return p;
    }

    /** Where each listener's content is served when its flag was empty (istiod merges it into http). */
    Map<String, String> addresses() {
        return listeners.byName().entrySet().stream().collect(Collectors.toMap(
                e -> ListenerNames.display(e.getKey()),
                e -> e.getValue() == null ? "(merged into http)" : e.getValue().toString(),
                (a, b) -> a, LinkedHashMap::new));
    }

    private List<String> asked() {
        return listeners.byName().entrySet().stream().filter(x -> x.getValue() != null)
                .map(x -> ListenerNames.display(x.getKey()) + "=" + x.getValue()).toList();
    }

    /** Stops the Netty gRPC servers (Helidon's sockets close with its container). */
    void stopGrpc() {
        if (netty != null) {
            netty.stop();
        }
    }
}
