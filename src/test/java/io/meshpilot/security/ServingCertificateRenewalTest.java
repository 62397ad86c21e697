package io.meshpilot.security;

import io.meshpilot.security.istiod.IstiodCertificates;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsStream;
import io.meshpilot.testing.TestServers;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * istiod's serving certificate is renewed half way through its life and swapped on the
 * secure port: new handshakes see the new certificate, and a stream opened before the
 * renewal keeps working. Both gRPC transports, and the webhook listener.
 */
class ServingCertificateRenewalTest {
    static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void aRenewedCertificateReachesNewHandshakesWithoutDroppingOpenStreams(String transport, @TempDir Path dir)
            throws Exception {
        Files.createDirectories(dir.resolve("config"));
        // a 10 s serving certificate: renewed after about 5 s
        try (MeshPilotServer server = TestServers.start(dir, Map.of("DEFAULT_WORKLOAD_CERT_TTL", "10s", "XDS_AUTH", "false"),
                "--grpcTransport", transport)) {
            IstiodCertificates certs = server.server().components().certificates();
            X509Certificate root = certs.material().root();
            int port = server.ports().get("grpc-secure");
            BigInteger before = CaLifecycleTest.presentedChain(port, root).getFirst().getSerialNumber();
            assertEquals(certs.serving().certificate().getSerialNumber(), before);

            ManagedChannel ch = CaClient.channel(port, List.of(root), null, null);
            AdsStream stream = AdsStream.open(ch);
            try {
                Node node = Node.newBuilder().setId("sidecar~10.0.0.1~a.default~default.svc.cluster.local").build();
                stream.send(DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS).build());
                Object first = stream.next(20);
                assertTrue(first instanceof DiscoveryResponse, String.valueOf(first));

                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (certs.serving().certificate().getSerialNumber().equals(before) && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                BigInteger renewed = certs.serving().certificate().getSerialNumber();
                assertNotEquals(before, renewed, "renewed half way through its life");
                assertEquals(renewed, CaLifecycleTest.presentedChain(port, root).getFirst().getSerialNumber(),
                        "a new handshake gets the renewed certificate");
                assertEquals(renewed, CaLifecycleTest.presentedChain(server.ports().get("webhook"), root).getFirst()
                        .getSerialNumber(), "the webhook listener (Helidon's plain TLS socket) too");

                // the stream from before the renewal still answers
                DiscoveryResponse r = (DiscoveryResponse) first;
                stream.send(DiscoveryRequest.newBuilder().setTypeUrl(CDS).setResponseNonce(r.getNonce())
                        .setVersionInfo(r.getVersionInfo()).addResourceNames("outbound|80||other.default.svc.cluster.local")
                        .build());
                Object second = stream.next(20);
                assertTrue(second instanceof DiscoveryResponse, "the open stream kept working: " + second);
            } finally {
                stream.close();
                ch.shutdownNow();
            }
        }
    }
}
