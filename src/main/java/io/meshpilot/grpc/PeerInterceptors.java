package io.meshpilot.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.helidon.webserver.grpc.GrpcConnectionContext;
import io.helidon.webserver.grpc.ServerContextKeys;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Puts a {@link CallPeer} into the gRPC context of every call, read the way each transport
 * exposes it: Helidon through its connection context, Netty through the call attributes. Helidon
 * calls also carry their connection's write lock ({@link TransportConnection}).
 */
final class PeerInterceptors {
    private PeerInterceptors() {
    }

    /** For calls served by Helidon's gRPC server on {@code listener}. */
    static ServerInterceptor helidon(String listener) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                GrpcConnectionContext conn = ServerContextKeys.CONNECTION_CONTEXT.get();
                if (conn == null) {
                    CallPeer peer = new CallPeer(listener, null, List.of(), false);
                    return Contexts.interceptCall(Context.current().withValues(CallPeer.KEY, peer,
                            CallPeer.HEADERS, headers), call, headers, next);
                }
                List<X509Certificate> certs = x509(conn.remotePeer().tlsCertificates().orElse(new Certificate[0]));
                SocketAddress remote = conn.remotePeer().address();
                CallPeer peer = new CallPeer(listener, remote, certs, conn.isSecure());
                TransportConnection transport = HelidonConnections.started(remote);
                Context context = Context.current().withValues(CallPeer.KEY, peer, TransportConnection.KEY, transport,
                        CallPeer.HEADERS, headers);
                return CallEnd.startCall(call, headers, new ServerCallHandler<Q, R>() {
                    @Override
                    public ServerCall.Listener<Q> startCall(ServerCall<Q, R> c, Metadata h) {
                        return Contexts.interceptCall(context, c, h, next);
                    }
                }, () -> HelidonConnections.ended(remote));
            }
        };
    }

    /** For calls served by grpc-java's Netty server on {@code listener}. */
    static ServerInterceptor netty(String listener) {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
                SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
                List<X509Certificate> certs = List.of();
                if (session != null) {
                    try {
                        certs = x509(session.getPeerCertificates());
                    } catch (SSLPeerUnverifiedException e) {
                        certs = List.of(); // client sent no certificate: allowed (client auth is optional)
                    }
                }
                CallPeer peer = new CallPeer(listener, remote, certs, session != null);
                return Contexts.interceptCall(Context.current().withValues(CallPeer.KEY, peer, CallPeer.HEADERS, headers),
                        call, headers, next);
            }
        };
    }

    private static List<X509Certificate> x509(Certificate[] chain) {
        List<X509Certificate> out = new ArrayList<>();
        for (Certificate c : chain) {
            if (c instanceof X509Certificate x) {
                out.add(x);
            }
        }
        return out;
    }
}
