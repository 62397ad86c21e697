package io.meshpilot.xds;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WorkloadChannels;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A BackendTLSPolicy whose CA is a ConfigMap, end to end in Kubernetes mode: kubectl applies
 * the Gateway API's BackendTLSPolicy CRD, a Service {@code payments} in {@code shop}, a
 * ConfigMap with the server's CA in {@code ca.crt} and the policy; a whole MeshPilot server
 * reads them through its informers. A sidecar of {@code shop} gets the Service's cluster with
 * SIMPLE TLS, the policy's SNI and SAN, and a validation context asked of istiod over ADS as
 * {@code configmap://shop/payments-ca-cacert} (istiod's ConstructSdsSecretConfigForCredential);
 * asking for it over SDS on the secure port gives the ConfigMap's certificate (istiod's
 * GetConfigMapCaCert), and replacing the ConfigMap with kubectl pushes the new one.
 */
class BackendTlsConfigMapCaTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final Path CRDS = Path.of("src/test/resources/kube/gateway-api/standard");
    static final String CLUSTER = "outbound|443||payments.shop.svc.cluster.local";
    static final String CA_RESOURCE = "configmap://shop/payments-ca-cacert";
    static final String IDENTITY = "spiffe://cluster.local/ns/shop/sa/web";
    static final Map<String, String> METADATA = Map.of("NAMESPACE", "shop", "ISTIO_VERSION", "1.26.0");

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;
    static TestCredentials.Pem2 ca;

    static String configMap(String name, String key, String pem) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: %s, namespace: shop}
                data:
                  %s: |
                %s""".formatted(name, key, pem.indent(4));
    }

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH: the objects cannot be applied as in a cluster");
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = new Kubectl(binary.get(), api.writeKubeconfig(dir), dir.resolve("kubectl"));
        kubectl.run("create", "-f", CRDS.resolve("gateway.networking.k8s.io_backendtlspolicies.yaml").toAbsolutePath()
                .toString()).ok();
        for (String ns : List.of("istio-system", "shop")) {
            kubectl.run("create", "namespace", ns).ok();
        }
        ca = selfSigned("payments.example.com");
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Service
                metadata: {name: payments, namespace: shop}
                spec:
                  ports: [{name: https, port: 443, targetPort: 8443}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: BackendTLSPolicy
                metadata: {name: payments-tls, namespace: shop}
                spec:
                  targetRefs: [{group: "", kind: Service, name: payments}]
                  validation:
                    caCertificateRefs: [{group: "", kind: ConfigMap, name: payments-ca}]
                    hostname: payments.example.com
                    subjectAltNames: [{type: Hostname, hostname: payments.example.com}]
                ---
                """ + configMap("payments-ca", "ca.crt", ca.cert()), "apply", "-f", "-").ok();
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, api.writeKubeconfig(dir)), Map.of()));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    static AdsClient sidecar() throws Exception {
        return new AdsClient(WorkloadChannels.secureXds(server, IDENTITY), "sidecar~10.1.0.21~web-1.shop~shop.svc.cluster.local",
                METADATA);
    }

    static String trustedCa(Secret s) {
        return s.getValidationContext().getTrustedCa().getInlineBytes().toString(StandardCharsets.US_ASCII);
    }

    @Test
    void theSidecarVerifiesTheServiceWithTheConfigMapsCaAndGetsItAgainWhenItChanges() throws Exception {
        try (AdsClient web = sidecar()) {
            web.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = web.await(TypeUrls.CLUSTER, WAIT);
            while (!KubeGatewayCredentialsTest.cluster(cds, CLUSTER).hasTransportSocket()) {
                web.ack(cds, List.of()); // the generated DestinationRule is still on its way: its push follows
                cds = web.await(TypeUrls.CLUSTER, WAIT);
            }
            UpstreamTlsContext tls = KubeGatewayCredentialsTest.cluster(cds, CLUSTER).getTransportSocket().getTypedConfig()
                    .unpack(UpstreamTlsContext.class);
            assertEquals("payments.example.com", tls.getSni());
            CommonTlsContext.CombinedCertificateValidationContext validation =
                    tls.getCommonTlsContext().getCombinedValidationContext();
            assertEquals("payments.example.com", validation.getDefaultValidationContext().getMatchTypedSubjectAltNames(0)
                    .getMatcher().getExact());
            assertEquals(CA_RESOURCE, validation.getValidationContextSdsSecretConfig().getName());
            assertTrue(validation.getValidationContextSdsSecretConfig().getSdsConfig().hasAds(),
                    "asked of istiod over ADS, not of the agent: " + validation.getValidationContextSdsSecretConfig());
            web.ack(cds, List.of());

            web.subscribe(TypeUrls.SECRET, List.of(CA_RESOURCE));
            DiscoveryResponse sds = web.await(TypeUrls.SECRET, WAIT);
            assertEquals(ca.cert(), trustedCa(SdsTest.secrets(sds).get(CA_RESOURCE)), "the ConfigMap's ca.crt");
            web.ack(sds, List.of(CA_RESOURCE));

            TestCredentials.Pem2 renewed = selfSigned("payments.example.com");
            kubectl.runWithInput(configMap("payments-ca", "ca.crt", renewed.cert()), "apply", "-f", "-").ok();
            DiscoveryResponse pushed = web.await(TypeUrls.SECRET, WAIT);
            assertEquals(renewed.cert(), trustedCa(SdsTest.secrets(pushed).get(CA_RESOURCE)));
            web.ack(pushed, List.of(CA_RESOURCE));
            assertNull(web.error());
        }
    }

    @Test
    void aMissingOrKeylessConfigMapIsLoggedAndServesNothing() throws Exception {
        kubectl.runWithInput(configMap("no-ca", "other.pem", ca.cert()), "apply", "-f", "-").ok();
        try (CapturedLog log = new CapturedLog(SecretGenerator.class); AdsClient web = sidecar()) {
            web.subscribe(TypeUrls.SECRET, List.of("configmap://shop/absent-cacert", "configmap://shop/no-ca-cacert"));
            assertEquals(0, web.await(TypeUrls.SECRET, WAIT).getResourcesCount());
            assertTrue(log.has("WARNING", "failed to fetch ca certificate for configmap://shop/absent-cacert",
                    "configmap shop/absent not found"), String.valueOf(log.lines()));
            assertTrue(log.has("WARNING", "failed to fetch ca certificate for configmap://shop/no-ca-cacert",
                    "didn't have expected keys cacert or ca.crt; found: other.pem"), String.valueOf(log.lines()));
            assertNull(web.error());
        }
    }
}
