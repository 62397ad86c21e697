package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.security.Authenticator;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.testing.TestServers;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * XDS_AUTH: on the secure port a stream needs an authenticated caller whose SPIFFE identity
 * is of the proxy's namespace (and service account); the plaintext port is not authenticated.
 */
public class XdsAuthTest {

    /** The first answer of a one-request ADS stream, or the status it was refused with. */
    public static Object firstAnswer(Channel channel, String nodeId) throws Exception {
        CompletableFuture<Object> result = new CompletableFuture<>();
        var requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(new StreamObserver<>() {
            @Override
            public void onNext(DiscoveryResponse r) {
                result.complete(r);
            }

            @Override
            public void onError(Throwable t) {
                result.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
            }
        });
        requests.onNext(DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId(nodeId))
                .setTypeUrl(TypeUrls.CLUSTER).build());
        try {
            return result.get(20, TimeUnit.SECONDS);
        } finally {
            requests.onCompleted();
        }
    }

    static Channel withIdentity(ManagedChannel channel, String identity) {
        Metadata md = new Metadata();
        md.put(IDENTITY_HEADER, identity);
        return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    }

    static ManagedChannel tls(int port, ServingCertificate cert, boolean clientCert) throws Exception {
        return tlsBuilder(port, cert, clientCert).build();
    }

    /** TLS to the secure port, every call claiming {@code identity} to {@link #registerHeaderAuthenticator}'s authenticator. */
    static ManagedChannel tlsAs(int port, ServingCertificate cert, String identity) throws Exception {
        Metadata md = new Metadata();
        md.put(IDENTITY_HEADER, identity);
        return tlsBuilder(port, cert, false).intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
    }

    private static NettyChannelBuilder tlsBuilder(int port, ServingCertificate cert, boolean clientCert) throws Exception {
        var chain = cert.chain().toArray(X509Certificate[]::new);
        var ssl = GrpcSslContexts.forClient().trustManager(chain);
        if (clientCert) {
            ssl.keyManager(cert.privateKey(), chain);
        }
        return NettyChannelBuilder.forAddress("127.0.0.1", port).sslContext(ssl.build());
    }

    private static final Metadata.Key<String> IDENTITY_HEADER =
            Metadata.Key.of("x-identity", Metadata.ASCII_STRING_MARSHALLER);

    /**
     * An authenticator that takes the caller's identity from a header (what the CA issue's
     * token authenticator will stand for): any identity a test needs, over real TLS.
     */
    static void registerHeaderAuthenticator(MeshPilotServer server) {
        server.server().components().authenticators().register(new Authenticator() {
            @Override
            public String type() {
                return "HeaderAuthenticator";
            }

            @Override
            public Optional<Caller> authenticate(CallPeer peer, CallHeaders h) {
                return Optional.ofNullable(h.first(IDENTITY_HEADER.name())).map(id -> new Caller(type(), List.of(id)));
            }
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"true", "false"})
    void theSecurePortAuthenticatesWhenXdsAuthIsOn(String xdsAuth, @TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, Map.of("XDS_AUTH", xdsAuth))) {
            ServingCertificate cert = server.server().components().certificates().serving();
            String node = "sidecar~10.0.0.1~a.default~default.svc.cluster.local";
            ManagedChannel withoutCert = tls(server.ports().get("grpc-secure"), cert, false);
            // a client certificate without a SPIFFE identity (the serving certificate: trusted, no spiffe:// SAN)
            ManagedChannel withCert = tls(server.ports().get("grpc-secure"), cert, true);
            ManagedChannel plaintext = NettyChannelBuilder.forAddress("127.0.0.1", server.ports().get("grpc"))
                    .usePlaintext().build();
            try {
                assertTrue(firstAnswer(plaintext, node) instanceof DiscoveryResponse, "plaintext is not authenticated");
                Object noCert = firstAnswer(withoutCert, node);
                Object noSpiffe = firstAnswer(withCert, node);
                if (xdsAuth.equals("true")) {
                    assertEquals(Status.Code.UNAUTHENTICATED, ((Status) noCert).getCode(), String.valueOf(noCert));
                    assertTrue(((Status) noCert).getDescription().contains("ClientCertAuthenticator: no credentials"),
                            String.valueOf(noCert));
                    assertEquals(Status.Code.UNAUTHENTICATED, ((Status) noSpiffe).getCode(), String.valueOf(noSpiffe));
                    assertTrue(((Status) noSpiffe).getDescription().contains("no spiffe:// URI SAN"),
                            String.valueOf(noSpiffe));
                    assertTrue(server.server().components().discovery().connections().size() <= 1, "refused streams are not listed");

                    // authorization: an identity of the proxy's namespace
                    registerHeaderAuthenticator(server);
                    assertTrue(firstAnswer(withIdentity(withoutCert, "spiffe://cluster.local/ns/default/sa/a"), node)
                            instanceof DiscoveryResponse, "an identity of the proxy's namespace is authorized");
                    Object otherNs = firstAnswer(withIdentity(withoutCert, "spiffe://cluster.local/ns/other/sa/a"), node);
                    assertEquals(Status.Code.PERMISSION_DENIED, ((Status) otherNs).getCode(), String.valueOf(otherNs));
                    assertTrue(((Status) otherNs).getDescription().contains("matches namespace default"),
                            String.valueOf(otherNs));
                } else {
                    assertTrue(noCert instanceof DiscoveryResponse, String.valueOf(noCert));
                    assertTrue(noSpiffe instanceof DiscoveryResponse, String.valueOf(noSpiffe));
                }
            } finally {
                withoutCert.shutdownNow();
                withCert.shutdownNow();
                plaintext.shutdownNow();
            }
        }
    }

    /** A verified client certificate with a SPIFFE URI SAN authenticates; its identity is the URI. */
    @Test
    void clientCertificateIdentities() throws Exception {
        Authenticators authenticators = new Authenticators();
        X509Certificate spiffe = certificate("spiffe://cluster.local/ns/default/sa/reviews");
        var caller = authenticators.authenticate(new CallPeer("grpc-secure", null, List.of(spiffe), true), CallHeaders.NONE);
        assertEquals(List.of("spiffe://cluster.local/ns/default/sa/reviews"), caller.identities());
        assertEquals("ClientCertAuthenticator", caller.authenticator());
        var e = assertThrows(Authenticator.AuthenticationException.class, () -> authenticators.authenticate(
                new CallPeer("grpc-secure", null, List.of(certificate(null)), true), CallHeaders.NONE));
        assertTrue(e.getMessage().contains("no spiffe:// URI SAN"), e.getMessage());
    }

    static X509Certificate certificate(String uri) throws Exception {
        var gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(256);
        var kp = gen.generateKeyPair();
        X500Name name = new X500Name("O=test");
        long now = System.currentTimeMillis();
        var builder = new JcaX509v3CertificateBuilder(name, BigInteger.ONE, new Date(now - 60_000),
                new Date(now + 3_600_000), name, kp.getPublic());
        if (uri != null) {
            builder.addExtension(Extension.subjectAlternativeName, false,
                    new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, uri)));
        }
        return new JcaX509CertificateConverter().getCertificate(builder.build(
                new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate())));
    }
}
