package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubernetes.client.openapi.models.V1CertificateSigningRequest;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * RA mode end to end: a server in Kubernetes mode with EXTERNAL_CA=ISTIOD_RA_KUBERNETES_API
 * against the API server stand-in, a test signer ({@link ExternalSigner}) watching
 * CertificateSigningRequests with its own CA, and a real CreateCertificate client over TLS
 * with a service-account JWT. The caller gets the external signer's chain with the root from
 * meshConfig.caCertificates (certSigners), the CSR object is gone afterwards; a CSR the signer
 * never signs times out with a status naming the signer; a denied one carries its reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesRaTest {
    static final String SIGNER = "example.com/mesh-workloads";
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";

    Path dir;
    FakeApiServer api;
    ExternalSigner signer;
    MeshPilotServer server;
    ManagedChannel channel;
    OpenSsl openssl;
    Tokens tokens;

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        dir = tmp;
        openssl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
        Path kubeconfig = api.writeKubeconfig(dir);
        signer = new ExternalSigner(kubeconfig, SIGNER);
        // the signer's root, configured for its signer name as istiod reads it
        String rootPem = Pem.certificate(signer.root()).strip().replace("\n", "\n      ");
        Files.writeString(dir.resolve("mesh"), """
                caCertificates:
                - certSigners: [%s]
                  pem: |
                      %s
                """.formatted(SIGNER, rootPem));
        tokens = new Tokens("k1");
        Path jwks = Files.writeString(dir.resolve("jwks.json"), tokens.jwks());
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, Map.of(
                        "JWT_RULE", Tokens.rule(jwks),
                        "EXTERNAL_CA", "ISTIOD_RA_KUBERNETES_API",
                        "K8S_SIGNER", SIGNER,
                        "MESHPILOT_RA_SIGN_TIMEOUT", "3s"),
                "--kubeconfig", kubeconfig.toString(), "--registries", "Mock");
        X509Certificate servingRoot = server.server().components().certificates().material().root();
        // in Kubernetes mode istiod's certificate names its Service only, not localhost
        channel = NettyChannelBuilder
                .forAddress("127.0.0.1", server.ports().get("grpc-secure"))
                .overrideAuthority("istiod.istio-system.svc")
                .sslContext(GrpcSslContexts.forClient().trustManager(servingRoot)
                        .build())
                .build();
    }

    @AfterAll
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        if (signer != null) {
            signer.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    @BeforeEach
    void signerSigns() {
        signer.behave(ExternalSigner.Behaviour.SIGN);
        signer.approvedSeen.clear();
    }

    @Test
    void theCallerGetsTheExternalSignersChainAndTheCsrObjectIsDeleted() throws Exception {
        String csr = openssl.ecCsr("signed", "prime256v1", "URI:" + ID);
        List<String> chain = chain(create(csr));
        assertEquals(2, chain.size(), "leaf, then the signer's root: " + chain);
        X509Certificate leaf = Pem.certificatesIn(chain.getFirst()).getFirst();
        leaf.verify(signer.root().getPublicKey()); // signed by the external CA, not MeshPilot's
        assertEquals(signer.root(), Pem.certificatesIn(chain.getLast()).getFirst(), "the signer's configured root last");
        assertEquals(List.of(List.of(6, ID)), new ArrayList<>(leaf.getSubjectAlternativeNames()).stream()
                .map(l -> List.<Object>copyOf(l)).toList());

        assertEquals(1, signer.approvedSeen.size(), "one CSR object reached the signer: " + signer.approvedSeen.keySet());
        V1CertificateSigningRequest seen = signer.approvedSeen.values().iterator().next();
        String name = seen.getMetadata().getName();
        assertTrue(name.startsWith("csr-workload-"), name);
        assertEquals(SIGNER, seen.getSpec().getSignerName());
        assertEquals(List.of("digital signature", "key encipherment", "server auth", "client auth"),
                seen.getSpec().getUsages());
        var approved = seen.getStatus().getConditions().getFirst();
        assertEquals("Approved", approved.getType());
        assertTrue(approved.getReason().contains("(" + name + ")") && approved.getReason().endsWith("is approved"),
                approved.getReason());
        assertTrue(api.get("certificates.k8s.io/v1", "CertificateSigningRequest", null, name).isEmpty(),
                "the CSR object is deleted once answered");
    }

    @Test
    void aCsrTheSignerNeverSignsTimesOutWithAStatusNamingTheSigner() throws Exception {
        signer.behave(ExternalSigner.Behaviour.SILENT);
        Object result = create(openssl.ecCsr("silent", "prime256v1", "URI:" + ID));
        Status status = status(result);
        assertEquals(Status.Code.DEADLINE_EXCEEDED, status.getCode(), String.valueOf(status));
        assertTrue(status.getDescription().contains("signer " + SIGNER + " did not sign"), status.getDescription());
        assertTrue(api.list("certificates.k8s.io/v1", "CertificateSigningRequest", null).isEmpty(),
                "the unsigned CSR object is deleted too");
    }

    @Test
    void aDeniedCsrAnswersWithItsReason() throws Exception {
        signer.behave(ExternalSigner.Behaviour.DENY);
        Status status = status(create(openssl.ecCsr("denied", "prime256v1", "URI:" + ID)));
        assertEquals(Status.Code.FAILED_PRECONDITION, status.getCode(), String.valueOf(status));
        assertTrue(status.getDescription().contains("Denied: " + ExternalSigner.DENY_REASON)
                && status.getDescription().contains(ExternalSigner.DENY_MESSAGE)
                && status.getDescription().contains(SIGNER), status.getDescription());
        assertTrue(api.list("certificates.k8s.io/v1", "CertificateSigningRequest", null).isEmpty());
    }

    private Object create(String csr) throws Exception {
        return CaClient.create(channel, tokens.sign(Tokens.serviceAccount("default", "bookinfo")),
                CaClient.request(csr, 3600));
    }

    @SuppressWarnings("unchecked")
    private static List<String> chain(Object result) {
        assertTrue(result instanceof List, "expected a chain, got " + result);
        return (List<String>) result;
    }

    private static Status status(Object result) {
        assertTrue(result instanceof Status, "expected a refusal, got " + result);
        return (Status) result;
    }
}
