package io.meshpilot.security.istiod;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.TrustingTls;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's serving certificate from files (the istio-csr / cert-manager path; I:
 * pilot/pkg/bootstrap/server.go initIstiodCerts, hasCustomTLSCerts, initFileCertificateWatches)
 * and its TLS flags on the secure gRPC port (cmd.go --tls-min-version, --tls-cipher-suites;
 * options.go TLSMinVersion, TLSCipherSuites), with real files, openssl-made certificates and a
 * JSSE client on 15012.
 */
class ServingCertificateFilesTest {

    /** A root and a leaf for istiod signed by it, as cert-manager would write them. */
    private static OpenSsl certificates(Path dir) throws Exception {
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        ossl.root("root", "cert-manager root", "ec");
        ossl.issue("istiod", "istiod.istio-system.svc", "ec", "root", "v3_leaf", 30);
        return ossl;
    }

    @Test
    void theFlagsCertificateIsPresentedOnTheSecurePortAndReloadedWhenItsFilesChange(@TempDir Path dir)
            throws Exception {
        OpenSsl ossl = certificates(dir);
        Path tls = Files.createDirectories(dir.resolve("tls"));
        Files.copy(ossl.dir().resolve("istiod-cert.pem"), tls.resolve("tls.crt"));
        Files.copy(ossl.dir().resolve("istiod-key.pem"), tls.resolve("tls.key"));
        Files.copy(ossl.dir().resolve("root-cert.pem"), tls.resolve("ca.crt"));
        X509Certificate root = parse(ossl.read("root-cert.pem"));
        Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, "--tlsCertFile", tls.resolve("tls.crt").toString(),
                "--tlsKeyFile", tls.resolve("tls.key").toString(), "--caCertFile", tls.resolve("ca.crt").toString())) {
            int port = server.ports().get("grpc-secure");
            assertEquals(parse(ossl.read("istiod-cert.pem")), handshake(port, root, "TLSv1.3", null).orElseThrow());
            // as istiod's caBundleWatcher fed from the files: the CA file is what workloads and the
            // webhooks' caBundle are told to trust, even with the CA server on
            String bundle = Http.get(server.ports().get("http"), "/api/v1/ca/trust-bundle").body();
            JsonObject trust = JsonParser.parseString(bundle).getAsJsonObject();
            assertEquals(List.of(root), parseAll(trust.get("pem").getAsString()), bundle);

            // cert-manager renews: a new key and certificate replace the files
            ossl.issue("renewed", "istiod.istio-system.svc", "ec", "root", "v3_leaf", 30);
            X509Certificate renewed = parse(ossl.read("renewed-cert.pem"));
            Path tmpKey = Files.copy(ossl.dir().resolve("renewed-key.pem"), tls.resolve(".tls.key.tmp"));
            Path tmpCert = Files.copy(ossl.dir().resolve("renewed-cert.pem"), tls.resolve(".tls.crt.tmp"));
            Files.move(tmpKey, tls.resolve("tls.key"), StandardCopyOption.ATOMIC_MOVE);
            Files.move(tmpCert, tls.resolve("tls.crt"), StandardCopyOption.ATOMIC_MOVE);
            Await.until("the renewed certificate on the secure port", Duration.ofSeconds(20),
                    () -> renewed.equals(handshake(port, root, "TLSv1.3", null).orElse(null)));
        }
    }

    @Test
    void tlsMinVersionAndCipherSuitesApplyToTheSecurePort(@TempDir Path dir) throws Exception {
        OpenSsl ossl = certificates(dir);
        X509Certificate root = parse(ossl.read("root-cert.pem"));
        Files.createDirectories(dir.resolve("config"));
        String[] files = {"--tlsCertFile", ossl.dir().resolve("istiod-cert.pem").toString(),
                "--tlsKeyFile", ossl.dir().resolve("istiod-key.pem").toString(),
                "--caCertFile", ossl.dir().resolve("root-cert.pem").toString()};
        try (MeshPilotServer server = TestServers.start(dir, concat(files, "--tls-min-version", "1.3"))) {
            int port = server.ports().get("grpc-secure");
            assertTrue(handshake(port, root, "TLSv1.3", null).isPresent(), "TLS 1.3");
            assertTrue(handshake(port, root, "TLSv1.2", null).isEmpty(), "TLS 1.2 refused under --tls-min-version 1.3");
        }
        try (MeshPilotServer server = TestServers.start(dir, concat(files,
                "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"))) {
            int port = server.ports().get("grpc-secure");
            assertTrue(handshake(port, root, "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256").isPresent(),
                    "the suite named");
            assertTrue(handshake(port, root, "TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384").isEmpty(),
                    "a suite not named");
            assertTrue(handshake(port, root, "TLSv1.3", null).isPresent(), "TLS 1.3 keeps its own suites, as Go");
        }
    }

    @Test
    void badTlsFlagsAreRefusedWithIstiodsMessages(@TempDir Path dir) {
        var e = assertThrows(IllegalArgumentException.class,
                () -> TestServers.args(TestServers.flags(dir, "--tls-min-version", "1.1"), Map.of()));
        assertEquals("--tls-min-version: minimum TLS version: 1.1 is not supported. Only 1.2 and 1.3 are supported",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TestServers.args(TestServers.flags(dir, "--tls-cipher-suites", "TLS_FAKE_SUITE"), Map.of()));
        assertEquals("--tls-cipher-suites: cipher suite TLS_FAKE_SUITE not supported or doesn't exist", e.getMessage());
    }

    @Test
    void filesAreFoundAsIstiodsHasCustomTlsCertsFindsThem(@TempDir Path dir) throws Exception {
        Path base = Files.createDirectories(dir.resolve("workdir"));
        ServerTlsOptions none = ServerTlsOptions.DEFAULTS;
        assertEquals(Optional.empty(), IstiodCertFiles.find(none, base));

        Path tls = Files.createDirectories(base.resolve("var/run/secrets/istiod/tls"));
        Files.writeString(tls.resolve("tls.crt"), "x");
        Files.writeString(tls.resolve("tls.key"), "x");
        assertEquals(Optional.empty(), IstiodCertFiles.find(none, base), "no CA file: not custom");
        Files.writeString(tls.resolve("ca.crt"), "x");
        assertEquals(Optional.of(new IstiodCertFiles(tls.resolve("tls.crt"), tls.resolve("tls.key"), tls.resolve("ca.crt"))),
                IstiodCertFiles.find(none, base), "the alternate CA path");
        Path ca = Files.createDirectories(base.resolve("var/run/secrets/istiod/ca"));
        Files.writeString(ca.resolve("root-cert.pem"), "x");
        assertEquals(Optional.of(new IstiodCertFiles(tls.resolve("tls.crt"), tls.resolve("tls.key"),
                ca.resolve("root-cert.pem"))), IstiodCertFiles.find(none, base), "ca/root-cert.pem first");

        ServerTlsOptions flags = new ServerTlsOptions("/f/ca.pem", "/f/cert.pem", "/f/key.pem", List.of(), "1.2");
        assertEquals(Optional.of(new IstiodCertFiles(Path.of("/f/cert.pem"), Path.of("/f/key.pem"), Path.of("/f/ca.pem"))),
                IstiodCertFiles.find(flags, base), "all three flags win");
        ServerTlsOptions partial = new ServerTlsOptions("", "/f/cert.pem", "/f/key.pem", List.of(), "1.2");
        assertEquals(Optional.of(new IstiodCertFiles(tls.resolve("tls.crt"), tls.resolve("tls.key"),
                ca.resolve("root-cert.pem"))), IstiodCertFiles.find(partial, base), "two flags of three: the well-known files");
    }

    @Test
    void aKeyThatIsNotTheCertificatesStopsStartUpNamingTheFile(@TempDir Path dir) throws Exception {
        OpenSsl ossl = certificates(dir);
        ossl.issue("other", "other", "ec", "root", "v3_leaf", 30);
        Files.createDirectories(dir.resolve("config"));
        var failure = assertThrows(MeshPilotServer.StartupFailure.class, () -> TestServers.start(dir,
                "--tlsCertFile", ossl.dir().resolve("istiod-cert.pem").toString(),
                "--tlsKeyFile", ossl.dir().resolve("other-key.pem").toString(),
                "--caCertFile", ossl.dir().resolve("root-cert.pem").toString()));
        assertTrue(String.valueOf(failure.getMessage()).contains("other-key.pem"), failure.getMessage());
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The leaf the secure port presents to a client trusting {@code root}, or empty when the handshake fails. */
    private static Optional<X509Certificate> handshake(int port, X509Certificate root, String protocol, String suite) {
        try {
            return tryHandshake(port, root, protocol, suite);
        } catch (Exception e) {
            throw new IllegalStateException("TLS client: " + e.getMessage(), e);
        }
    }

    private static Optional<X509Certificate> tryHandshake(int port, X509Certificate root, String protocol, String suite)
            throws Exception {
        SSLContext ctx = TrustingTls.trusting(root);
        try (SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
            var params = socket.getSSLParameters();
            params.setApplicationProtocols(new String[] {"h2"});
            params.setProtocols(new String[] {protocol});
            if (suite != null) {
                params.setCipherSuites(new String[] {suite});
            }
            socket.setSSLParameters(params);
            socket.startHandshake();
            return Optional.of((X509Certificate) socket.getSession().getPeerCertificates()[0]);
        } catch (SSLException e) {
            return Optional.empty();
        }
    }

    private static X509Certificate parse(String pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    private static List<X509Certificate> parseAll(String pem) throws Exception {
        var factory = CertificateFactory.getInstance("X.509");
        return factory.generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))).stream()
                .map(c -> (X509Certificate) c).toList();
    }
}
