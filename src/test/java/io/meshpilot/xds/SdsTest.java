package io.meshpilot.xds;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static io.meshpilot.security.credentials.TestCredentials.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SDS over a real ADS stream: a gateway (router proxy) in istio-system gets its credentialName Secrets. */
class SdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    /** Long enough for a push the pipeline would have made (debounce 100 ms) to arrive. */
    static final Duration NOTHING_MORE = Duration.ofMillis(1500);
    static final String CRED = "kubernetes://bookinfo-cred";
    static final String CACERT = "kubernetes://bookinfo-cred-cacert";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;
    static TestCredentials.Pem2 gateway;
    static TestCredentials.Pem2 root;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        gateway = selfSigned("bookinfo.example.com");
        root = selfSigned("Bookinfo Root CA");
        write(dir.resolve("credentials"), "bookinfo-cred.yaml",
                tlsSecret("istio-system", "bookinfo-cred", gateway.cert(), gateway.key(), root.cert()));
        var other = selfSigned("other.example.com");
        write(dir.resolve("credentials"), "other.yaml", tlsSecret("bookinfo", "other-cred", other.cert(), other.key(), null));
        server = TestServers.start(dir);
        grpc = server.ports().get("grpc");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static AdsClient gateway(String pod) {
        return new AdsClient(grpc, "router~10.0.0.9~" + pod + ".istio-system~istio-system.svc.cluster.local",
                Map.of("NAMESPACE", "istio-system", "ISTIO_VERSION", "1.26.0"));
    }

    static Map<String, Secret> secrets(DiscoveryResponse r) throws Exception {
        Map<String, Secret> out = new TreeMap<>();
        for (Any a : r.getResourcesList()) {
            Secret s = a.unpack(Secret.class);
            out.put(s.getName(), s);
        }
        return out;
    }

    static String text(com.google.protobuf.ByteString b) {
        return b.toString(StandardCharsets.US_ASCII);
    }

    @Test
    void aGatewayGetsItsCertificateKeyAndCaAndAChangeIsPushedAsSdsOnly() throws Exception {
        try (AdsClient c = gateway("ingress-1")) {
            c.subscribe(TypeUrls.CLUSTER, List.of());
            c.ack(c.await(TypeUrls.CLUSTER, WAIT), List.of());
            c.subscribe(TypeUrls.SECRET, List.of(CRED, CACERT));
            DiscoveryResponse r = c.await(TypeUrls.SECRET, WAIT);
            Map<String, Secret> got = secrets(r);
            assertEquals(List.of(CRED, CACERT).stream().sorted().toList(), List.copyOf(got.keySet()));
            Secret tls = got.get(CRED);
            assertEquals(gateway.cert(), text(tls.getTlsCertificate().getCertificateChain().getInlineBytes()));
            assertEquals(gateway.key(), text(tls.getTlsCertificate().getPrivateKey().getInlineBytes()));
            assertFalse(tls.hasValidationContext());
            assertEquals(root.cert(), text(got.get(CACERT).getValidationContext().getTrustedCa().getInlineBytes()));
            assertFalse(got.get(CACERT).hasTlsCertificate());
            c.ack(r, List.of(CRED, CACERT));

            // the config dump shows the secret, never its key
            String dump = server.bean(DiscoveryServer.class).configDump(
                    "router~10.0.0.9~ingress-1.istio-system~istio-system.svc.cluster.local").orElseThrow();
            assertTrue(dump.contains("sds") && dump.contains("[redacted]"), dump);
            assertFalse(dump.contains(java.util.Base64.getEncoder().encodeToString(
                    gateway.key().getBytes(StandardCharsets.US_ASCII))), "no private key in the dump");

            // a new certificate in the file: SDS is pushed, nothing else
            var renewed = selfSigned("bookinfo.example.com");
            write(dir.resolve("credentials"), "bookinfo-cred.yaml",
                    tlsSecret("istio-system", "bookinfo-cred", renewed.cert(), renewed.key(), root.cert()));
            DiscoveryResponse pushed = c.next(WAIT);
            assertTrue(pushed != null && pushed.getTypeUrl().equals(TypeUrls.SECRET), "an SDS push: " + pushed);
            Map<String, Secret> now = secrets(pushed);
            assertEquals(renewed.cert(), text(now.get(CRED).getTlsCertificate().getCertificateChain().getInlineBytes()));
            assertEquals(renewed.key(), text(now.get(CRED).getTlsCertificate().getPrivateKey().getInlineBytes()));
            assertEquals(root.cert(), text(now.get(CACERT).getValidationContext().getTrustedCa().getInlineBytes()));
            c.ack(pushed, List.of(CRED, CACERT));
            assertNull(c.next(NOTHING_MORE), "no CDS (or other) push for a credential change");
            assertTrue(server.bean(CredentialsController.class).exists("istio-system", "bookinfo-cred"));
            assertNull(c.error());
        }
    }

    @Test
    void anotherNamespacesOrAMissingSecretIsLeftOutAndCounted() throws Exception {
        long errorsBefore = SecretGenerator.CERTIFICATE_ERRORS.value();
        try (AdsClient c = gateway("ingress-2")) {
            c.subscribe(TypeUrls.SECRET, List.of("kubernetes://bookinfo/other-cred", "kubernetes://missing",
                    "kubernetes://missing-cacert", "file-cert:/etc/certs/cert.pem"));
            DiscoveryResponse r = c.await(TypeUrls.SECRET, WAIT);
            assertEquals(0, r.getResourcesCount(), r.toString());
            // one for the other namespace, one per missing name, one for the name that is not kubernetes://
            assertEquals(4, SecretGenerator.CERTIFICATE_ERRORS.value() - errorsBefore);

            // its own namespace, spelled out, is fine
            c.subscribe(TypeUrls.SECRET, List.of("kubernetes://istio-system/bookinfo-cred"));
            Map<String, Secret> got = secrets(c.await(TypeUrls.SECRET, WAIT));
            assertEquals(List.of("kubernetes://istio-system/bookinfo-cred"), List.copyOf(got.keySet()));
            assertTrue(got.values().iterator().next().hasTlsCertificate());
        }
        assertTrue(server.bean(CredentialsController.class).exists("bookinfo", "other-cred"),
                "it exists, the proxy just may not have it");
    }
}
