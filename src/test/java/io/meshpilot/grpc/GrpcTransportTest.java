package io.meshpilot.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Codec;
import io.grpc.DecompressorRegistry;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
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
                Map.of()), s -> PeerEchoService.register(s.components().grpcServices()))) {
            ServingCertificate cert = server.server().components().certificates().serving();
            int plain = server.ports().get("grpc");
            int secure = server.ports().get("grpc-secure");

            List<String> encodings = new CopyOnWriteArrayList<>();
            ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", plain).usePlaintext()
                    .intercept(responseEncodings(encodings)).build();
            // TLS: trust the serving certificate's chain (it ends at the CA root), and present it
            // as the client certificate too: the server trusts what chains to its root.
            ManagedChannel tls = NettyChannelBuilder.forAddress("127.0.0.1", secure)
                    .sslContext(GrpcSslContexts.forClient()
                            .trustManager(cert.chain().toArray(X509Certificate[]::new))
                            .keyManager(cert.privateKey(), cert.chain().toArray(X509Certificate[]::new))
                            .build())
                    .build();
            try {
                for (ManagedChannel ch : new ManagedChannel[] {plaintext, tls}) {
                    String which = transport + (ch == tls ? " grpc-secure" : " grpc");
                    ServingStatus status;
                    try {
                        status = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                                .check(HealthCheckRequest.getDefaultInstance()).getStatus();
                    } catch (StatusRuntimeException e) {
                        throw new AssertionError(which + ": " + e.getStatus(), e);
                    }
                    assertEquals(ServingStatus.SERVING, status, which);
                }
                String plainPeer = ClientCalls.blockingUnaryCall(plaintext, PeerEchoService.WHO,
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "who");
                assertTrue(plainPeer.startsWith("grpc|secure=false|certs=0|remote=/127.0.0.1:"), plainPeer);
                String expected = transport.equals("netty") ? "identity" : "gzip";
                assertEquals(List.of(expected, expected), encodings, transport);

                List<String> envoyLikeEncodings = new CopyOnWriteArrayList<>();
                ManagedChannel envoyLike = NettyChannelBuilder.forAddress("127.0.0.1", plain).usePlaintext()
                        .decompressorRegistry(DecompressorRegistry.emptyInstance().with(Codec.Identity.NONE, true))
                        .intercept(responseEncodings(envoyLikeEncodings)).build();
                try {
                    String large = ClientCalls.blockingUnaryCall(envoyLike, PeerEchoService.PAD,
                            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "300000");
                    assertEquals(300_000, large.length());
                    assertEquals(List.of("identity"), envoyLikeEncodings, transport);
                } finally {
                    envoyLike.shutdownNow();
                }
                String tlsPeer = ClientCalls.blockingUnaryCall(tls, PeerEchoService.WHO,
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "who");
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
    @Test
    void emptyGrpcAddrMultiplexesOnTheHttpPort(@TempDir Path dir) throws Exception {
        List<String> flags = new ArrayList<>(TestServers.flags(dir));
        flags.set(flags.indexOf("--grpcAddr") + 1, "");
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags, Map.of()),
                s -> PeerEchoService.register(s.components().grpcServices()))) {
            int http = server.ports().get("http");
            assertEquals(http, server.ports().get("grpc"), server.ports().toString());
            assertTrue(server.ports().get("grpc-secure") != http, server.ports().toString());
            ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", http).usePlaintext().build();
            try {
                assertEquals(ServingStatus.SERVING, HealthGrpc.newBlockingStub(plaintext)
                        .withDeadlineAfter(10, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance()).getStatus());
                assertEquals(200, Http.get(http, "/ready").status(), "HTTP still served there");
            } finally {
                plaintext.shutdownNow();
            }
        }
    }

    /** Records each response's {@code grpc-encoding} header ("identity" when there is none). */
    private static ClientInterceptor responseEncodings(List<String> into) {
        Metadata.Key<String> encoding = Metadata.Key.of("grpc-encoding", Metadata.ASCII_STRING_MARSHALLER);
        return new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method,
                                                                 CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                            @Override
                            public void onHeaders(Metadata responseHeaders) {
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
