package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.security.ca.Pem;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.keys.HmacKey;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CA over its real interface: CreateCertificate on the secure port of a running server,
 * CSRs made by openssl, tokens checked through JWT_RULE against a local key set, chains
 * checked by {@code openssl verify}, and a table of abuse cases of which none may issue.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CertificateServiceTest {
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";

    Path dir;
    OpenSsl openssl;
    Tokens tokens;
    MeshPilotServer server;
    ManagedChannel channel;
    X509Certificate root;

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        dir = tmp;
        openssl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        tokens = new Tokens("k1");
        Path jwks = Files.writeString(dir.resolve("jwks.json"), tokens.jwks());
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, Map.of("JWT_RULE", Tokens.rule(jwks)));
        root = server.server().components().certificates().material().root();
        openssl.write("root.pem", Pem.certificate(root));
        channel = CaClient.channel(server.ports().get("grpc-secure"), List.of(root), null, null);
    }

    @AfterAll
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
    }

    private String token() throws Exception {
        return tokens.sign(Tokens.serviceAccount("default", "bookinfo"));
    }

    @SuppressWarnings("unchecked")
    private List<String> issued(Object result) {
        assertTrue(result instanceof List, "expected a chain, got " + result);
        return (List<String>) result;
    }

    static X509Certificate parse(String pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    /** Writes leaf and intermediates and has openssl verify the leaf against the root alone. */
    private void opensslVerifies(List<String> chain, String name) {
        openssl.write(name + "-leaf.pem", chain.getFirst());
        List<String> args = new ArrayList<>(List.of("verify", "-CAfile", "root.pem"));
        if (chain.size() > 2) {
            openssl.write(name + "-intermediates.pem", String.join("", chain.subList(1, chain.size() - 1)));
            args.addAll(List.of("-untrusted", name + "-intermediates.pem"));
        }
        args.add(name + "-leaf.pem");
        String out = openssl.run(args.toArray(String[]::new));
        assertTrue(out.contains(name + "-leaf.pem: OK"), out);
    }

    @Test
    void opensslCsrsAuthenticatedByAJwtGetChainsOpensslAccepts() throws Exception {
        for (String kind : List.of("rsa", "ec")) {
            String csr = kind.equals("rsa") ? openssl.rsaCsr("w-" + kind, 2048, "URI:" + ID)
                    : openssl.ecCsr("w-" + kind, "prime256v1", null);
            long before = System.currentTimeMillis() / 1000;
            List<String> chain = issued(CaClient.create(channel, token(), CaClient.request(csr, 3600)));
            long after = System.currentTimeMillis() / 1000;
            assertTrue(chain.size() >= 2, "leaf and root: " + chain.size());
            assertEquals(root, parse(chain.getLast()), "the root is last");
            opensslVerifies(chain, kind);
            X509Certificate leaf = parse(chain.getFirst());
            assertEquals(List.of(List.of(6, ID)), new ArrayList<>(leaf.getSubjectAlternativeNames()).stream()
                    .map(l -> List.<Object>copyOf(l)).toList(), kind + ": the caller's identity is the only SAN");
            long notAfter = leaf.getNotAfter().getTime() / 1000;
            assertTrue(notAfter >= before + 3600 && notAfter <= after + 3600, kind + ": a 1 h TTL, notAfter " + notAfter);
            String text = openssl.run("x509", "-in", kind + "-leaf.pem", "-noout", "-text");
            assertTrue(text.contains("CA:FALSE") && text.contains("TLS Web Server Authentication")
                    && text.contains("TLS Web Client Authentication"), text);
        }
        assertTrue(IstioCounter.of("citadel_server_success_cert_issuance_count", "").value() >= 2);
    }

    @Test
    void aRequestedTtlOfZeroGetsTheDefault() throws Exception {
        String csr = openssl.ecCsr("default-ttl", "prime256v1", null);
        X509Certificate leaf = parse(issued(CaClient.create(channel, token(), CaClient.request(csr, 0))).getFirst());
        long hours = Duration.between(Instant.now(), leaf.getNotAfter().toInstant()).toHours();
        assertTrue(hours == 23 || hours == 24, "DEFAULT_WORKLOAD_CERT_TTL 24h: " + hours);
    }

    @Test
    void renewalIsAuthenticatedByTheClientCertificateAlone() throws Exception {
        String csr = openssl.ecCsr("first", "prime256v1", null);
        List<String> chain = issued(CaClient.create(channel, token(), CaClient.request(csr, 3600)));
        Path certFile = openssl.write("first-chain.pem", String.join("", chain.subList(0, chain.size() - 1)));
        ManagedChannel mtls = CaClient.channel(server.ports().get("grpc-secure"), List.of(root), certFile,
                openssl.dir().resolve("first.key"));
        try {
            String renewal = openssl.ecCsr("second", "prime256v1", null);
            List<String> renewed = issued(CaClient.create(mtls, null, CaClient.request(renewal, 1800)));
            opensslVerifies(renewed, "second");
            X509Certificate leaf = parse(renewed.getFirst());
            assertEquals(ID, leaf.getSubjectAlternativeNames().iterator().next().get(1));
            assertTrue(!leaf.getSerialNumber().equals(parse(chain.getFirst()).getSerialNumber()), "a new certificate");
        } finally {
            mtls.shutdownNow();
        }
    }

    /** One abuse case: how it is sent, and the status it must get. */
    record Abuse(String name, Status.Code expected, String messagePart, Call call) {
    }

    @FunctionalInterface
    interface Call {
        Object run() throws Exception;
    }

    @Test
    void abuseIsRefusedWithTheRightStatusAndNothingIsIssued() throws Exception {
        String goodCsr = openssl.ecCsr("abuse-good", "prime256v1", null);
        String otherSan = openssl.ecCsr("abuse-san", "prime256v1", "URI:spiffe://cluster.local/ns/kube-system/sa/admin");
        String dnsSan = openssl.ecCsr("abuse-dns", "prime256v1", "DNS:istiod.istio-system.svc");
        String rsa1024 = openssl.rsaCsr("abuse-1024", 1024, null);
        String p521 = openssl.ecCsr("abuse-p521", "secp521r1", null);
        String k256 = openssl.ecCsr("abuse-k256", "secp256k1", null);
        String ed25519 = openssl.csr("abuse-ed", "ed25519", null, null);
        String tampered = tamperSignature(goodCsr);
        Tokens otherIssuer = new Tokens("k1");
        JwtClaims expired = Tokens.serviceAccount("default", "bookinfo");
        expired.setExpirationTime(NumericDate.fromSeconds(System.currentTimeMillis() / 1000 - 3600));
        JwtClaims future = Tokens.serviceAccount("default", "bookinfo");
        future.setNotBefore(NumericDate.fromSeconds(System.currentTimeMillis() / 1000 + 3600));
        JwtClaims wrongIssuer = Tokens.serviceAccount("default", "bookinfo");
        wrongIssuer.setIssuer("https://evil.example");
        JwtClaims wrongAudience = Tokens.serviceAccount("default", "bookinfo");
        wrongAudience.setAudience("someone-else");
        JwtClaims noExp = Tokens.serviceAccount("default", "bookinfo");
        noExp.unsetClaim("exp");
        JwtClaims notAServiceAccount = Tokens.serviceAccount("default", "bookinfo");
        notAServiceAccount.setSubject("alice@example.com");
        var hs = new JsonWebSignature();
        hs.setPayload(Tokens.serviceAccount("default", "bookinfo").toJson());
        hs.setAlgorithmHeaderValue(AlgorithmIdentifiers.HMAC_SHA256);
        hs.setKey(new HmacKey(tokens.key.getPublicKey().getEncoded()));
        hs.setKeyIdHeaderValue("k1");
        hs.setDoKeyValidation(false);
        String hs256 = hs.getCompactSerialization();

        // a client certificate from another CA (trusted by nobody here)
        openssl.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "foreign.key", "-out", "foreign.pem", "-days", "1", "-subj", "/O=foreign",
                "-addext", "subjectAltName=URI:" + ID);
        // a certificate of ours without a SPIFFE identity: istiod's serving certificate
        ServingCertificate serving = server.server().components().certificates().serving();
        int secure = server.ports().get("grpc-secure");
        String validToken = token();

        List<Abuse> table = List.of(
                new Abuse("no credentials", Status.Code.UNAUTHENTICATED, "no credentials",
                        () -> CaClient.create(channel, null, CaClient.request(goodCsr, 0))),
                new Abuse("expired JWT", Status.Code.UNAUTHENTICATED, "expired",
                        () -> CaClient.create(channel, tokens.sign(expired), CaClient.request(goodCsr, 0))),
                new Abuse("not-yet-valid JWT", Status.Code.UNAUTHENTICATED, "",
                        () -> CaClient.create(channel, tokens.sign(future), CaClient.request(goodCsr, 0))),
                new Abuse("wrong-issuer JWT", Status.Code.UNAUTHENTICATED, "issuer",
                        () -> CaClient.create(channel, tokens.sign(wrongIssuer), CaClient.request(goodCsr, 0))),
                new Abuse("wrong-audience JWT", Status.Code.UNAUTHENTICATED, "audience",
                        () -> CaClient.create(channel, tokens.sign(wrongAudience), CaClient.request(goodCsr, 0))),
                new Abuse("bad-signature JWT (another key, same kid)", Status.Code.UNAUTHENTICATED, "signature",
                        () -> CaClient.create(channel, otherIssuer.sign(Tokens.serviceAccount("default", "bookinfo")),
                                CaClient.request(goodCsr, 0))),
                new Abuse("alg none JWT", Status.Code.UNAUTHENTICATED, "none",
                        () -> CaClient.create(channel, Tokens.unsigned(Tokens.serviceAccount("default", "bookinfo")),
                                CaClient.request(goodCsr, 0))),
                new Abuse("HS256 JWT keyed with the public key", Status.Code.UNAUTHENTICATED, "HS256",
                        () -> CaClient.create(channel, hs256, CaClient.request(goodCsr, 0))),
                new Abuse("JWT without exp", Status.Code.UNAUTHENTICATED, "",
                        () -> CaClient.create(channel, tokens.sign(noExp), CaClient.request(goodCsr, 0))),
                new Abuse("JWT without a service-account identity", Status.Code.UNAUTHENTICATED, "",
                        () -> CaClient.create(channel, tokens.sign(notAServiceAccount), CaClient.request(goodCsr, 0))),
                new Abuse("garbage bearer token", Status.Code.UNAUTHENTICATED, "",
                        () -> CaClient.create(channel, "not.a.token", CaClient.request(goodCsr, 0))),
                // the client offers no certificate the server's CA list does not name: no credentials
                new Abuse("client certificate from another CA", Status.Code.UNAUTHENTICATED, "no credentials",
                        () -> withChannel(CaClient.channel(secure, List.of(root), openssl.dir().resolve("foreign.pem"),
                                openssl.dir().resolve("foreign.key")), ch -> CaClient.create(ch, null, CaClient.request(goodCsr, 0)))),
                new Abuse("client certificate without a SPIFFE identity", Status.Code.UNAUTHENTICATED, "spiffe",
                        () -> withChannel(CaClient.channel(secure, List.of(root), serving),
                                ch -> CaClient.create(ch, null, CaClient.request(goodCsr, 0)))),
                new Abuse("CSR for someone else's SPIFFE identity", Status.Code.PERMISSION_DENIED, "",
                        () -> CaClient.create(channel, token(), CaClient.request(otherSan, 0))),
                new Abuse("CSR for istiod's DNS name", Status.Code.PERMISSION_DENIED, "",
                        () -> CaClient.create(channel, token(), CaClient.request(dnsSan, 0))),
                new Abuse("impersonation through metadata", Status.Code.UNAUTHENTICATED, "impersonation",
                        () -> CaClient.create(channel, token(), CaClient.request(goodCsr, 0).toBuilder()
                                .setMetadata(Struct.newBuilder().putFields("ImpersonatedIdentity",
                                        Value.newBuilder().setStringValue(
                                                "spiffe://cluster.local/ns/kube-system/sa/admin").build())).build())),
                new Abuse("malformed CSR", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(
                                "-----BEGIN CERTIFICATE REQUEST-----\nbm90IGEgY3Ny\n-----END CERTIFICATE REQUEST-----\n", 0))),
                new Abuse("empty CSR", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request("", 0))),
                new Abuse("a certificate instead of a CSR", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(openssl.read("foreign.pem"), 0))),
                new Abuse("CSR with a bad signature", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(tampered, 0))),
                new Abuse("RSA 1024 key", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(rsa1024, 0))),
                new Abuse("EC P-521 key", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(p521, 0))),
                new Abuse("EC secp256k1 key", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(k256, 0))),
                new Abuse("Ed25519 key", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(ed25519, 0))),
                new Abuse("TTL above MAX_WORKLOAD_CERT_TTL", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(goodCsr, Duration.ofDays(91).toSeconds()))),
                new Abuse("oversized CSR (100 KiB)", Status.Code.INVALID_ARGUMENT, "",
                        () -> CaClient.create(channel, token(), CaClient.request(goodCsr + "x".repeat(100 * 1024), 0))),
                new Abuse("oversized CSR (3 MiB, under gRPC's message limit)", Status.Code.INVALID_ARGUMENT, "larger than",
                        () -> CaClient.create(channel, token(), CaClient.request("x".repeat(3 * 1024 * 1024), 0))),
                new Abuse("on the plaintext port", Status.Code.UNIMPLEMENTED, "",
                        () -> withChannel(NettyChannelBuilder.forAddress("127.0.0.1", server.ports().get("grpc"))
                                .usePlaintext().build(), ch -> CaClient.create(ch, validToken, CaClient.request(goodCsr, 0)))));
        assertTrue(table.size() >= 25, "the issue asks for at least 25 cases");

        long issuedBefore = IstioCounter.of("citadel_server_success_cert_issuance_count", "").value();
        List<String> wrong = new ArrayList<>();
        for (Abuse a : table) {
            Object result = a.call().run();
            Status.Code code = CaClient.code(result);
            if (code != a.expected() || result instanceof Status s && !String.valueOf(s.getDescription()).contains(a.messagePart())) {
                wrong.add(a.name() + ": expected " + a.expected() + " '" + a.messagePart() + "', got " + result);
            }
        }
        assertEquals(List.of(), wrong);
        assertEquals(issuedBefore, IstioCounter.of("citadel_server_success_cert_issuance_count", "").value(),
                "nothing was issued");
        // and the service still works after all of that
        issued(CaClient.create(channel, token(), CaClient.request(goodCsr, 0)));
    }

    private static Object withChannel(ManagedChannel ch, Function<ManagedChannel, Object> use) {
        try {
            return use.apply(ch);
        } finally {
            ch.shutdownNow();
        }
    }

    /** The same CSR with one bit of its signature flipped. */
    private static String tamperSignature(String pem) {
        String b64 = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        byte[] der = Base64.getDecoder().decode(b64);
        der[der.length - 5] ^= 0x01; // inside the signature BIT STRING, which ends the structure
        return "-----BEGIN CERTIFICATE REQUEST-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END CERTIFICATE REQUEST-----\n";
    }

    @Test
    void theSecurePortPresentsIstiodsCertificateChainingToTheRoot() throws Exception {
        var factory = SSLContext.getInstance("TLS");
        var tm = TrustManagerFactory.getInstance("PKIX");
        var ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("root", root);
        tm.init(ks);
        factory.init(null, tm.getTrustManagers(), null);
        try (var socket = (SSLSocket) factory.getSocketFactory().createSocket("localhost",
                server.ports().get("grpc-secure"))) {
            var params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS"); // the name must match too
            params.setApplicationProtocols(new String[] {"h2"});
            socket.setSSLParameters(params);
            socket.startHandshake();
            X509Certificate leaf = (X509Certificate) socket.getSession().getPeerCertificates()[0];
            assertTrue(leaf.getSubjectAlternativeNames().stream().anyMatch(n -> n.get(1).equals("istiod.istio-system.svc")),
                    String.valueOf(leaf.getSubjectAlternativeNames()));
            leaf.verify(root.getPublicKey()); // issued by the self-signed root directly
        }
    }
}
