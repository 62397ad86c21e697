package io.meshpilot.grpc;

import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.meshpilot.bootstrap.ListenerNames;
import io.meshpilot.bootstrap.PilotArgs;
import io.helidon.microprofile.server.ServerCdiExtension;
import io.helidon.webserver.grpc.GrpcRouting;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Serves our gRPC services on Helidon sockets "grpc" (plaintext) and "grpc-secure" (TLS
 * configured on the socket). An empty --grpcAddr puts the plaintext services on the http
 * socket instead, as istiod multiplexes gRPC onto 8080.
 */
public final class HelidonGrpcTransport implements GrpcTransport {
    private final ServerCdiExtension server;
    private final GrpcServices services;
    private final PilotArgs args;
    private final HelidonResponseBuffers responseBuffers = new HelidonResponseBuffers();

    public HelidonGrpcTransport(ServerCdiExtension server, GrpcServices services, PilotArgs args) {
        this.server = server;
        this.services = services;
        this.args = args;
    }

    @Override
    public void prepare() {
        PilotArgs.Listeners l = args.listeners();
        if (l.grpc() != null) {
            server.addRouting(routing(ListenerNames.GRPC, false), ListenerNames.GRPC, true, "grpc");
        } else {
            server.addRouting(routing(ListenerNames.HTTP, false));
        }
        if (l.secureGrpc() != null) {
            server.addRouting(routing(ListenerNames.GRPC_SECURE, true), ListenerNames.GRPC_SECURE, true, "grpc-secure");
        }
    }

    private GrpcRouting.Builder routing(String listener, boolean secure) {
        GrpcRouting.Builder b = GrpcRouting.builder();
        // Helidon runs them in this order (the first is handed Helidon's own call, which the
        // buffer release needs): response buffers, call accounting, peer info.
        b.intercept(new ServerInterceptor[] {responseBuffers, services.activeCalls(), PeerInterceptors.helidon(
                ListenerNames.display(listener), args.keepalive().interval(), args.keepalive().timeout())});
        for (ServerServiceDefinition def : services.servicesFor(secure)) {
            b.service(def);
        }
        return b;
    }

    @Override
    public Map<String, Integer> boundPorts() {
        Map<String, Integer> ports = new LinkedHashMap<>();
        PilotArgs.Listeners l = args.listeners();
        ports.put(ListenerNames.GRPC, l.grpc() == null ? server.port() : server.port(ListenerNames.GRPC));
        if (l.secureGrpc() != null) {
            ports.put(ListenerNames.GRPC_SECURE, server.port(ListenerNames.GRPC_SECURE));
        }
        return ports;
    }

    @Override
    public void stop() {
        // Helidon closes its sockets when the container stops.
    }
}
