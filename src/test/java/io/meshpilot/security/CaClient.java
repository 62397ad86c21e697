package io.meshpilot.security;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import io.meshpilot.api.security.v1alpha1.IstioCertificateResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A CreateCertificate client as the Istio agent is one: TLS to 15012, a bearer token or a client certificate. */
final class CaClient {
    private CaClient() {
    }

    /** A TLS channel to the secure port trusting {@code roots}; with a client certificate when both files are given. */
    static ManagedChannel channel(int port, List<X509Certificate> roots, Path certChain, Path key) throws Exception {
        var ssl = GrpcSslContexts.forClient().trustManager(roots.toArray(X509Certificate[]::new));
        if (certChain != null) {
            ssl.keyManager(certChain.toFile(), key.toFile());
        }
        // the serving certificate names istiod's Service and localhost
        return NettyChannelBuilder.forAddress("localhost", port).sslContext(ssl.build()).build();
    }

    /** A TLS channel to the secure port trusting {@code roots}, checking the server's name against {@code authority}. */
    static ManagedChannel channel(int port, List<X509Certificate> roots, String authority) throws Exception {
        var ssl = GrpcSslContexts.forClient().trustManager(roots.toArray(X509Certificate[]::new));
        return NettyChannelBuilder.forAddress("127.0.0.1", port).overrideAuthority(authority).sslContext(ssl.build()).build();
    }

    /** A TLS channel to the secure port trusting {@code roots}, presenting {@code identity}. */
    static ManagedChannel channel(int port, List<X509Certificate> roots, ServingCertificate identity) throws Exception {
        var ssl = GrpcSslContexts.forClient().trustManager(roots.toArray(X509Certificate[]::new))
                .keyManager(identity.privateKey(), identity.chain().toArray(X509Certificate[]::new));
        return NettyChannelBuilder.forAddress("localhost", port).sslContext(ssl.build()).build();
    }

    /** The cert chain, or the failure's status. */
    static Object create(Channel channel, String bearer, IstioCertificateRequest request) {
        return create(channel, bearer, request, Duration.ofSeconds(30));
    }

    static Object create(Channel channel, String bearer, IstioCertificateRequest request, Duration deadline) {
        Channel ch = channel;
        if (bearer != null) {
            Metadata md = new Metadata();
            md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + bearer);
            ch = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
        }
        try {
            IstioCertificateResponse r = ClientCalls.blockingUnaryCall(ch, CertificateService.CREATE_CERTIFICATE,
                    CallOptions.DEFAULT.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS), request);
            return r.getCertChainList();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    static IstioCertificateRequest request(String csr, long ttlSeconds) {
        return IstioCertificateRequest.newBuilder().setCsr(csr).setValidityDuration(ttlSeconds).build();
    }

    static Status.Code code(Object result) {
        return result instanceof Status s ? s.getCode() : Status.Code.OK;
    }
}
