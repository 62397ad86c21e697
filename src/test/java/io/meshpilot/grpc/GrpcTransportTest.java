package io.meshpilot.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Both gRPC transports serve the same services on 15010 (plaintext) and 15012 (TLS with the
 * serving certificate): the standard health service answers SERVING, and the peer seam
 * reports listener, TLS state and the client's certificate the same way. grpc-java's client
 * offers gzip: grpc-java's server answers uncompressed, as istiod does; Helidon's gzips (kept,
 * see HelidonConfig.grpcSocket: this test shows when that changes). A client that does not
 * offer gzip, as Envoy, gets large responses uncompressed, and Helidon's call then gives its
 * response buffer back (HelidonResponseBuffers).
 */
class GrpcTransportTest {

    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void healthAndPeerOnBothPorts(String transport, @TempDir Path dir) throws Exception {
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(TestServers.flags(dir, "--grpcTransport", transport),
                java.util.Map.of()), s -> PeerEchoService.register(s.components().grpcServices()))) {
            ServingCertificate cert = server.server().components().certificates().serving();
            int plain = server.ports().get("grpc");
            int secure = server.ports().get("grpc-secure");

            java.util.List<String> encodings = new java.util.concurrent.CopyOnWriteArrayList<>();
            ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", plain).usePlaintext()
                    .intercept(responseEncodings(encodings)).build();
            // TLS: trust the serving certificate's chain (it ends at the CA root), and present it
            // as the client certificate too: the server trusts what chains to its root.
            ManagedChannel tls = NettyChannelBuilder.forAddress("127.0.0.1", secure)
                    .sslContext(GrpcSslContexts.forClient()
                            .trustManager(cert.chain().toArray(java.security.cert.X509Certificate[]::new))
                            .keyManager(cert.privateKey(), cert.chain().toArray(java.security.cert.X509Certificate[]::new))
                            .build())
                    .build();
            try {
                for (ManagedChannel ch : new ManagedChannel[] {plaintext, tls}) {
                    String which = transport + (ch == tls ? " grpc-secure" : " grpc");
                    ServingStatus status;
                    try {
                        status = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                                .check(HealthCheckRequest.getDefaultInstance()).getStatus();
                    } catch (io.grpc.StatusRuntimeException e) {
                        throw new AssertionError(which + ": " + e.getStatus(), e);
                    }
                    assertEquals(ServingStatus.SERVING, status, which);
                }
                String plainPeer = ClientCalls.blockingUnaryCall(plaintext, PeerEchoService.WHO,
                        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "who");
                assertTrue(plainPeer.startsWith("grpc|secure=false|certs=0|remote=/127.0.0.1:"), plainPeer);
                String expected = transport.equals("netty") ? "identity" : "gzip";
                assertEquals(java.util.List.of(expected, expected), encodings, transport);

                java.util.List<String> envoyLikeEncodings = new java.util.concurrent.CopyOnWriteArrayList<>();
                ManagedChannel envoyLike = NettyChannelBuilder.forAddress("127.0.0.1", plain).usePlaintext()
                        .decompressorRegistry(io.grpc.DecompressorRegistry.emptyInstance().with(io.grpc.Codec.Identity.NONE, true))
                        .intercept(responseEncodings(envoyLikeEncodings)).build();
                try {
                    String large = ClientCalls.blockingUnaryCall(envoyLike, PeerEchoService.PAD,
                            io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "300000");
                    assertEquals(300_000, large.length());
                    assertEquals(java.util.List.of("identity"), envoyLikeEncodings, transport);
                } finally {
                    envoyLike.shutdownNow();
                }
                String tlsPeer = ClientCalls.blockingUnaryCall(tls, PeerEchoService.WHO,
                        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "who");
                // the client's chain as sent: istiod's leaf (empty subject, names in SANs, as istiod) and the root
                assertTrue(tlsPeer.startsWith("grpc-secure|secure=true|certs=2||remote="), tlsPeer);
                // the per-connection write locks of Helidon's calls go with the calls
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (HelidonConnections.tracked() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertEquals(0, HelidonConnections.tracked(), transport + ": connections kept after their calls ended");
            } finally {
                plaintext.shutdownNow();
                tls.shutdownNow();
            }
        }
    }

    /**
     * An empty --grpcAddr multiplexes plaintext gRPC on the http port (as istiod): with the
     * default transport, Helidon serves it there and Netty the secure port.
     */
    @org.junit.jupiter.api.Test
    void emptyGrpcAddrMultiplexesOnTheHttpPort(@TempDir Path dir) throws Exception {
        java.util.List<String> flags = new java.util.ArrayList<>(TestServers.flags(dir));
        flags.set(flags.indexOf("--grpcAddr") + 1, "");
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags, java.util.Map.of()),
                s -> PeerEchoService.register(s.components().grpcServices()))) {
            int http = server.ports().get("http");
            assertEquals(http, server.ports().get("grpc"), server.ports().toString());
            assertTrue(server.ports().get("grpc-secure") != http, server.ports().toString());
            ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", http).usePlaintext().build();
            try {
                assertEquals(ServingStatus.SERVING, HealthGrpc.newBlockingStub(plaintext)
                        .withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance()).getStatus());
                assertEquals(200, io.meshpilot.testing.Http.get(http, "/ready").status(), "HTTP still served there");
            } finally {
                plaintext.shutdownNow();
            }
        }
    }

    /** Records each response's {@code grpc-encoding} header ("identity" when there is none). */
    private static io.grpc.ClientInterceptor responseEncodings(java.util.List<String> into) {
        io.grpc.Metadata.Key<String> encoding = io.grpc.Metadata.Key.of("grpc-encoding", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
        return new io.grpc.ClientInterceptor() {
            @Override
            public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(io.grpc.MethodDescriptor<Q, R> method,
                                                                 io.grpc.CallOptions options, io.grpc.Channel next) {
                return new io.grpc.ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, io.grpc.Metadata headers) {
                        super.start(new io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(io.grpc.Metadata responseHeaders) {
                                String e = responseHeaders.get(encoding);
                                into.add(e == null ? "identity" : e);
                                super.onHeaders(responseHeaders);
                            }
                        }, headers);
                    }
                };
            }
        };
    }
}
