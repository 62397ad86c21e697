package io.meshpilot.security;

import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.istiod.IstiodCertificates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.security.ca.BoundedBackoff;
import io.meshpilot.security.ca.CaLoadException;
import io.meshpilot.security.ca.CaMaterial;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.ca.KubeSecretCaRootStore;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.security.ca.SelfSignedOptions;
import io.meshpilot.security.ca.SelfSignedRootRotator;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CA root in Kubernetes mode, against the API server stand-in: replicas starting together
 * end with one root in {@code istio-ca-secret} and sign under it; a {@code cacerts} Secret is
 * the plugged-in CA, refused at start-up with one line when its key does not match, and
 * followed without a restart when it changes.
 */
class KubernetesCaRootTest {
    static final String NS = "istio-system";
    /** Short pauses and a budget a test can wait out. */
    static final BoundedBackoff RETRY = new BoundedBackoff(Duration.ofMillis(50), Duration.ofMillis(200), Duration.ofSeconds(5));

    @TempDir
    Path dir;
    FakeApiServer api;
    final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void startApiServer() {
        api = FakeApiServer.start();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + NS + "}\n");
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
        api.stop();
    }

    KubeClient client() throws Exception {
        KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        closing.add(client);
        return client;
    }

    CaOptions options(KubeClient client) throws Exception {
        return options(client, NS);
    }

    CaOptions options(KubeClient client, String namespace) throws Exception {
        Path empty = Files.createDirectories(dir.resolve("no-root-ca-dir"));
        return new CaOptions(empty.toString(), new KubeSecretCaRootStore(client, namespace, RETRY), true, 2048,
                Duration.ofDays(3650), Duration.ofHours(1), 20, Duration.ofHours(24), Duration.ofDays(90),
                List.of("istiod." + NS + ".svc"), "");
    }

    /** A key of a Secret as the API server holds it, decoded. */
    String secretValue(String name, String key) {
        JsonObject secret = api.get("v1", "Secret", NS, name).orElseThrow(() -> new AssertionError("no Secret " + name));
        return new String(Base64.getDecoder().decode(secret.getAsJsonObject("data").get(key).getAsString()),
                StandardCharsets.UTF_8);
    }

    X509Certificate rootInIstioCaSecret() {
        List<X509Certificate> certs = Pem.certificatesIn(secretValue(KubeSecretCaRootStore.SELF_SIGNED_SECRET, "ca-cert.pem"));
        assertEquals(1, certs.size());
        return certs.getFirst();
    }

    /** Two CA setups from two clients, started at the same moment, three times over. */
    @Test
    void twoSetupsStartingTogetherEndWithOneRootInIstioCaSecret() throws Exception {
        CaOptions first = options(client());
        CaOptions second = options(client());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 3; round++) {
                api.delete("v1", "Secret", NS, KubeSecretCaRootStore.SELF_SIGNED_SECRET);
                CyclicBarrier together = new CyclicBarrier(2);
                Future<CaSetup> a = pool.submit(() -> {
                    together.await();
                    return CaSetup.create(first);
                });
                Future<CaSetup> b = pool.submit(() -> {
                    together.await();
                    return CaSetup.create(second);
                });
                CaSetup setupA = a.get();
                CaSetup setupB = b.get();
                X509Certificate root = rootInIstioCaSecret();
                for (CaSetup s : List.of(setupA, setupB)) {
                    assertEquals(root, s.ca().material().root(), "round " + round);
                    assertEquals(CaMaterial.Kind.SELF_SIGNED, s.ca().material().origin().kind());
                    s.serving().certificate().verify(root.getPublicKey()); // each signs under the one root
                    assertEquals(root.getSubjectX500Principal(), s.serving().certificate().getIssuerX500Principal());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, api.list("v1", "Secret", NS).size());
    }

    @Test
    void aRestartReadsTheKeptRootAndNeverMintsAnother() throws Exception {
        CaSetup created = CaSetup.create(options(client()));
        CaSetup again = CaSetup.create(options(client()));
        assertEquals(created.ca().material().root(), again.ca().material().root());
        assertEquals(created.ca().material().signingKey(), again.ca().material().signingKey());
        assertEquals(KubeSecretCaRootStore.SECRET_TYPE, api.get("v1", "Secret", NS, KubeSecretCaRootStore.SELF_SIGNED_SECRET)
                .orElseThrow().get("type").getAsString());
    }

    /** A rotation is written back to istio-ca-secret; the other replica adopts it instead of rotating again. */
    @Test
    void aRootRotatedByOneReplicaIsAdoptedByTheOther() throws Exception {
        KubeSecretCaRootStore storeA = new KubeSecretCaRootStore(client(), NS, RETRY);
        KubeSecretCaRootStore storeB = new KubeSecretCaRootStore(client(), NS, RETRY);
        SelfSignedOptions opts = SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256)
                .withTtl(Duration.ofDays(10));
        CaMaterial atA = storeA.loadOrCreate(opts, Clock.systemUTC());
        CaMaterial atB = storeB.loadOrCreate(opts, Clock.systemUTC());
        assertEquals(atA.root(), atB.root());
        SelfSignedRootRotator rotator = new SelfSignedRootRotator(Duration.ofDays(10), 20);
        Instant inGrace = atA.root().getNotAfter().toInstant().minus(Duration.ofDays(1));

        CaMaterial rotated = storeA.checkRotation(atA, rotator, inGrace).orElseThrow();
        assertEquals(rotated.root(), rootInIstioCaSecret(), "the rotation is written back");
        assertEquals(List.of(rotated.root(), atA.root()), rotated.roots(), "the old root stays trusted");

        CaMaterial adopted = storeB.checkRotation(atB, rotator, inGrace).orElseThrow();
        assertEquals(rotated.root(), adopted.root(), "B adopts A's rotation instead of minting its own");
        assertEquals(rotated.roots(), adopted.roots());
        assertEquals(rotated.root(), rootInIstioCaSecret());
        assertTrue(storeB.checkRotation(adopted, rotator, inGrace).isEmpty());
    }

    /**
     * Without istiod's namespace nothing can be kept where replicas share it: start-up keeps
     * asking, and fails with one line once the budget is spent; no root is kept anywhere else.
     */
    @Test
    void withoutIstiodsNamespaceTheCaFailsStartUpInsteadOfKeepingALocalRoot() throws Exception {
        CaOptions options = new CaOptions(Files.createDirectories(dir.resolve("no-root-ca-dir")).toString(),
                new KubeSecretCaRootStore(client(), "not-created",
                        new BoundedBackoff(Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(400))),
                true, 2048, Duration.ofDays(3650), Duration.ofHours(1), 20, Duration.ofHours(24), Duration.ofDays(90),
                List.of("istiod.not-created.svc"), "");
        CaLoadException e = assertThrows(CaLoadException.class, () -> CaSetup.create(options));
        assertTrue(e.getMessage().contains("namespace not-created does not exist"), e.getMessage());
        assertTrue(e.getMessage().contains("Secret not-created/istio-ca-secret"), e.getMessage());
        assertTrue(e.getMessage().contains("MESHPILOT_CA_SECRET_TIMEOUT"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertFalse(Files.exists(dir.resolve("ca-state")), "no root kept outside the cluster");

        List<String> flags = TestServers.flags(dir.resolve("server"), "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock");
        api.delete("v1", "Namespace", null, NS);
        MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> MeshPilotServer.start(TestServers.args(flags, Map.of("MESHPILOT_CA_SECRET_TIMEOUT", "300ms"))).close());
        assertTrue(failure.getMessage().contains("namespace " + NS + " does not exist"), failure.getMessage());
        assertFalse(failure.getMessage().contains("\n"), failure.getMessage());
        assertFalse(Files.exists(dir.resolve("server").resolve("ca")), "no root in --caStateDir in Kubernetes mode");
    }

    /** istiod's namespace created while start-up waits: the root is created there, as if it had been there. */
    @Test
    void aNamespaceCreatedWhileStartUpWaitsGetsTheRoot() throws Exception {
        api.delete("v1", "Namespace", null, NS);
        CaOptions options = options(client());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<CaSetup> setup = pool.submit(() -> CaSetup.create(options));
            Thread.sleep(300); // a few attempts find no namespace
            assertFalse(setup.isDone());
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + NS + "}\n");
            CaMaterial m = setup.get().ca().material();
            assertEquals(rootInIstioCaSecret(), m.root(), "the root created once the namespace exists");
            assertEquals(Path.of("Secret " + NS + "/" + KubeSecretCaRootStore.SELF_SIGNED_SECRET), m.origin().dir());
        } finally {
            pool.shutdownNow();
        }
    }

    /** The API server down at start: start-up waits for it instead of minting a root of its own. */
    @Test
    void anApiServerDownAtStartIsWaitedFor() throws Exception {
        CaOptions options = options(client());
        api.stop();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<CaSetup> setup = pool.submit(() -> CaSetup.create(options));
            Thread.sleep(300);
            assertFalse(setup.isDone());
            api.restart();
            X509Certificate root = setup.get().ca().material().root();
            assertEquals(rootInIstioCaSecret(), root);
        } finally {
            pool.shutdownNow();
        }
        assertFalse(Files.exists(dir.resolve("ca-state")));
    }

    OpenSsl pki(String name) throws IOException {
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve(name)));
        ossl.root("root", name + " Root CA", "ec");
        ossl.issue("int", name + " Intermediate CA", "ec", "root", "v3_int", 730);
        return ossl;
    }

    /** istiod's cacerts Secret from an openssl PKI; {@code keyFrom} is where ca-key.pem is taken from. */
    String cacerts(OpenSsl ossl, OpenSsl keyFrom) {
        Base64.Encoder b64 = Base64.getEncoder();
        return """
                apiVersion: v1
                kind: Secret
                metadata: {name: cacerts, namespace: %s}
                data:
                  ca-cert.pem: %s
                  ca-key.pem: %s
                  cert-chain.pem: %s
                  root-cert.pem: %s
                """.formatted(NS, b64.encodeToString(ossl.read("int-cert.pem").getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString(keyFrom.read("int-key.pem").getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString((ossl.read("int-cert.pem") + ossl.read("root-cert.pem")).getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString(ossl.read("root-cert.pem").getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aCacertsSecretIsThePluggedInCa() throws Exception {
        OpenSsl ossl = pki("plugged");
        api.apply(cacerts(ossl, ossl));
        CaSetup setup = CaSetup.create(options(client()));
        CaMaterial m = setup.ca().material();
        assertEquals(CaMaterial.Kind.PLUGGED_IN, m.origin().kind());
        assertEquals(Pem.certificatesIn(ossl.read("int-cert.pem")).getFirst(), m.signingCertificate());
        assertEquals(Pem.certificatesIn(ossl.read("root-cert.pem")), m.roots());
        setup.serving().certificate().verify(m.signingCertificate().getPublicKey());
        assertTrue(api.get("v1", "Secret", NS, KubeSecretCaRootStore.SELF_SIGNED_SECRET).isEmpty(),
                "no self-signed root is minted beside a plugged-in CA");
    }

    @Test
    void aCacertsKeyOfAnotherCertificateFailsStartUpWithOneLine() throws Exception {
        OpenSsl ossl = pki("plugged");
        OpenSsl other = pki("other");
        api.apply(cacerts(ossl, other));
        CaOptions options = options(client());
        CaLoadException e = assertThrows(CaLoadException.class, () -> CaSetup.create(options));
        assertTrue(e.getMessage().contains("ca-key.pem: private key does not match the certificate in ca-cert.pem"),
                e.getMessage());
        assertTrue(e.getMessage().contains("Secret " + NS + "/cacerts"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(api.get("v1", "Secret", NS, KubeSecretCaRootStore.SELF_SIGNED_SECRET).isEmpty(),
                "a broken cacerts is not silently replaced by a self-signed root");

        List<String> flags = TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock");
        MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> MeshPilotServer.start(TestServers.args(flags, Map.of())).close());
        assertTrue(failure.getMessage().contains("ca-key.pem: private key does not match"), failure.getMessage());
        assertFalse(failure.getMessage().contains("\n"), failure.getMessage());
    }

    List<String> kubernetesFlags(Path home) throws Exception {
        Files.createDirectories(home);
        return TestServers.flags(home, "--kubeconfig", api.writeKubeconfig(home).toString(), "--registries", "Mock");
    }

    /**
     * Two whole servers (one without HTTP listeners: Helidon hosts one per JVM) started together
     * against one API server: one root, kept in istio-ca-secret.
     */
    @Test
    void twoServersStartingTogetherShareTheRootInIstioCaSecret() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<String> flagsA = kubernetesFlags(dir.resolve("a"));
            List<String> flagsB = kubernetesFlags(dir.resolve("b"));
            CyclicBarrier together = new CyclicBarrier(2);
            Future<MeshPilotServer> a = pool.submit(() -> {
                together.await();
                return MeshPilotServer.start(TestServers.args(flagsA, Map.of()));
            });
            Future<MeshPilotServer> b = pool.submit(() -> {
                together.await();
                return MeshPilotServer.startGrpcOnly(TestServers.args(flagsB, Map.of())); // one Helidon host per JVM
            });
            MeshPilotServer serverA = a.get();
            closing.add(serverA);
            MeshPilotServer serverB = b.get();
            closing.add(serverB);
            X509Certificate root = rootInIstioCaSecret();
            for (MeshPilotServer s : List.of(serverA, serverB)) {
                IstiodCertificates certs = s.server().components().certificates();
                assertEquals(root, certs.material().root());
                certs.serving().certificate().verify(root.getPublicKey());
                assertEquals(List.of(root), certs.trustBundle().certificates());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A cacerts change reaches signing, the trust bundle and the serving certificate without a restart. */
    @Test
    void aCacertsChangeIsPickedUpWithoutRestart() throws Exception {
        OpenSsl first = pki("first");
        api.apply(cacerts(first, first));
        MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(dir.resolve("s")), Map.of()));
        closing.add(server);
        IstiodCertificates certs = server.server().components().certificates();
        X509Certificate firstRoot = Pem.certificatesIn(first.read("root-cert.pem")).getFirst();
        assertEquals(List.of(firstRoot), certs.trustBundle().certificates());

        OpenSsl second = pki("second");
        api.apply(cacerts(second, second));
        X509Certificate secondRoot = Pem.certificatesIn(second.read("root-cert.pem")).getFirst();
        X509Certificate secondInt = Pem.certificatesIn(second.read("int-cert.pem")).getFirst();
        Await.until("the new root in the trust bundle", Duration.ofSeconds(20),
                () -> certs.trustBundle().certificates().equals(List.of(secondRoot)));
        assertEquals(secondInt, certs.material().signingCertificate());
        Await.until("the serving certificate issued by the new intermediate", Duration.ofSeconds(20),
                () -> certs.serving().certificate().getIssuerX500Principal().equals(secondInt.getSubjectX500Principal()));
        certs.serving().certificate().verify(secondInt.getPublicKey());

        // a broken change is refused and the CA keeps what it has
        api.apply(cacerts(second, first));
        Thread.sleep(500); // give the watch a chance to deliver it; nothing may change
        assertEquals(secondInt, certs.material().signingCertificate());
        assertEquals(List.of(secondRoot), certs.trustBundle().certificates());
    }
}
