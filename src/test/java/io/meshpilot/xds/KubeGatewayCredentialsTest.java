package io.meshpilot.xds;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.InjectWebhookCalls;
import io.meshpilot.testing.IstioGatewayChart;
import io.meshpilot.testing.ProxyAgentNode;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WorkloadChannels;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.testing.kube.SubjectAccessReviews;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
 * Issue 31, acceptance 1: HTTPS at the edge of a cluster, end to end. Istio's {@code istio/gateway}
 * chart is rendered by Helm (helm-java) for the release {@code shop-gateway} in {@code edge} and
 * applied with kubectl to the API server stand-in; a pod of its Deployment goes through the
 * server's {@code /inject} webhook over HTTPS as the API server sends it, and the injected pod is
 * created with kubectl. Real kubectl also applies an Istio Gateway in {@code edge} with
 * {@code tls.credentialName: shop-cert}, a {@code kubernetes.io/tls} Secret and bookinfo's
 * VirtualService; a whole MeshPilot server in Kubernetes mode reads them through its
 * informers. The gateway proxy of that pod (its node id and metadata as istio-agent makes them
 * from the injected container: {@link ProxyAgentNode}) connects on the secure port over real TLS
 * with a workload certificate from the server's CA for its service account's identity
 * {@code spiffe://cluster.local/ns/edge/sa/shop-gateway} and gets its listener on 443 and the
 * Secret's certificate over SDS; replacing the Secret with kubectl pushes the new one to it
 * alone. Refusals as istiod's: a Secret of another namespace, or one of its own namespace when
 * RBAC (a SubjectAccessReview) does not let its service account read secrets; bad Secrets are
 * reported with the reason while the last good ones stay served.
 *
 * <p>Other gateway connections are pods of the same template ({@link ProxyAgentNode#sibling}).
 */
class KubeGatewayCredentialsTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final Duration NOTHING_MORE = SdsTest.NOTHING_MORE;
    static final String IDENTITY = "spiffe://cluster.local/ns/edge/sa/shop-gateway";
    static final String USER = "system:serviceaccount:edge:shop-gateway";
    static final String CREDENTIAL = "kubernetes://shop-cert";
    /** Where the credentials controllers log (by package: the Kubernetes one is new with this test). */
    static final String CREDENTIALS_LOGGER = "io.meshpilot.security.credentials";
    static final Path BOOKINFO_GATEWAY = GoldenConfigTest.GOLDEN.resolve("samples/bookinfo-gateway.yaml");

    /** The chart's release: the gateway's Deployment, service account and {@code istio} label. */
    static final String RELEASE = "shop-gateway";
    static final String POD_IP = "10.1.0.9";

    /** bookinfo's Gateway made HTTPS on 443 with the Secret shop-cert, for the chart's gateway (its label istio: shop-gateway). */
    static final String HTTPS_GATEWAY = """
            apiVersion: networking.istio.io/v1
            kind: Gateway
            metadata: {name: bookinfo-gateway, namespace: edge}
            spec:
              selector: {istio: shop-gateway}
              servers:
              - port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: SIMPLE, credentialName: shop-cert}
            """;

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;
    static TestCredentials.Pem2 first;
    /** The chart's pod as the API server stored it after injection. */
    static JsonObject gatewayPod;
    static ProxyAgentNode gatewayNode;

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH: the objects cannot be applied as in a cluster");
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = new Kubectl(binary.get(), api.writeKubeconfig(dir), dir.resolve("kubectl"));
        for (String ns : List.of("istio-system", "edge", "shop")) {
            kubectl.run("create", "namespace", ns).ok();
        }
        IstioGatewayChart chart = IstioGatewayChart.render(RELEASE, "edge");
        for (JsonObject manifest : chart.manifests()) {
            kubectl.runWithInput(manifest.toString(), "apply", "-f", "-").ok();
        }
        grantTheChartsRole(chart);
        first = selfSigned("shop.example.com");
        kubectl.runWithInput(tlsSecret("edge", "shop-cert", first.cert(), first.key(), null), "apply", "-f", "-").ok();
        kubectl.run("apply", "-n", "edge", "-f", BOOKINFO_GATEWAY.toString()).ok(); // bookinfo's VirtualService
        kubectl.runWithInput(HTTPS_GATEWAY, "apply", "-f", "-").ok();
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, api.writeKubeconfig(dir)), Map.of()));
        gatewayPod = createThroughInjection(chart.pod("7d9f8c6b5"));
        gatewayNode = ProxyAgentNode.of(gatewayPod, POD_IP);
    }

    /**
     * The stand-in answers SubjectAccessReviews from its grants, not from RBAC objects: grants
     * what the chart's Role allows in its namespace to the service account its RoleBinding names
     * (istiod asks {@code list secrets}).
     */
    static void grantTheChartsRole(IstioGatewayChart chart) {
        JsonObject binding = chart.get("RoleBinding", RELEASE);
        assertEquals(RELEASE, binding.getAsJsonObject("roleRef").get("name").getAsString());
        String user = "system:serviceaccount:edge:"
                + binding.getAsJsonArray("subjects").get(0).getAsJsonObject().get("name").getAsString();
        assertEquals(USER, user);
        for (JsonElement rule : chart.get("Role", RELEASE).getAsJsonArray("rules")) {
            for (JsonElement resource : rule.getAsJsonObject().getAsJsonArray("resources")) {
                for (JsonElement verb : rule.getAsJsonObject().getAsJsonArray("verbs")) {
                    api.accessReviews().allow(user, verb.getAsString(), resource.getAsString(), "edge");
                }
            }
        }
    }

    /**
     * What the API server does with the pod a ReplicaSet asks for: the AdmissionReview to the
     * injection webhook over HTTPS (trusting the server's CA root for istiod's Service name),
     * the returned JSON Patch applied, the result created (its name generated) and read back.
     */
    static JsonObject createThroughInjection(JsonObject pod) throws Exception {
        HttpClient client = InjectWebhookCalls.tlsClientFor(server, "istiod.istio-system.svc");
        JsonObject response = InjectWebhookCalls.response(InjectWebhookCalls.post(client, server.ports().get("webhook"),
                "/inject", "application/json", InjectWebhookCalls.review("gateway-pod-1", "edge", pod)));
        assertTrue(response.get("allowed").getAsBoolean(), response.toString());
        JsonObject injected = InjectWebhookCalls.admitted(pod, response);
        String created = kubectl.runWithInput(injected.toString(), "create", "-f", "-", "-o", "name").ok().stdout().trim();
        return JsonParser.parseString(kubectl.run("get", "-n", "edge", created, "-o", "json").ok().stdout())
                .getAsJsonObject();
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

    /** The chart pod's gateway proxy, connecting with its service account's identity as its agent does. */
    static AdsClient chartGateway() throws Exception {
        return connect(gatewayNode, gatewayPod.getAsJsonObject("spec").get("serviceAccountName").getAsString());
    }

    /** Another pod {@code pod} of the chart's pod template running as {@code serviceAccount}, connecting with its identity. */
    static AdsClient gateway(String pod, String serviceAccount) throws Exception {
        return connect(gatewayNode.sibling(pod, "10.1.0.10", serviceAccount), serviceAccount);
    }

    static AdsClient connect(ProxyAgentNode node, String serviceAccount) throws Exception {
        return new AdsClient(WorkloadChannels.secureXds(server, "spiffe://cluster.local/ns/edge/sa/" + serviceAccount),
                node.nodeId(), node.metadata());
    }

    @Test
    void theChartsPodIsInjectedWithTheGatewayTemplateAndItsProxyIsTheGatewaysNode() {
        JsonObject proxy = ProxyAgentNode.istioProxy(gatewayPod);
        String image = proxy.get("image").getAsString();
        JsonObject global = InjectionValues.defaults().get("global").getAsJsonObject();
        assertEquals(global.get("hub").getAsString() + "/proxyv2:" + global.get("tag").getAsString(), image,
                "image: auto resolved");
        assertEquals(List.of("proxy", "router"), proxy.getAsJsonArray("args").asList().stream().limit(2)
                .map(e -> e.getAsString()).toList());
        assertEquals(1, gatewayPod.getAsJsonObject("spec").getAsJsonArray("containers").size(),
                "the gateway template fills in the chart's container, adds none");
        assertEquals(RELEASE, gatewayPod.getAsJsonObject("spec").get("serviceAccountName").getAsString());
        assertTrue(gatewayPod.getAsJsonObject("metadata").get("name").getAsString().startsWith(RELEASE + "-7d9f8c6b5-"));
        assertEquals("router~" + POD_IP + "~" + gatewayPod.getAsJsonObject("metadata").get("name").getAsString()
                + ".edge~edge.svc.cluster.local", gatewayNode.nodeId());
        JsonObject labels = JsonParser.parseString(gatewayNode.metadata().get("LABELS")).getAsJsonObject();
        assertEquals("shop-gateway", labels.get("istio").getAsString(), "the Gateway's selector label: " + labels);
        assertEquals("shop-gateway", labels.get("app").getAsString());
        assertFalse(labels.has("pod-template-hash"), "the agent leaves it out");
        assertEquals(RELEASE, gatewayNode.metadata().get("WORKLOAD_NAME"), "ISTIO_META_WORKLOAD_NAME: " + gatewayNode);
        assertEquals("kubernetes://apis/apps/v1/namespaces/edge/deployments/" + RELEASE,
                gatewayNode.metadata().get("OWNER"), "ISTIO_META_OWNER");
        JsonObject proxyConfig = JsonParser.parseString(gatewayNode.metadata().getOrDefault("PROXY_CONFIG", "{}"))
                .getAsJsonObject();
        assertEquals("istiod.istio-system.svc:15012", proxyConfig.has("discoveryAddress")
                ? proxyConfig.get("discoveryAddress").getAsString() : null,
                "the agent's effective ProxyConfig (what makes the node istio-proxy): " + gatewayNode);
    }

    static Map<String, Secret> secrets(DiscoveryResponse r) throws Exception {
        return SdsTest.secrets(r);
    }

    static String certificateOf(Secret s) {
        return s.getTlsCertificate().getCertificateChain().getInlineBytes().toString(StandardCharsets.US_ASCII);
    }

    /** The SDS name the listener's first TLS filter chain takes its certificate from. */
    static String listenerCredential(Listener l) throws Exception {
        for (var chain : l.getFilterChainsList()) {
            if (chain.hasTransportSocket()) {
                Any typed = chain.getTransportSocket().getTypedConfig();
                return typed.unpack(DownstreamTlsContext.class).getCommonTlsContext()
                        .getTlsCertificateSdsSecretConfigs(0).getName();
            }
        }
        return null;
    }

    @Test
    void theGatewayGetsItsListenerOn443AndTheSecretsCertificateAndAReplacementIsPushedToItAlone() throws Exception {
        try (AdsClient gw = chartGateway();
             AdsClient bystander = gateway("shop-gateway-7d9f8c6b5-zz9kq", "shop-gateway")) {
            gw.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = gw.await(TypeUrls.LISTENER, WAIT);
            Listener https = null;
            for (Any a : lds.getResourcesList()) {
                Listener l = a.unpack(Listener.class);
                if (l.getName().equals("0.0.0.0_443")) {
                    https = l;
                }
            }
            assertTrue(https != null, "a listener on 443: " + lds.getResourcesList().size() + " listeners");
            assertEquals(CREDENTIAL, listenerCredential(https));
            gw.ack(lds, List.of());

            gw.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL));
            DiscoveryResponse sds = gw.await(TypeUrls.SECRET, WAIT);
            assertEquals(first.cert(), certificateOf(secrets(sds).get(CREDENTIAL)));
            gw.ack(sds, List.of(CREDENTIAL));
            // another gateway of the namespace that holds no Secret
            bystander.subscribe(TypeUrls.LISTENER, List.of());
            bystander.ack(bystander.await(TypeUrls.LISTENER, WAIT), List.of());

            var renewed = selfSigned("shop.example.com");
            kubectl.runWithInput(tlsSecret("edge", "shop-cert", renewed.cert(), renewed.key(), null), "apply", "-f", "-")
                    .ok();
            DiscoveryResponse pushed = gw.next(WAIT);
            assertTrue(pushed != null && pushed.getTypeUrl().equals(TypeUrls.SECRET), "an SDS push: " + pushed);
            assertEquals(renewed.cert(), certificateOf(secrets(pushed).get(CREDENTIAL)));
            gw.ack(pushed, List.of(CREDENTIAL));
            assertNull(bystander.next(NOTHING_MORE), "nothing for the gateway that holds no Secret");
            assertNull(gw.next(NOTHING_MORE), "SDS only: no other type pushed for a Secret change");
            assertNull(gw.error());
        }
    }

    @Test
    void aSecretOfAnotherNamespaceOrWithoutRbacIsRefusedWithTheReasonAndTheRestServed() throws Exception {
        var other = selfSigned("other.example.com");
        kubectl.runWithInput(tlsSecret("shop", "other-cert", other.cert(), other.key(), other.cert()), "apply", "-f", "-")
                .ok();
        api.accessReviews().allow(USER, "list", "secrets", "shop"); // RBAC elsewhere does not make it the gateway's
        try (CapturedLog log = new CapturedLog(SecretGenerator.class);
             AdsClient gw = gateway("shop-gateway-7d9f8c6b5-a1b2c", "shop-gateway")) {
            Await.until("the other namespace's Secret is read", WAIT,
                    () -> server.server().components().credentials().exists("shop", "other-cert"));
            gw.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL, "kubernetes://shop/other-cert"));
            Map<String, Secret> got = secrets(gw.await(TypeUrls.SECRET, WAIT));
            assertEquals(List.of(CREDENTIAL), List.copyOf(got.keySet()), "its own Secret only");
            assertTrue(log.has("shop-gateway-7d9f8c6b5-a1b2c", "unauthorized certificates kubernetes://shop/other-cert",
                    "verified identity's namespace (edge)"), log.lines().toString());
            assertNull(gw.error(), "left out, not a stream error");
        }

        // a service account RBAC does not let read secrets: its namespace's certificate is refused, the CA is not
        int asked = api.accessReviews().asked().size();
        try (CapturedLog log = new CapturedLog(SecretGenerator.class);
             AdsClient gw = gateway("no-rbac-6c5d4-x1y2z", "no-rbac")) {
            gw.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL, "kubernetes://shop-cert-cacert"));
            DiscoveryResponse r = gw.await(TypeUrls.SECRET, WAIT);
            assertEquals(0, r.getResourcesCount(), "no certificate, and shop-cert has no CA: " + r);
            assertTrue(log.has("no-rbac-6c5d4-x1y2z", "unauthorized certificates " + CREDENTIAL,
                    "no-rbac/edge is not authorized to read secrets"), log.lines().toString());
        }
        assertEquals(new SubjectAccessReviews.Question("system:serviceaccount:edge:no-rbac", "list", "secrets", "edge"),
                api.accessReviews().asked().get(asked), "one review, as istiod asks it");
    }

    @Test
    void aKeyThatDoesNotMatchOrAnExpiredCertificateIsReportedAndTheLastGoodOneServed() throws Exception {
        var good = selfSigned("good.example.com");
        var stranger = selfSigned("stranger.example.com");
        var expired = selfSigned("expired.example.com", -1);
        try (CapturedLog log = new CapturedLog(CREDENTIALS_LOGGER)) {
            kubectl.runWithInput(tlsSecret("edge", "mixed-cert", good.cert(), good.key(), null), "apply", "-f", "-").ok();
            Await.until("mixed-cert read", WAIT,
                    () -> server.server().components().credentials().exists("edge", "mixed-cert"));
            kubectl.runWithInput(tlsSecret("edge", "mixed-cert", good.cert(), stranger.key(), null), "apply", "-f", "-")
                    .ok();
            kubectl.runWithInput(tlsSecret("edge", "expired-cert", expired.cert(), expired.key(), null), "apply", "-f",
                    "-").ok();
            Await.until("both reported", WAIT, () -> log.has("edge/mixed-cert", "private key does not match",
                    "previous version is still served") && log.has("edge/expired-cert", "expired"));
        }
        try (AdsClient gw = gateway("shop-gateway-7d9f8c6b5-c3d4e", "shop-gateway")) {
            gw.subscribe(TypeUrls.SECRET, List.of(CREDENTIAL, "kubernetes://mixed-cert", "kubernetes://expired-cert"));
            Map<String, Secret> got = secrets(gw.await(TypeUrls.SECRET, WAIT));
            assertEquals(List.of("kubernetes://expired-cert", "kubernetes://mixed-cert", CREDENTIAL),
                    List.copyOf(got.keySet()));
            assertEquals(good.cert(), certificateOf(got.get("kubernetes://mixed-cert")), "the last good version");
            assertEquals(expired.cert(), certificateOf(got.get("kubernetes://expired-cert")), "served, as istiod does");
        }
    }

    /** The cluster {@code name} of a CDS answer. */
    static Cluster cluster(DiscoveryResponse cds, String name) throws Exception {
        for (Any a : cds.getResourcesList()) {
            Cluster c = a.unpack(Cluster.class);
            if (c.getName().equals(name)) {
                return c;
            }
        }
        throw new AssertionError("no cluster " + name + " among " + cds.getResourcesCount());
    }

    @Test
    void aDestinationRulesCredentialNameIsTheGatewaysClientCertificateAndNoSidecarsTls() throws Exception {
        var client = selfSigned("shop-gateway.edge");
        var payments = selfSigned("Payments CA");
        kubectl.runWithInput(TestCredentials.genericSecretData("edge", "payments-client", client.cert(), client.key(),
                payments.cert()), "apply", "-f", "-").ok();
        kubectl.runWithInput("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: payments, namespace: edge}
                spec:
                  hosts: [payments.example.com]
                  location: MESH_EXTERNAL
                  resolution: DNS
                  ports: [{number: 443, name: tls, protocol: TLS}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: payments, namespace: edge}
                spec:
                  host: payments.example.com
                  trafficPolicy:
                    tls: {mode: MUTUAL, credentialName: payments-client, sni: payments.example.com}
                """, "apply", "-f", "-").ok();
        String name = "outbound|443||payments.example.com";
        try (AdsClient gw = gateway("shop-gateway-7d9f8c6b5-e5f6g", "shop-gateway");
             AdsClient sidecar = new AdsClient(server.ports().get("grpc"), "sidecar~10.1.0.20~web-1.edge~edge.svc.cluster.local",
                     Map.of("NAMESPACE", "edge", "ISTIO_VERSION", "1.26.0"))) {
            gw.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse cds = gw.await(TypeUrls.CLUSTER, WAIT);
            while (cds.getResourcesList().stream().noneMatch(a -> a.toString().contains("payments.example.com"))) {
                gw.ack(cds, List.of()); // the rule is still on its way from the informer: its push follows
                cds = gw.await(TypeUrls.CLUSTER, WAIT);
            }
            Cluster atGateway = cluster(cds, name);
            var common = atGateway.getTransportSocket().getTypedConfig().unpack(UpstreamTlsContext.class).getCommonTlsContext();
            assertEquals("kubernetes://payments-client", common.getTlsCertificateSdsSecretConfigs(0).getName());
            assertEquals("kubernetes://payments-client-cacert",
                    common.getCombinedValidationContext().getValidationContextSdsSecretConfig().getName());

            sidecar.subscribe(TypeUrls.CLUSTER, List.of());
            Cluster atSidecar = cluster(sidecar.await(TypeUrls.CLUSTER, WAIT), name);
            assertFalse(atSidecar.hasTransportSocket() || atSidecar.getTransportSocketMatchesCount() > 0,
                    "istiod gives a sidecar no TLS from a rule's credentialName: " + atSidecar);

            gw.subscribe(TypeUrls.SECRET, List.of("kubernetes://payments-client", "kubernetes://payments-client-cacert"));
            Map<String, Secret> got = secrets(gw.await(TypeUrls.SECRET, WAIT));
            assertEquals(client.cert(), certificateOf(got.get("kubernetes://payments-client")));
            assertEquals(payments.cert(), got.get("kubernetes://payments-client-cacert").getValidationContext()
                    .getTrustedCa().getInlineBytes().toString(StandardCharsets.US_ASCII));
        }
    }

    @Test
    void aGatewayOfARemoteClusterGetsItsOwnClustersSecretAuthorizedByItsOwnRbac() throws Exception {
        FakeApiServer remote = FakeApiServer.start();
        try {
            remote.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n");
            var remoteCert = selfSigned("shop.remote.example.com");
            remote.apply(tlsSecret("edge", "remote-cert", remoteCert.cert(), remoteCert.key(), null));
            remote.accessReviews().allow(USER, "list", "secrets", "edge");
            String kubeconfig = Files.readString(remote.writeKubeconfig(dir.resolve("remote")));
            kubectl.runWithInput(KubeMulticlusterTest.remoteSecret("istio-remote-secret-remote",
                    Map.of("remote", kubeconfig)), "apply", "-f", "-").ok();
            Await.until("the remote cluster's Secret is read", WAIT, () -> server.server().components().credentials()
                    .forCluster("remote").flatMap(c -> c.secrets().get("edge", "remote-cert")).isPresent());

            try (AdsClient gw = new AdsClient(WorkloadChannels.secureXds(server, IDENTITY),
                    "router~10.2.0.9~shop-gateway-remote-1.edge~edge.svc.cluster.local",
                    Map.of("NAMESPACE", "edge", "CLUSTER_ID", "remote", "ISTIO_VERSION", "1.26.0"))) {
                gw.subscribe(TypeUrls.SECRET, List.of("kubernetes://remote-cert", CREDENTIAL));
                Map<String, Secret> got = secrets(gw.await(TypeUrls.SECRET, WAIT));
                assertEquals(remoteCert.cert(), certificateOf(got.get("kubernetes://remote-cert")), "its own cluster's");
                assertTrue(got.containsKey(CREDENTIAL), "then the config cluster's: " + got.keySet());
            }
            assertTrue(remote.accessReviews().asked().stream().anyMatch(q -> q.user().equals(USER)),
                    "RBAC asked of the proxy's own cluster");
            // a gateway of the config cluster does not see the remote cluster's Secrets
            try (AdsClient gw = gateway("shop-gateway-7d9f8c6b5-h7i8j", "shop-gateway")) {
                gw.subscribe(TypeUrls.SECRET, List.of("kubernetes://remote-cert"));
                assertEquals(0, gw.await(TypeUrls.SECRET, WAIT).getResourcesCount());
            }
        } finally {
            kubectl.run("delete", "secret", "-n", "istio-system", "istio-remote-secret-remote").ok();
            remote.stop();
        }
    }
}
