package io.meshpilot.bootstrap;

import io.meshpilot.lifecycle.Component;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Component 8 as a start function: binds the gRPC listeners and, when the server hosts them,
 * Helidon's HTTP ones, and records the port each really got.
 */
final class ServerListeners {
    private final PilotServer server;
    private final PilotServer.Hosting hosting;
    private final List<AutoCloseable> closeables;
    private volatile Servers servers;

    ServerListeners(PilotServer server, PilotServer.Hosting hosting, List<AutoCloseable> closeables) {
        this.server = server;
        this.hosting = hosting;
        this.closeables = closeables;
    }

    StartFunction startFunction() {
        return new StartFunction(Component.SERVERS, Component.SERVERS.label(), this::bind);
    }

    private String bind() {
        Components c = server.components();
        PilotArgs args = c.args();
        servers = new Servers(args.listeners(), args.grpcTransport(), args.keepalive(), c.grpcServices(),
                c.certificates().servingTls(), args.tls(), c.webhooks());
        closeables.add(servers::stopGrpc);
        servers.bindGrpc(hosting == PilotServer.Hosting.FULL);
        if (hosting == PilotServer.Hosting.FULL) {
            closeables.add(HelidonHost.start(server, HelidonConfig.fromArgs(args, c.certificates().serving())));
        }
        c.state().bound(servers.boundPorts(), servers.addresses());
        return c.state().ports().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" ")) + " grpcTransport=" + args.grpcTransportLabel();
    }

    /** The listeners; null before {@link PilotServer#start()}. */
    Servers servers() {
        return servers;
    }
}
