package io.meshpilot.security;

import io.meshpilot.security.istiod.IstiodCertificates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.kube.NamespaceController;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RA mode with istiod's {@code PILOT_CERT_PROVIDER=k8s.io/<signer>}: istiod's own certificate
 * comes from the external signer through the CSR API, and the root published (trust bundle,
 * {@code istio-ca-root-cert}, the CA root API) is the signer's from MeshConfig, not MeshPilot's
 * own CA root; without a configured root start-up fails with one line.
 */
class RaCertProviderTest {
    static final String SIGNER = "example.com/istio";

    @TempDir
    Path dir;
    FakeApiServer api;
    ExternalSigner signer;
    Path kubeconfig;

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        kubeconfig = api.writeKubeconfig(dir);
        signer = new ExternalSigner(kubeconfig, SIGNER);
        Files.createDirectories(dir.resolve("config"));
    }

    @AfterEach
    void stop() {
        signer.close();
        api.stop();
    }

    Map<String, String> raEnv() {
        return Map.of("EXTERNAL_CA", "ISTIOD_RA_KUBERNETES_API", "K8S_SIGNER", SIGNER,
                "PILOT_CERT_PROVIDER", "k8s.io/" + SIGNER, "MESHPILOT_RA_SIGN_TIMEOUT", "5s");
    }

    void meshWithSignerRoot() throws Exception {
        String rootPem = Pem.certificate(signer.root()).strip().replace("\n", "\n      ");
        Files.writeString(dir.resolve("mesh"), """
                caCertificates:
                - certSigners: [%s]
                  pem: |
                      %s
                """.formatted(SIGNER, rootPem));
    }

    Optional<String> rootCertConfigMap(String namespace) {
        return api.get("v1", "ConfigMap", namespace, NamespaceController.CONFIG_MAP)
                .map(cm -> cm.getAsJsonObject("data").get(NamespaceController.KEY).getAsString());
    }

    @Test
    void istiodsCertificateAndThePublishedRootComeFromTheSigner() throws Exception {
        meshWithSignerRoot();
        try (MeshPilotServer server = TestServers.start(dir, raEnv(), "--kubeconfig", kubeconfig.toString(),
                "--registries", "Mock")) {
            IstiodCertificates certs = server.server().components().certificates();
            X509Certificate ownRoot = certs.material().root();
            assertFalse(ownRoot.equals(signer.root()));

            // istiod's certificate: signed by the signer, for istiod's names
            X509Certificate serving = certs.serving().certificate();
            serving.verify(signer.root().getPublicKey());
            assertTrue(serving.getSubjectAlternativeNames().stream().anyMatch(san -> san.get(1).equals("istiod.istio-system.svc")),
                    String.valueOf(serving.getSubjectAlternativeNames()));
            // and what the secure port presents
            try (SSLSocket socket = handshake(server.ports().get("grpc-secure"), signer.root())) {
                X509Certificate presented = (X509Certificate) socket.getSession().getPeerCertificates()[0];
                presented.verify(signer.root().getPublicKey());
            }

            // the published root: trust bundle, CA root API, istio-ca-root-cert
            assertEquals(signer.root(), certs.trustBundle().certificates().getFirst());
            assertFalse(certs.trustBundle().certificates().contains(ownRoot), "MeshPilot's own root is not published");
            JsonObject root = JsonParser.parseString(Http.get(server.ports().get("http"), "/api/v1/ca/root").body())
                    .getAsJsonObject();
            assertEquals(signer.root().getSubjectX500Principal().getName(),
                    root.getAsJsonObject("root").get("subject").getAsString(), root.toString());
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (rootCertConfigMap("istio-system").isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(List.of(signer.root()), Pem.certificatesIn(rootCertConfigMap("istio-system").orElseThrow()));
        }
    }

    /** A TLS handshake with 127.0.0.1:{@code port} that trusts {@code root} only. */
    static SSLSocket handshake(int port, X509Certificate root) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("root", root);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(
                TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port);
        SSLParameters params = socket.getSSLParameters();
        params.setApplicationProtocols(new String[] {"h2"});
        socket.setSSLParameters(params);
        socket.startHandshake();
        return socket;
    }

    @Test
    void withoutTheSignersRootInMeshConfigStartUpFails() throws Exception {
        MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> TestServers.start(dir, raEnv(), "--kubeconfig", kubeconfig.toString(), "--registries", "Mock").close());
        assertTrue(failure.getMessage().startsWith("ca: PILOT_CERT_PROVIDER=k8s.io/" + SIGNER), failure.getMessage());
        assertTrue(failure.getMessage().contains("no root for signer " + SIGNER + " in meshConfig.caCertificates"),
                failure.getMessage());
        assertFalse(failure.getMessage().contains("\n"), failure.getMessage());
    }

    @Test
    void aSignerProviderWithoutRaModeFailsStartUp() {
        MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> TestServers.start(dir, Map.of("PILOT_CERT_PROVIDER", "k8s.io/" + SIGNER),
                        "--kubeconfig", kubeconfig.toString(), "--registries", "Mock").close());
        assertTrue(failure.getMessage().contains("PILOT_CERT_PROVIDER=k8s.io/" + SIGNER + " needs RA mode"),
                failure.getMessage());
    }
}
