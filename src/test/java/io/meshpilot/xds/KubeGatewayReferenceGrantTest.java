package io.meshpilot.xds;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WorkloadChannels;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ReferenceGrant applied or deleted with kubectl reaches the gateway proxy by itself, as in
 * istiod: a Gateway listener whose certificate is a Secret of another namespace is refused
 * without a grant (conversion.go buildTLS: RefNotPermitted; the listener is not valid, and
 * controller.go's GatewayConfigs serve only valid ones, so no Istio Gateway is served for it), and SDS refuses the name (sds.go filterAuthorizedResources: not a
 * verified certificate reference). Applying the grant converts the listener again with
 * {@code credentialName: kubernetes-gateway://certs/shop-cert}: the config change pushes the
 * listener, the proxy asks for the name and gets the certificate. Deleting the grant withdraws the
 * listener and SDS refuses the name again. The test changes nothing but the grant.
 *
 * <p>A manual Gateway (a Hostname address) served by the Service {@code edge}, whose one
 * endpoint is the gateway pod.
 */
class KubeGatewayReferenceGrantTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final Path CRDS = Path.of("src/test/resources/kube/gateway-api/standard");
    static final String CREDENTIAL = "kubernetes-gateway://certs/shop-cert";
    static final String POD_IP = "10.1.0.50";
    static final String HTTPS_LISTENER = "0.0.0.0_443";

    static final String GATEWAY = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata: {name: web, namespace: shop}
            spec:
              gatewayClassName: istio
              addresses: [{type: Hostname, value: edge.shop.svc.cluster.local}]
              listeners:
              - name: https
                hostname: shop.example.com
                port: 443
                protocol: HTTPS
                tls:
                  certificateRefs: [{name: shop-cert, namespace: certs}]
            """;

    static final String GRANT = """
            apiVersion: gateway.networking.k8s.io/v1beta1
            kind: ReferenceGrant
            metadata: {name: shop-gateways, namespace: certs}
            spec:
              from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: shop}]
              to: [{group: "", kind: Secret}]
            """;

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;
    static TestCredentials.Pem2 certificate;

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        kubectl.run("create", "-f", CRDS.toAbsolutePath().toString()).ok();
        for (String ns : List.of("istio-system", "shop", "certs")) {
            kubectl.run("create", "namespace", ns).ok();
        }
        certificate = selfSigned("shop.example.com");
        kubectl.runWithInput(tlsSecret("certs", "shop-cert", certificate.cert(), certificate.key(), null)
                + "---\n" + KubeGammaRoutesTest.serviceWithEndpoint("shop", "edge", "https", 443, POD_IP, 443)
                + GATEWAY, "apply", "-f", "-").ok();
        server = TestServers.startKubernetes(dir, api.writeKubeconfig(dir));
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

    /** The gateway pod's proxy ({@code edge-0}, service account default), on 15012 with its identity. */
    static AdsClient gatewayProxy() throws Exception {
        return new AdsClient(WorkloadChannels.secureXds(server, "spiffe://cluster.local/ns/shop/sa/default"),
                "router~" + POD_IP + "~edge-0.shop~shop.svc.cluster.local",
                Map.of("NAMESPACE", "shop", "ISTIO_VERSION", "1.26.0"));
    }

    /** The ResolvedRefs reason of the Gateway's listener as the status leader wrote it, or "". */
    static String listenerResolvedRefs() {
        JsonObject gateway = JsonParser.parseString(kubectl.run("get", "gateway", "web", "-n", "shop", "-o", "json")
                .ok().stdout()).getAsJsonObject();
        JsonObject status = gateway.getAsJsonObject("status");
        if (status == null || !status.has("listeners")) {
            return "";
        }
        JsonObject condition = GatewayApiEndToEndTest.condition(status.getAsJsonArray("listeners").get(0)
                .getAsJsonObject(), "ResolvedRefs");
        return condition == null ? "" : condition.get("reason").getAsString();
    }

    /**
     * The listener answers on {@code gw} until one's 443 listener is as {@code expected} wants it
     * (each acked, as Envoy does); null when it is absent.
     */
    static Listener awaitHttpsListener(AdsClient gw, Predicate<Listener> expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            DiscoveryResponse lds = gw.await(TypeUrls.LISTENER, WAIT);
            gw.ack(lds, List.of());
            Listener https = GatewayApiEndToEndTest.listener(lds, HTTPS_LISTENER);
            if (expected.test(https)) {
                return https;
            }
        }
        throw new AssertionError("no listener answer as expected within " + WAIT);
    }

    /** What a fresh SDS request of the gateway proxy for the Secret gets: the names served. */
    static List<String> askForTheSecret() throws Exception {
        try (AdsClient sds = gatewayProxy()) {
            sds.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL));
            return List.copyOf(SdsTest.secrets(sds.await(TypeUrls.SECRET, WAIT)).keySet());
        }
    }

    @Test
    void aReferenceGrantAppliedOrDeletedWithKubectlReachesTheGatewayProxyByItself() throws Exception {
        Await.until("the listener's certificate refused", WAIT, () -> listenerResolvedRefs().equals("RefNotPermitted"));
        try (AdsClient gw = gatewayProxy()) {
            gw.subscribe(TypeUrls.LISTENER, List.of());
            assertNull(awaitHttpsListener(gw, https -> true),
                    "istiod serves no Istio Gateway for a listener whose only certificate is refused");
            try (CapturedLog log = new CapturedLog(SecretGenerator.class)) {
                assertEquals(List.of(), askForTheSecret(), "refused without a grant");
                assertTrue(log.has("attempted to access unauthorized certificates " + CREDENTIAL,
                        "a cross namespace secret reference requires ReferenceGrant"), log.lines().toString());
            }

            kubectl.runWithInput(GRANT, "apply", "-f", "-").ok();
            Listener https = awaitHttpsListener(gw, l -> l != null);
            assertEquals(CREDENTIAL, KubeGatewayCredentialsTest.listenerCredential(https));
            gw.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL)); // what Envoy asks for the new listener
            DiscoveryResponse sds = gw.await(TypeUrls.SECRET, WAIT);
            assertEquals(certificate.cert(), KubeGatewayCredentialsTest.certificateOf(SdsTest.secrets(sds).get(CREDENTIAL)),
                    "the grant lets the Gateway in shop read certs/shop-cert");
            gw.ack(sds, List.of(CREDENTIAL));
            Await.until("the listener's references resolved", WAIT, () -> listenerResolvedRefs().equals("ResolvedRefs"));

            kubectl.run("delete", "referencegrant", "shop-gateways", "-n", "certs").ok();
            assertNull(awaitHttpsListener(gw, l -> l == null), "the listener withdrawn");
            assertEquals(List.of(), askForTheSecret(), "refused again without the grant");
            assertNull(gw.error());
        }
    }
}
