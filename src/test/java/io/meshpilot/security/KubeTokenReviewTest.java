package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.TokenReviews;
import io.meshpilot.xds.XdsAuthTest;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kubernetes mode's CA authenticates agents by their service-account tokens through the API
 * server's TokenReview (istiod's KubeJWTAuthenticator and node authorizer): real CSRs over
 * TLS to the secure port of a whole server whose --kubeconfig points at the API server
 * stand-in, which answers the reviews as each case sets up.
 */
class KubeTokenReviewTest {
    static final String BOOKINFO = "spiffe://cluster.local/ns/default/sa/bookinfo";
    static final String ISTIO_CA = "istio-ca";
    static final String REVIEWS = "POST /apis/authentication.k8s.io/v1/tokenreviews";

    @TempDir
    Path dir;
    FakeApiServer api;
    OpenSsl openssl;

    /** One row: what is sent, the status expected, a part of its description, and for OK the one identity signed. */
    record Case(String name, Supplier<Object> call, Status.Code expected, String messagePart, String signedFor) {
    }

    @BeforeEach
    void startApiServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
        openssl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
    }

    @AfterEach
    void stopApiServer() {
        api.stop();
    }

    MeshPilotServer startServer(Map<String, String> env) throws Exception {
        List<String> flags = TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock");
        return MeshPilotServer.start(TestServers.args(flags, env));
    }

    /** TLS to the secure port as an agent in the cluster: the serving certificate names istiod's Service, not localhost. */
    static ManagedChannel channel(MeshPilotServer server) throws Exception {
        var ssl = GrpcSslContexts.forClient()
                .trustManager(server.server().components().certificates().material().root()).build();
        return NettyChannelBuilder.forAddress("localhost",
                server.ports().get("grpc-secure")).overrideAuthority("istiod.istio-system.svc").sslContext(ssl).build();
    }

    static IstioCertificateRequest impersonating(String csr, String identity) {
        return CaClient.request(csr, 0).toBuilder().setMetadata(Struct.newBuilder().putFields("ImpersonatedIdentity",
                Value.newBuilder().setStringValue(identity).build())).build();
    }

    static String sa(String namespace, String name) {
        return "system:serviceaccount:" + namespace + ":" + name;
    }

    /** A pod of {@code serviceAccount} on {@code node}; returns its uid as the API server assigned it. */
    String pod(String namespace, String name, String serviceAccount, String node) {
        return pod(api, namespace, name, serviceAccount, node, "");
    }

    /** As {@link #pod(String, String, String, String)} on {@code api}, followed by {@code more} YAML (e.g. a status). */
    static String pod(FakeApiServer api, String namespace, String name, String serviceAccount, String node,
                      String more) {
        var created = api.apply("""
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: %s}
                spec:
                  serviceAccountName: %s
                  nodeName: %s
                  containers: [{name: app, image: app}]
                """.formatted(name, namespace, serviceAccount, node) + more);
        return created.getFirst().getAsJsonObject("metadata").get("uid").getAsString();
    }

    long reviews() {
        return api.requestLog().stream().filter(l -> l.startsWith(REVIEWS)).count();
    }

    @Test
    void thirdPartyTokensReviewedByTheApiServerDecideTheIdentitySigned() throws Exception {
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n");
        String ztunnelUid = pod("istio-system", "ztunnel-n1", "ztunnel", "node-1");
        pod("default", "bookinfo-n1", "bookinfo", "node-1");
        pod("default", "ratings-n2", "ratings", "node-2");

        var tokens = api.tokens();
        tokens.accept("valid", sa("default", "bookinfo"), List.of(ISTIO_CA));
        tokens.accept("cached", sa("default", "cached"), List.of(ISTIO_CA));
        tokens.accept("api-server-audience", sa("default", "bookinfo"), List.of(TokenReviews.API_SERVER_AUDIENCE));
        tokens.accept("a-person", "alice@example.com", List.of(ISTIO_CA));
        tokens.accept("down", sa("default", "bookinfo"), List.of(ISTIO_CA));
        tokens.accept("slow", sa("default", "bookinfo"), List.of(ISTIO_CA));
        tokens.acceptForPod("ztunnel", sa("istio-system", "ztunnel"), List.of(ISTIO_CA), "ztunnel-n1", ztunnelUid);
        tokens.accept("ztunnel-unbound", sa("istio-system", "ztunnel"), List.of(ISTIO_CA));
        tokens.acceptForPod("ztunnel-stale", sa("istio-system", "ztunnel"), List.of(ISTIO_CA), "ztunnel-n1",
                "0000-replaced-pod");
        tokens.accept("revoked", sa("default", "bookinfo"), List.of(ISTIO_CA));
        tokens.revoke("revoked");

        String csr = openssl.ecCsr("w", "prime256v1", null);
        String otherSan = openssl.ecCsr("other", "prime256v1", "URI:spiffe://cluster.local/ns/kube-system/sa/admin");
        try (MeshPilotServer server = startServer(Map.of("CA_TRUSTED_NODE_ACCOUNTS", "istio-system/ztunnel"))) {
            ManagedChannel ch = channel(server);
            try {
                List<Case> table = List.of(
                        new Case("valid token", () -> CaClient.create(ch, "valid", CaClient.request(csr, 0)),
                                Status.Code.OK, "", BOOKINFO),
                        new Case("token the review rejects", () -> CaClient.create(ch, "never-issued", CaClient.request(csr, 0)),
                                Status.Code.UNAUTHENTICATED, "invalid bearer token", null),
                        new Case("revoked (expired) token", () -> CaClient.create(ch, "revoked", CaClient.request(csr, 0)),
                                Status.Code.UNAUTHENTICATED, "invalid bearer token", null),
                        new Case("garbage token", () -> CaClient.create(ch, "%%not-a-jwt%%", CaClient.request(csr, 0)),
                                Status.Code.UNAUTHENTICATED, "KubeJWTAuthenticator", null),
                        new Case("valid token, CSR for another identity",
                                () -> CaClient.create(ch, "valid", CaClient.request(otherSan, 0)),
                                Status.Code.PERMISSION_DENIED, "", null),
                        new Case("valid token, impersonation without being a node account",
                                () -> CaClient.create(ch, "valid", impersonating(csr, "spiffe://cluster.local/ns/default/sa/ratings")),
                                Status.Code.UNAUTHENTICATED, ZtunnelCsrTest.OPAQUE, null),
                        new Case("token for the API server's audience only (third-party policy wants istio-ca)",
                                () -> CaClient.create(ch, "api-server-audience", CaClient.request(csr, 0)),
                                Status.Code.UNAUTHENTICATED, "invalid for the target audiences [istio-ca]", null),
                        new Case("token of a user that is not a service account",
                                () -> CaClient.create(ch, "a-person", CaClient.request(csr, 0)),
                                Status.Code.UNAUTHENTICATED, "not a service account", null),
                        new Case("node agent for a pod on its node",
                                () -> CaClient.create(ch, "ztunnel", impersonating(csr, BOOKINFO)),
                                Status.Code.OK, "", BOOKINFO),
                        new Case("node agent for a service account with no pod on its node",
                                () -> CaClient.create(ch, "ztunnel", impersonating(csr, "spiffe://cluster.local/ns/default/sa/ratings")),
                                Status.Code.UNAUTHENTICATED, ZtunnelCsrTest.OPAQUE, null),
                        new Case("node agent with a token not bound to its pod",
                                () -> CaClient.create(ch, "ztunnel-unbound", impersonating(csr, BOOKINFO)),
                                Status.Code.UNAUTHENTICATED, ZtunnelCsrTest.OPAQUE, null),
                        new Case("node agent whose token names a replaced pod",
                                () -> CaClient.create(ch, "ztunnel-stale", impersonating(csr, BOOKINFO)),
                                Status.Code.UNAUTHENTICATED, ZtunnelCsrTest.OPAQUE, null),
                        new Case("node agent itself, no impersonation",
                                () -> CaClient.create(ch, "ztunnel", CaClient.request(csr, 0)),
                                Status.Code.OK, "", "spiffe://cluster.local/ns/istio-system/sa/ztunnel"),
                        new Case("TokenReview API down", () -> {
                            tokens.failWith(503);
                            try {
                                return CaClient.create(ch, "down", CaClient.request(csr, 0));
                            } finally {
                                tokens.failWith(0);
                            }
                        }, Status.Code.UNAUTHENTICATED, "TokenReview API unavailable (HTTP 503)", null),
                        new Case("TokenReview API slower than the review timeout", () -> {
                            tokens.delay(Duration.ofSeconds(7));
                            try {
                                return CaClient.create(ch, "slow", CaClient.request(csr, 0));
                            } finally {
                                tokens.delay(Duration.ZERO);
                            }
                        }, Status.Code.UNAUTHENTICATED, "TokenReview API unavailable", null));

                List<String> wrong = new ArrayList<>();
                for (Case c : table) {
                    Object result = c.call().get();
                    Status.Code code = CaClient.code(result);
                    if (code != c.expected()
                            || result instanceof Status s && !String.valueOf(s.getDescription()).contains(c.messagePart())) {
                        wrong.add(c.name() + ": expected " + c.expected() + " '" + c.messagePart() + "', got " + result);
                    } else if (c.signedFor() != null) {
                        List<String> ids = uriSans(result);
                        if (!ids.equals(List.of(c.signedFor()))) {
                            wrong.add(c.name() + ": signed for " + ids + ", expected exactly " + c.signedFor());
                        }
                    }
                }
                assertTrue(table.size() >= 10, "the issue asks for at least 10 cases");
                assertEquals(List.of(), wrong);

                // a token answered once is not reviewed again while its answer is cached; a
                // failure to reach the API server is never cached: "down" and "slow" work now
                long before = reviews();
                for (int i = 0; i < 3; i++) {
                    assertEquals(List.of("spiffe://cluster.local/ns/default/sa/cached"),
                            uriSans(CaClient.create(ch, "cached", CaClient.request(csr, 0))));
                }
                assertEquals(1, reviews() - before, "three CSRs with one token, one TokenReview");
                assertEquals(List.of(BOOKINFO), uriSans(CaClient.create(ch, "down", CaClient.request(csr, 0))));
            } finally {
                ch.shutdownNow();
            }
        }
    }

    @Test
    void firstPartyPolicyReviewsAgainstTheApiServersOwnAudience() throws Exception {
        var tokens = api.tokens();
        tokens.accept("legacy", sa("default", "bookinfo"), List.of(TokenReviews.API_SERVER_AUDIENCE));
        tokens.accept("projected-for-istio-ca", sa("default", "bookinfo"), List.of(ISTIO_CA));
        String csr = openssl.ecCsr("w", "prime256v1", null);
        try (MeshPilotServer server = startServer(Map.of("JWT_POLICY", "first-party-jwt"))) {
            ManagedChannel ch = channel(server);
            try {
                assertEquals(List.of(BOOKINFO), uriSans(CaClient.create(ch, "legacy", CaClient.request(csr, 0))));
                Object refused = CaClient.create(ch, "projected-for-istio-ca", CaClient.request(csr, 0));
                assertEquals(Status.Code.UNAUTHENTICATED, CaClient.code(refused), String.valueOf(refused));
            } finally {
                ch.shutdownNow();
            }
        }
    }

    /**
     * XDS_AUTH on the secure port asks the same authenticators: a reviewed token opens an ADS
     * stream; of several authorization values the first bearer one is read, as istiod's.
     */
    @Test
    void xdsStreamsOnTheSecurePortAreAuthenticatedByTokenReview() throws Exception {
        api.tokens().accept("bookinfo", sa("default", "bookinfo"), List.of(ISTIO_CA));
        String node = "sidecar~10.0.0.2~bookinfo-1.default~default.svc.cluster.local";
        try (MeshPilotServer server = startServer(Map.of())) {
            ManagedChannel ch = channel(server);
            try {
                Object accepted = XdsAuthTest.firstAnswer(bearer(ch, "bookinfo"), node);
                assertTrue(accepted instanceof DiscoveryResponse,
                        String.valueOf(accepted));
                Object refused = XdsAuthTest.firstAnswer(bearer(ch, "never-issued"), node);
                assertEquals(Status.Code.UNAUTHENTICATED, ((Status) refused).getCode(), String.valueOf(refused));
                assertTrue(((Status) refused).getDescription().contains("KubeJWTAuthenticator"), String.valueOf(refused));
                // of several authorization values istiod reads the first that carries a bearer token
                Object first = XdsAuthTest.firstAnswer(authorizations(ch, "Basic dXNlcjpwdw==", "Bearer bookinfo",
                        "Bearer never-issued"), node);
                assertTrue(first instanceof DiscoveryResponse, String.valueOf(first));
                Object notLast = XdsAuthTest.firstAnswer(authorizations(ch, "Bearer never-issued", "Bearer bookinfo"), node);
                assertEquals(Status.Code.UNAUTHENTICATED, ((Status) notLast).getCode(), String.valueOf(notLast));
            } finally {
                ch.shutdownNow();
            }
        }
    }

    static Channel authorizations(Channel channel, String... values) {
        Metadata md = new Metadata();
        for (String value : values) {
            md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), value);
        }
        return ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    }

    static Channel bearer(Channel channel, String token) {
        return authorizations(channel, "Bearer " + token);
    }

    @SuppressWarnings("unchecked")
    static List<String> uriSans(Object result) {
        assertTrue(result instanceof List, "expected a chain, got " + result);
        try {
            X509Certificate leaf = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
                    new ByteArrayInputStream(((List<String>) result).getFirst().getBytes(StandardCharsets.US_ASCII)));
            List<String> out = new ArrayList<>();
            if (leaf.getSubjectAlternativeNames() != null) {
                for (List<?> san : leaf.getSubjectAlternativeNames()) {
                    out.add(san.get(0) + ":" + san.get(1));
                }
            }
            return out.stream().filter(s -> s.startsWith("6:")).map(s -> s.substring(2)).toList();
        } catch (CertificateException e) {
            throw new AssertionError(e);
        }
    }
}
