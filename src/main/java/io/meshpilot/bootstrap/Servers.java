package io.meshpilot.bootstrap;

import io.helidon.microprofile.server.ServerCdiExtension;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.grpc.GrpcTransport;
import io.meshpilot.grpc.HelidonGrpcTransport;
import io.meshpilot.grpc.NettyGrpcTransport;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Component 8: the listeners. Hands the gRPC services to their transport just before Helidon
 * binds its sockets, then, once bound, records the ports every listener really got (":0"
 * means ephemeral) for the log, {@code /api/v1/server} and tests.
 */
@ApplicationScoped
public class Servers {
    @Inject
    PilotArgs args;

    @Inject
    GrpcServices grpcServices;

    @Inject
    io.meshpilot.security.IstiodCertificates certificates;

    @Inject
    StartupRecorder recorder;

    private static final System.Logger LOG = System.getLogger(Servers.class.getName());
    private volatile List<GrpcTransport> transports = List.of();
    private volatile Map<String, Integer> ports = Map.of();
    private volatile ServerCdiExtension helidon;
    private Instant startedAt;
    private long t0;

    void prepare(@Observes @Priority(StartupOrder.SERVERS_PREPARE) @Initialized(ApplicationScoped.class) Object event,
                 BeanManager beanManager) {
        startedAt = Instant.now();
        t0 = System.nanoTime();
        helidon = beanManager.getExtension(ServerCdiExtension.class);
        // Helidon copies the default HTTP routing (our JAX-RS apps) onto every named socket
        // that has none of its own; the gRPC and webhook sockets must not serve the admin API.
        PilotArgs.Listeners l = args.listeners();
        if (args.grpcTransport() == GrpcTransportKind.HELIDON && l.grpc() != null) {
            helidon.serverNamedRoutingBuilder(ListenerNames.GRPC);
        }
        if (args.grpcTransport() == GrpcTransportKind.HELIDON && l.secureGrpc() != null) {
            helidon.serverNamedRoutingBuilder(ListenerNames.GRPC_SECURE);
        }
        if (l.https() != null) {
            helidon.serverNamedRoutingBuilder(ListenerNames.WEBHOOK);
        }
        List<GrpcTransport> chosen = new ArrayList<>();
        if (args.grpcTransport() == GrpcTransportKind.NETTY) {
            chosen.add(new NettyGrpcTransport(grpcServices, args, certificates.servingTls()));
            if (l.grpc() == null) {
                LOG.log(System.Logger.Level.INFO, "--grpcAddr is empty: plaintext gRPC is multiplexed on the http "
                        + "listener and served by Helidon there (Netty serves the gRPC listeners with an address)");
                chosen.add(new HelidonGrpcTransport(helidon, grpcServices, args, false));
            }
        } else {
            chosen.add(new HelidonGrpcTransport(helidon, grpcServices, args, true));
        }
        transports = List.copyOf(chosen);
        try {
            checkPortsFree(l);
            for (GrpcTransport t : transports) {
                t.prepare();
            }
        } catch (ComponentStartException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ComponentStartException(Component.SERVERS, StartupRecorder.oneLine(e), e);
        }
    }

    void bound(@Observes @Priority(StartupOrder.SERVERS_BOUND) @Initialized(ApplicationScoped.class) Object event) {
        Map<String, Integer> p = new LinkedHashMap<>();
        PilotArgs.Listeners l = args.listeners();
        // Helidon does not fail when a socket cannot bind: its port reads -1.
        for (var e : l.byName().entrySet()) {
            boolean helidonSocket = args.grpcTransport() == GrpcTransportKind.HELIDON
                    || !(e.getKey().equals(ListenerNames.GRPC) || e.getKey().equals(ListenerNames.GRPC_SECURE));
            if (e.getValue() != null && helidonSocket) {
                int bound = e.getKey().equals(ListenerNames.HTTP) ? helidon.port() : helidon.port(e.getKey());
                if (bound < 0) {
                    throw new ComponentStartException(Component.SERVERS, "a listener could not bind (taken while "
                            + "starting?); asked for " + l.byName().entrySet().stream().filter(x -> x.getValue() != null)
                            .map(x -> ListenerNames.display(x.getKey()) + "=" + x.getValue()).toList(), null);
                }
            }
        }
        int http = helidon.port();
        p.put(ListenerNames.display(ListenerNames.HTTP), http);
        transports.forEach(t -> p.putAll(t.boundPorts()));
        p.put(ListenerNames.MONITORING, l.monitoring() == null ? http : helidon.port(ListenerNames.MONITORING));
        p.put(ListenerNames.WEBHOOK, l.https() == null ? http : helidon.port(ListenerNames.WEBHOOK));
        ports = java.util.Collections.unmodifiableMap(p);
        double ms = (System.nanoTime() - t0) / 1e6;
        recorder.completed(Component.SERVERS, startedAt, ms, p.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "))
                + " grpcTransport=" + args.grpcTransport().name().toLowerCase());
    }

    /**
     * Names the listener whose fixed port is taken before anything binds: Helidon reports a
     * failed bind only as port -1 on every socket, which cannot say which one failed.
     */
    private static void checkPortsFree(PilotArgs.Listeners listeners) {
        for (var e : listeners.byName().entrySet()) {
            ListenAddress a = e.getValue();
            if (a == null || a.port() == 0) {
                continue;
            }
            try (var probe = new java.net.ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new java.net.InetSocketAddress(a.host(), a.port()));
            } catch (java.io.IOException ex) {
                throw new ComponentStartException(Component.SERVERS, "cannot bind the "
                        + ListenerNames.display(e.getKey()) + " listener on " + a + " (port " + a.port() + "): "
                        + ex.getMessage(), ex);
            }
        }
    }

    /** Bound port per listener: http, grpc, grpc-secure, monitoring, webhook. */
    public Map<String, Integer> ports() {
        return ports;
    }

    /** Where each listener's content is served when its flag was empty (istiod merges it into http). */
    public Map<String, String> addresses() {
        return args.listeners().byName().entrySet().stream().collect(Collectors.toMap(
                e -> ListenerNames.display(e.getKey()),
                e -> e.getValue() == null ? "(merged into http)" : e.getValue().toString(),
                (a, b) -> a, LinkedHashMap::new));
    }

    /** Stops the gRPC transport (Helidon's sockets close with the container). */
    public void stopGrpc() {
        transports.forEach(GrpcTransport::stop);
    }
}
