package io.meshpilot.grpc;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.meshpilot.features.ListenAddress;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Keepalive;
import io.meshpilot.features.Listeners;
import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.util.GoDuration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Serves our gRPC services on grpc-java Netty servers bound to --grpcAddr and
 * --secureGRPCAddr (each that is not empty), with istiod's server options (keepalive, connection age, stream and
 * message limits) and the same TLS material as the Helidon sockets.
 */
public final class NettyGrpcTransport implements GrpcTransport {
    /** istiod: ISTIO_GPRC_MAXSTREAMS and ISTIO_GPRC_MAXRECVMSGSIZE defaults. */
    static final int MAX_CONCURRENT_STREAMS = 100_000;
    static final int MAX_INBOUND_MESSAGE_BYTES = 4 * 1024 * 1024;

    private final GrpcServices services;
    private final Listeners listeners;
    private final Keepalive keepalive;
    /**
     * istiod's serving certificate and trust bundle as managers that security swaps in place
     * (a renewed certificate or new roots apply to the next handshake).
     */
    private final X509ExtendedKeyManager keyManager;
    private final X509ExtendedTrustManager trustManager;
    /** --tls-min-version and --tls-cipher-suites of the secure port. */
    private final ServerTlsOptions tlsOptions;
    private final Map<String, Server> servers = new LinkedHashMap<>();
    /**
     * Runs the calls' callbacks (a request, and with it the generation of a response): a
     * virtual thread each, as Helidon runs them, instead of grpc-java's default pool of
     * platform threads, which grows a thread per concurrently busy call (2,000 at once when a
     * fleet connects).
     */
    private final ExecutorService callbacks = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("grpc-call-", 0).factory());

    public NettyGrpcTransport(GrpcServices services, Listeners listeners, Keepalive keepalive,
            X509ExtendedKeyManager keyManager, X509ExtendedTrustManager trustManager, ServerTlsOptions tlsOptions) {
        this.services = services;
        this.listeners = listeners;
        this.keepalive = keepalive;
        this.keyManager = keyManager;
        this.trustManager = trustManager;
        this.tlsOptions = tlsOptions;
    }

    @Override
    public void prepare() {
        start(ListenerNames.GRPC, listeners.grpc(), false);
        start(ListenerNames.GRPC_SECURE, listeners.secureGrpc(), true);
    }

    private void start(String name, ListenAddress address, boolean secure) {
        if (address == null) {
            return; // empty flag: multiplexed on http (HelidonGrpcTransport) or, for the secure port, off
        }
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(address.host(), address.port()))
                .maxConcurrentCallsPerConnection(MAX_CONCURRENT_STREAMS)
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
                .executor(callbacks)
                .keepAliveTime(keepalive.interval().toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(keepalive.timeout().toNanos(), TimeUnit.NANOSECONDS)
                .permitKeepAliveTime(keepalive.interval().toNanos() / 2, TimeUnit.NANOSECONDS);
        if (!keepalive.maxServerConnectionAge().equals(GoDuration.INFINITE)) {
            b.maxConnectionAge(keepalive.maxServerConnectionAge().toNanos(), TimeUnit.NANOSECONDS)
                    .maxConnectionAgeGrace(10, TimeUnit.SECONDS);
        }
        if (secure) {
            try {
                // swappable managers: a renewed certificate or new roots apply to the next handshake
                SslContextBuilder tls = GrpcSslContexts.configure(SslContextBuilder.forServer(keyManager))
                        .trustManager(trustManager)
                        .clientAuth(ClientAuth.OPTIONAL)
                        .protocols(tlsOptions.protocols());
                if (!tlsOptions.ciphers().isEmpty()) {
                    // Go's names that the JDK lacks (RC4, 3DES) are left out rather than failing the port
                    tls.ciphers(tlsOptions.ciphers(), SupportedCipherSuiteFilter.INSTANCE);
                }
                SslContext ssl = tls.build();
                b.sslContext(ssl);
            } catch (IOException e) {
                throw new UncheckedIOException("TLS for " + name + ": " + e.getMessage(), e);
            }
        }
        for (ServerServiceDefinition def : services.servicesFor(secure)) {
            b.addService(ServerInterceptors.intercept(def, services.activeCalls(), PeerInterceptors.netty(name)));
        }
        Server server = b.build();
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot bind " + name + " port " + address.port() + " on " + address.host()
                    + ": " + e.getMessage(), e);
        }
        servers.put(name, server);
    }

    @Override
    public Map<String, Integer> boundPorts() {
        Map<String, Integer> ports = new LinkedHashMap<>();
        servers.forEach((name, s) -> ports.put(name, s.getPort()));
        return ports;
    }

    @Override
    public void stop() {
        servers.values().forEach(Server::shutdownNow);
        try {
            for (Server s : servers.values()) {
                s.awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            callbacks.shutdown();
        }
    }
}
