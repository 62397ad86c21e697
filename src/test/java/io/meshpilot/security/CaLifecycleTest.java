package io.meshpilot.security;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.meshpilot.security.ca.SelfSignedCaStore;
import io.meshpilot.security.ca.SelfSignedOptions;
import io.meshpilot.security.istiod.IstiodCertificates;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.testing.AdsStream;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.TrustingTls;
import io.meshpilot.xds.XdsAuthTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CA across starts and configurations: a plugged-in root and intermediate, the
 * self-signed root kept across restarts, damaged CA files stopping start-up untouched, and
 * XDS_AUTH on 15012 with identities from the CA's authenticators.
 */
class CaLifecycleTest {

    /** The chain the secure port presents to a client that trusts only {@code root} and checks the name. */
    static List<X509Certificate> presentedChain(int port, X509Certificate root) throws Exception {
        SSLContext ctx = TrustingTls.trusting(root);
        try (SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("localhost", port)) {
            var params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            params.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(params);
            socket.startHandshake();
            List<X509Certificate> chain = new ArrayList<>();
            for (var c : socket.getSession().getPeerCertificates()) {
                chain.add((X509Certificate) c);
            }
            return chain;
        }
    }

    @Test
    void aPluggedInRootAndIntermediateSignLeavesAndIstiodsOwnCertificate(@TempDir Path dir) throws Exception {
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        ossl.root("root", "Plugged Root", "rsa:2048");
        ossl.issue("int", "Plugged Intermediate", "ec", "root", "v3_int", 730);
        Path cacerts = Files.createDirectories(dir.resolve("cacerts"));
        Files.copy(ossl.dir().resolve("int-cert.pem"), cacerts.resolve("ca-cert.pem"));
        Files.copy(ossl.dir().resolve("int-key.pem"), cacerts.resolve("ca-key.pem"));
        Files.writeString(cacerts.resolve("cert-chain.pem"), ossl.read("int-cert.pem") + ossl.read("root-cert.pem"));
        Files.copy(ossl.dir().resolve("root-cert.pem"), cacerts.resolve("root-cert.pem"));
        Files.createDirectories(dir.resolve("config"));
        Tokens tokens = new Tokens("k1");
        Path jwks = Files.writeString(dir.resolve("jwks.json"), tokens.jwks());

        try (MeshPilotServer server = TestServers.start(dir, Map.of("ROOT_CA_DIR", cacerts.toString(),
                "JWT_RULE", Tokens.rule(jwks)))) {
            X509Certificate root = CertificateServiceTest.parse(ossl.read("root-cert.pem"));
            X509Certificate intermediate = CertificateServiceTest.parse(ossl.read("int-cert.pem"));
            assertEquals(root, server.server().components().certificates().material().root());
            assertTrue(server.server().components().certificates().material().origin().toString().startsWith("plugged-in"));

            ManagedChannel ch = CaClient.channel(server.ports().get("grpc-secure"), List.of(root), null, null);
            try {
                String csr = ossl.rsaCsr("w", 2048, null);
                Object r = CaClient.create(ch, tokens.sign(Tokens.serviceAccount("default", "bookinfo")),
                        CaClient.request(csr, 600));
                assertTrue(r instanceof List, String.valueOf(r));
                @SuppressWarnings("unchecked")
                List<String> chain = (List<String>) r;
                assertEquals(3, chain.size(), "leaf, intermediate, root");
                assertEquals(intermediate, CertificateServiceTest.parse(chain.get(1)));
                ossl.write("leaf.pem", chain.getFirst());
                ossl.write("untrusted.pem", chain.get(1));
                String out = ossl.run("verify", "-CAfile", "root-cert.pem", "-untrusted", "untrusted.pem", "leaf.pem");
                assertTrue(out.contains("leaf.pem: OK"), out);
            } finally {
                ch.shutdownNow();
            }
            // istiod's own certificate: issued by the intermediate, verified by a client trusting only the root
            List<X509Certificate> presented = presentedChain(server.ports().get("grpc-secure"), root);
            assertEquals(intermediate, presented.get(1), "the intermediate is presented");
            presented.getFirst().verify(intermediate.getPublicKey());
        }
    }

    @Test
    void theSelfSignedRootSurvivesRestartsAndADamagedKeyStopsStartUpUntouched(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        X509Certificate first;
        try (MeshPilotServer server = TestServers.start(dir)) {
            first = server.server().components().certificates().material().root();
        }
        Path key = dir.resolve("ca/root-key.pem");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));
        try (MeshPilotServer server = TestServers.start(dir)) {
            assertEquals(first, server.server().components().certificates().material().root(), "the same root after a restart");
            // and workloads chain to it
            X509Certificate presented = presentedChain(server.ports().get("grpc-secure"), first).getFirst();
            presented.verify(first.getPublicKey());
        }

        byte[] damagedKey = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".getBytes();
        Files.write(key, damagedKey);
        byte[] cert = Files.readAllBytes(dir.resolve("ca/root-cert.pem"));
        var failure = assertThrows(MeshPilotServer.StartupFailure.class, () -> TestServers.start(dir).close());
        assertTrue(failure.getMessage().startsWith("ca: root-key.pem: "),
                failure.getMessage());
        assertArrayEquals(damagedKey, Files.readAllBytes(key), "the key file is left as it was");
        assertArrayEquals(cert, Files.readAllBytes(dir.resolve("ca/root-cert.pem")), "the certificate too");
    }

    @Test
    void xdsAuthOnTheSecurePortTakesTheIdentityFromATokenOrRefuses(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        Tokens tokens = new Tokens("k1");
        Path jwks = Files.writeString(dir.resolve("jwks.json"), tokens.jwks());
        try (MeshPilotServer server = TestServers.start(dir, Map.of("XDS_AUTH", "true", "JWT_RULE", Tokens.rule(jwks)))) {
            X509Certificate root = server.server().components().certificates().material().root();
            ManagedChannel ch = CaClient.channel(server.ports().get("grpc-secure"), List.of(root), null, null);
            try {
                String node = "sidecar~10.0.0.1~productpage-1.default~default.svc.cluster.local";
                Object refused = XdsAuthTest.firstAnswer(ch, node);
                assertEquals(Status.Code.UNAUTHENTICATED, ((Status) refused).getCode(), String.valueOf(refused));

                Metadata md = new Metadata();
                md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                        "Bearer " + tokens.sign(Tokens.serviceAccount("default", "bookinfo-productpage")));
                var withToken = ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(md));
                assertTrue(XdsAuthTest.firstAnswer(withToken, node) instanceof DiscoveryResponse, "a token of the namespace");
                // a stream kept open: the identity is stored on its connection
                try (AdsStream stream = AdsStream.open(withToken)) {
                    stream.send(DiscoveryRequest.newBuilder()
                            .setNode(Node.newBuilder().setId(node))
                            .setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster").build());
                    assertTrue(stream.next(20) instanceof DiscoveryResponse);
                    assertTrue(server.server().components().discovery().connections().stream()
                            .anyMatch(c -> c.identities().equals(
                                    List.of("spiffe://cluster.local/ns/default/sa/bookinfo-productpage"))),
                            "the identity is stored on the connection");
                }

                Metadata other = new Metadata();
                other.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                        "Bearer " + tokens.sign(Tokens.serviceAccount("kube-system", "admin")));
                Object denied = XdsAuthTest.firstAnswer(
                        ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(other)), node);
                assertEquals(Status.Code.PERMISSION_DENIED, ((Status) denied).getCode(), String.valueOf(denied));
            } finally {
                ch.shutdownNow();
                ch.awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void meshCaCertificatesJoinTheTrustBundleButDoNotAuthenticateCallers(String transport, @TempDir Path dir)
            throws Exception {
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        ossl.root("extra", "Extra Root", "ec");
        Files.createDirectories(dir.resolve("config"));
        String extra = ossl.read("extra-cert.pem");
        StringBuilder mesh = new StringBuilder("caCertificates:\n- pem: |\n");
        extra.lines().forEach(l -> mesh.append("    ").append(l).append('\n'));
        Files.writeString(dir.resolve("mesh"), mesh);
        // a workload certificate from that CA, for a mesh identity
        ossl.run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "w.key", "-out", "w.csr", "-subj", "/O=w", "-addext",
                "subjectAltName=URI:spiffe://cluster.local/ns/default/sa/bookinfo");
        ossl.run("x509", "-req", "-in", "w.csr", "-CA", "extra-cert.pem", "-CAkey", "extra-key.pem",
                "-set_serial", "7", "-days", "1", "-copy_extensions", "copy", "-out", "w.pem");
        try (MeshPilotServer server = TestServers.start(dir, "--grpcTransport", transport)) {
            TrustBundle bundle = server.server().components().certificates().trustBundle();
            assertEquals(2, bundle.certificates().size(), bundle.sources().toString());
            assertEquals(List.of("ca", "meshConfig.caCertificates[0]"), bundle.sources());
            assertEquals(CertificateServiceTest.parse(extra), bundle.certificates().get(1));
            assertNotEquals(bundle.certificates().get(0), bundle.certificates().get(1));
            assertTrue(bundle.pem().contains(Pem.certificate(bundle.certificates().get(1)).trim()));

            // istiod's peer verifier trusts the CA's roots only: a caller holding that
            // certificate is no one (its certificate is not even asked for)
            ManagedChannel ch = CaClient.channel(server.ports().get("grpc-secure"), List.of(bundle.certificates().get(0)),
                    ossl.dir().resolve("w.pem"), ossl.dir().resolve("w.key"));
            try {
                Object r = CaClient.create(ch, null, CaClient.request(ossl.ecCsr("x", "prime256v1", null), 0));
                assertEquals(Status.Code.UNAUTHENTICATED, CaClient.code(r), String.valueOf(r));
            } finally {
                ch.shutdownNow();
            }
        }
    }

    @Test
    void aSelfSignedRootInItsGracePeriodIsRotatedWithTheSameKeyAndTheOldRootStaysTrusted(@TempDir Path dir)
            throws Exception {
        Files.createDirectories(dir.resolve("config"));
        // a 30 s root (150 s counting the 2-minute backdating) checked every second, due with less
        // than 90% of its life left: rotated at the first check
        try (MeshPilotServer server = TestServers.start(dir, Map.of("CITADEL_SELF_SIGNED_CA_CERT_TTL", "30s",
                "CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL", "1s",
                "CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE", "90"))) {
            IstiodCertificates certs = server.server().components().certificates();
            X509Certificate first = certs.material().root();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (certs.material().root().equals(first) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            X509Certificate rotated = certs.material().root();
            assertNotEquals(first, rotated, "rotated in its grace period");
            assertEquals(first.getPublicKey(), rotated.getPublicKey(), "with the same key");
            assertTrue(certs.trustBundle().certificates().containsAll(List.of(rotated, first)),
                    "both roots are trusted until workloads have new certificates");
            // istiod's certificate is re-issued under the new root, and a client trusting only it connects
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (certs.serving().chain().getLast().equals(first) && System.nanoTime() < until) {
                Thread.sleep(100);
            }
            X509Certificate servedRoot = certs.serving().chain().getLast();
            assertNotEquals(first, servedRoot, "the serving certificate was re-issued under a rotated root");
            presentedChain(server.ports().get("grpc-secure"), servedRoot);
            X509Certificate stored = SelfSignedCaStore.loadOrCreate(dir.resolve("ca"),
                    SelfSignedOptions.defaults(), Clock.systemUTC()).root();
            assertNotEquals(first, stored, "a restart loads a rotated root");
            assertEquals(first.getPublicKey(), stored.getPublicKey());
        }
    }
}
