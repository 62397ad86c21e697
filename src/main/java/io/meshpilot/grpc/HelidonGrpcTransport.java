package io.meshpilot.grpc;

import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.helidon.microprofile.server.ServerCdiExtension;
import io.helidon.webserver.grpc.GrpcRouting;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Serves our gRPC services on Helidon: on its sockets "grpc" (plaintext) and "grpc-secure"
 * (TLS configured on the socket) with --grpcTransport helidon, and, with either transport, on
 * the http socket when --grpcAddr is empty (istiod multiplexes gRPC onto 8080; only the server
 * that owns that socket can serve it).
 */
public final class HelidonGrpcTransport implements GrpcTransport {
    private final ServerCdiExtension server;
    private final GrpcServices services;
    private final Listeners listeners;
    private final boolean ownSockets;

    /**
     * @param ownSockets true: also the listeners that have their own address (--grpcTransport
     *                   helidon); false: only gRPC multiplexed on the http socket
     */
    public HelidonGrpcTransport(ServerCdiExtension server, GrpcServices services, Listeners listeners, boolean ownSockets) {
        this.server = server;
        this.services = services;
        this.listeners = listeners;
        this.ownSockets = ownSockets;
    }

    @Override
    public void prepare() {
        Listeners l = listeners;
        if (l.grpc() == null) {
            server.addRouting(routing(ListenerNames.HTTP, false));
        } else if (ownSockets) {
            server.addRouting(routing(ListenerNames.GRPC, false), ListenerNames.GRPC, true, "grpc");
        }
        if (l.secureGrpc() != null && ownSockets) {
            server.addRouting(routing(ListenerNames.GRPC_SECURE, true), ListenerNames.GRPC_SECURE, true, "grpc-secure");
        }
    }

    private GrpcRouting.Builder routing(String listener, boolean secure) {
        GrpcRouting.Builder b = GrpcRouting.builder();
        // Helidon runs them in this order: call accounting, then peer info
        b.intercept(new ServerInterceptor[] {services.activeCalls(), PeerInterceptors.helidon(ListenerNames.display(listener))});
        for (ServerServiceDefinition def : services.servicesFor(secure)) {
            b.service(def);
        }
        return b;
    }

    @Override
    public Map<String, Integer> boundPorts() {
        Map<String, Integer> ports = new LinkedHashMap<>();
        Listeners l = listeners;
        if (l.grpc() == null) {
            ports.put(ListenerNames.GRPC, server.port());
        } else if (ownSockets) {
            ports.put(ListenerNames.GRPC, server.port(ListenerNames.GRPC));
        }
        if (l.secureGrpc() != null && ownSockets) {
            ports.put(ListenerNames.GRPC_SECURE, server.port(ListenerNames.GRPC_SECURE));
        }
        return ports;
    }

    @Override
    public void stop() {
        // Helidon closes its sockets when the container stops.
    }
}
