package io.meshpilot.bootstrap;

import io.meshpilot.features.ListenerNames;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.xds.DebugPages;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Component 8 as a start function: binds the gRPC listeners and, when the server hosts them,
 * Helidon's HTTP ones, and records the port each really got; the xDS debug pages then answer
 * from the http listener.
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
        if (hosting == PilotServer.Hosting.FULL) {
            // istio.io/debug over xDS answers from the debug endpoints the http listener serves
            LoopbackDebugPages pages = new LoopbackDebugPages(args.listeners().http().host(),
                    c.state().ports().get(ListenerNames.display(ListenerNames.HTTP)), c.discovery());
            c.discovery().serveDebugPages(pages);
            closeables.add(() -> {
                c.discovery().serveDebugPages(DebugPages.NONE);
                pages.close();
            });
        }
        return c.state().ports().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" ")) + " grpcTransport=" + args.grpcTransportLabel();
    }

    /** The listeners; null before {@link PilotServer#start()}. */
    Servers servers() {
        return servers;
    }
}
