package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ca.KubeSecretCaRootStore;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.security.kube.NamespaceController;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.IstioWebhooks;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ENABLE_CA_SERVER=false}, the istio-csr / cert-manager path, in Kubernetes mode against
 * the API server stand-in with files written by openssl. As istiod (pilot/pkg/bootstrap/server.go):
 * maybeCreateCA creates neither CA nor RA, so startCA registers no IstioCertificateService (a CSR
 * gets gRPC's Unimplemented), initIstiodCerts serves the files' certificate, the webhook patchers
 * put the files' CA into caBundle (istiodCertBundleWatcher), and shouldStartNsController is false
 * without a CA: istio-ca-root-cert is left to istio-csr.
 */
class CaServerDisabledTest {
    static final Map<String, String> CA_OFF = Map.of("ENABLE_CA_SERVER", "false");

    @TempDir
    Path dir;
    FakeApiServer api;
    Path kubeconfig;
    OpenSsl ossl;
    X509Certificate filesRoot;

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: bookinfo}\n");
        api.apply(IstioWebhooks.validator());
        kubeconfig = api.writeKubeconfig(dir);
        Files.createDirectories(dir.resolve("config"));
        // cert-manager's issuer and istiod's certificate from it
        ossl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        ossl.root("root", "cert-manager root", "ec");
        ossl.issue("istiod", "istiod.istio-system.svc", "ec", "root", "v3_leaf", 30);
        filesRoot = Pem.certificatesIn(ossl.read("root-cert.pem")).getFirst();
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    String[] flags() {
        return new String[] {"--kubeconfig", kubeconfig.toString(), "--registries", "Mock",
                "--tlsCertFile", ossl.dir().resolve("istiod-cert.pem").toString(),
                "--tlsKeyFile", ossl.dir().resolve("istiod-key.pem").toString(),
                "--caCertFile", ossl.dir().resolve("root-cert.pem").toString()};
    }

    Kubectl kubectl() {
        return new Kubectl(Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH")),
                kubeconfig, dir.resolve("kubectl"));
    }

    String validatorCaBundle() {
        JsonObject config = JsonParser.parseString(kubectl().run("get", "validatingwebhookconfiguration",
                "istio-validator-istio-system", "-o", "json").ok().stdout()).getAsJsonObject();
        JsonObject client = config.getAsJsonArray("webhooks").get(0).getAsJsonObject().getAsJsonObject("clientConfig");
        return client.has("caBundle") ? new String(Base64.getDecoder().decode(client.get("caBundle").getAsString()),
                StandardCharsets.US_ASCII) : "";
    }

    @Test
    void withTheCaOffTheFilesCertificateIsServedItsRootPublishedAndNoCaExists() throws Exception {
        try (MeshPilotServer server = TestServers.start(dir, CA_OFF, flags())) {
            int port = server.ports().get("grpc-secure");
            // 15012 presents the files' certificate to a client trusting only the files' root
            try (SSLSocket socket = RaCertProviderTest.handshake(port, filesRoot)) {
                assertEquals(Pem.certificatesIn(ossl.read("istiod-cert.pem")).getFirst(),
                        socket.getSession().getPeerCertificates()[0]);
            }
            // no CSR service: gRPC's own answer for an unregistered service, as istiod
            ManagedChannel channel = CaClient.channel(port, List.of(filesRoot), "istiod.istio-system.svc");
            try {
                Object result = CaClient.create(channel, null, CaClient.request(
                        ossl.ecCsr("workload", "prime256v1", "URI:spiffe://cluster.local/ns/default/sa/default"), 3600));
                assertEquals(Status.Code.UNIMPLEMENTED, CaClient.code(result), String.valueOf(result));
            } finally {
                channel.shutdownNow();
            }
            // the webhook's caBundle is the files' CA
            Await.until("the validator's caBundle patched with the files' root", Duration.ofSeconds(30),
                    () -> !validatorCaBundle().isEmpty()); // the chart installs it with an empty one
            assertEquals(List.of(filesRoot), Pem.certificatesIn(validatorCaBundle()));

            // no CA Secrets read or written, and istio-ca-root-cert left to istio-csr
            var secrets = kubectl().run("get", "secrets", "-n", "istio-system", "-o", "name").ok().stdout();
            assertFalse(secrets.contains(KubeSecretCaRootStore.SELF_SIGNED_SECRET), secrets);
            var configMaps = kubectl().run("get", "configmaps", "-A", "-o", "name").ok().stdout();
            assertFalse(configMaps.contains(NamespaceController.CONFIG_MAP), configMaps);
            assertTrue(server.server().components().certificates().trustBundle().certificates().contains(filesRoot));
        }
    }

    @Test
    void aNewRootInTheCaFileIsPublished() throws Exception {
        Path ca = Files.copy(ossl.dir().resolve("root-cert.pem"), dir.resolve("ca.crt"));
        String[] flags = flags();
        flags[flags.length - 1] = ca.toString();
        try (MeshPilotServer server = TestServers.start(dir, CA_OFF, flags)) {
            // cert-manager's issuer rotating: the new root is added next to the old one
            ossl.root("next", "cert-manager next root", "ec");
            X509Certificate next = Pem.certificatesIn(ossl.read("next-cert.pem")).getFirst();
            Path tmp = Files.writeString(dir.resolve(".ca.crt.tmp"), ossl.read("root-cert.pem") + ossl.read("next-cert.pem"));
            Files.move(tmp, ca, StandardCopyOption.ATOMIC_MOVE);
            Await.until("the new root in the trust bundle", Duration.ofSeconds(20),
                    () -> server.server().components().certificates().trustBundle().certificates().contains(next));
            Await.until("the new root in the validator's caBundle", Duration.ofSeconds(20),
                    () -> !validatorCaBundle().isEmpty() && Pem.certificatesIn(validatorCaBundle()).contains(next));
        }
    }

    @Test
    void withTheCaOffAndNoCertificateFilesStartUpFailsInOneLine() {
        MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> TestServers.start(dir, CA_OFF, "--kubeconfig", kubeconfig.toString(), "--registries", "Mock")
                        .close());
        assertTrue(failure.getMessage().contains("ENABLE_CA_SERVER=false"), failure.getMessage());
        assertFalse(failure.getMessage().contains("\n"), failure.getMessage());
        assertTrue(api.get("v1", "Secret", "istio-system", KubeSecretCaRootStore.SELF_SIGNED_SECRET).isEmpty(),
                "no istio-ca-secret created");
    }
}
