package io.meshpilot.xds;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static io.meshpilot.security.credentials.TestCredentials.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.model.CredentialNames;
import io.meshpilot.model.Proxy;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WorkloadChannels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SDS over a real ADS stream: a gateway (router proxy) in istio-system, authenticated on the
 * secure port with a workload certificate of istio-system from the server's CA, gets its
 * credentialName Secrets; without a verified identity (the plaintext port), or with one of
 * another namespace, it gets none.
 */
class SdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    /** Long enough for a push the pipeline would have made (debounce 100 ms) to arrive. */
    static final Duration NOTHING_MORE = Duration.ofMillis(1500);
    static final String CRED = "kubernetes://bookinfo-cred";
    static final String CACERT = "kubernetes://bookinfo-cred-cacert";
    static final String GATEWAY_ID = "spiffe://cluster.local/ns/istio-system/sa/istio-ingressgateway-service-account";
    static final String DEFAULT_ID = "spiffe://cluster.local/ns/default/sa/bookinfo-gateway";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;
    static int grpcSecure;
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
        grpcSecure = server.ports().get("grpc-secure");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String gatewayNode(String pod) {
        return "router~10.0.0.9~" + pod + ".istio-system~istio-system.svc.cluster.local";
    }

    static final Map<String, String> GATEWAY_METADATA = Map.of("NAMESPACE", "istio-system", "ISTIO_VERSION", "1.26.0");

    /** A gateway in istio-system on the secure port, authenticated as an istio-system identity. */
    static AdsClient gateway(String pod) throws Exception {
        return new AdsClient(mtls(GATEWAY_ID), gatewayNode(pod), GATEWAY_METADATA);
    }

    /**
     * A TLS channel to the secure port (15012) presenting a workload certificate for
     * {@code identity}, issued by the server's CA as the Istio agent would get it.
     */
    static ManagedChannel mtls(String identity) throws Exception {
        return WorkloadChannels.secureXds(server, identity);
    }

    static Node node(String id, Map<String, String> metadata) {
        Struct.Builder md = Struct.newBuilder();
        metadata.forEach((k, v) -> md.putFields(k, Value.newBuilder().setStringValue(v).build()));
        return Node.newBuilder().setId(id).setMetadata(md).build();
    }

    static Map<String, Secret> secrets(DiscoveryResponse r) throws Exception {
        Map<String, Secret> out = new TreeMap<>();
        for (Any a : r.getResourcesList()) {
            Secret s = a.unpack(Secret.class);
            out.put(s.getName(), s);
        }
        return out;
    }

    static String text(ByteString b) {
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
            var discovery = server.server().components().discovery();
            String dump = JsonFormat.printer()
                    .usingTypeRegistry(EnvoyTypes.REGISTRY)
                    .print(discovery.configDump(discovery.debugConnection("ingress-1").orElseThrow(), false));
            assertTrue(dump.contains("SecretsConfigDump") && dump.contains("[redacted]"), dump);
            assertFalse(dump.contains(Base64.getEncoder().encodeToString(
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
            assertTrue(server.server().components().credentials().exists("istio-system", "bookinfo-cred"));
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
        assertTrue(server.server().components().credentials().exists("bookinfo", "other-cred"),
                "it exists, the proxy just may not have it");
    }

    @Test
    void theSameRequestOnThePlaintextPortGetsNothingAndIsCounted() throws Exception {
        long errorsBefore = SecretGenerator.CERTIFICATE_ERRORS.value();
        try (AdsClient c = new AdsClient(grpc, gatewayNode("plain-1"), GATEWAY_METADATA)) {
            c.subscribe(TypeUrls.SECRET, List.of(CRED, CACERT));
            DiscoveryResponse r = c.await(TypeUrls.SECRET, WAIT);
            assertEquals(0, r.getResourcesCount(), "no verified identity, no secret: " + r);
            assertEquals(1, SecretGenerator.CERTIFICATE_ERRORS.value() - errorsBefore,
                    "one refusal for the request");
            assertTrue(server.server().components().discovery().connections().stream()
                    .filter(con -> con.proxy().id().equals(gatewayNode("plain-1")))
                    .allMatch(con -> con.identities().isEmpty()), "the plaintext stream has no identity");
            // still served otherwise: the refusal is not a stream error
            c.subscribe(TypeUrls.CLUSTER, List.of());
            assertTrue(c.await(TypeUrls.CLUSTER, WAIT).getResourcesCount() > 0);
            assertNull(c.error());
        }
    }

    @Test
    void anIdentityOfAnotherNamespaceGetsNoIstioSystemSecret() throws Exception {
        // claiming istio-system in the node metadata: XDS_AUTH refuses the stream before SDS
        try (AdsClient c = new AdsClient(mtls(DEFAULT_ID), gatewayNode("claims-1"), GATEWAY_METADATA)) {
            c.subscribe(TypeUrls.SECRET, List.of(CRED, CACERT));
            Throwable e = c.awaitError(WAIT);
            assertEquals(Status.Code.PERMISSION_DENIED, e == null ? null : Status.fromThrowable(e).getCode(),
                    String.valueOf(e));
            assertTrue(c.received().isEmpty(), "nothing served: " + c.received());
        }

        // a gateway of its own namespace (default) naming the istio-system Secret explicitly
        long errorsBefore = SecretGenerator.CERTIFICATE_ERRORS.value();
        try (AdsClient c = new AdsClient(mtls(DEFAULT_ID), "router~10.0.0.10~gw-1.default~default.svc.cluster.local",
                Map.of("NAMESPACE", "default", "ISTIO_VERSION", "1.26.0"))) {
            c.subscribe(TypeUrls.SECRET, List.of("kubernetes://istio-system/bookinfo-cred",
                    "kubernetes://istio-system/bookinfo-cred-cacert"));
            DiscoveryResponse r = c.await(TypeUrls.SECRET, WAIT);
            assertEquals(0, r.getResourcesCount(), r.toString());
            assertEquals(1, SecretGenerator.CERTIFICATE_ERRORS.value() - errorsBefore, "one refusal for the request");
            assertNull(c.error(), "left out, not a stream error");
        }

        // the generator itself decides by the verified identity, not the namespace the node claims
        SecretGenerator sds = new SecretGenerator(() -> server.server().components().credentials());
        Proxy claimsIstioSystem = Proxy.fromNode(node(gatewayNode("claims-2"), GATEWAY_METADATA));
        errorsBefore = SecretGenerator.CERTIFICATE_ERRORS.value();
        assertEquals(List.of(), sds.forCaller(List.of(DEFAULT_ID)).generate(claimsIstioSystem, null,
                Set.of(CRED, "kubernetes://istio-system/bookinfo-cred"), false));
        assertEquals(List.of(), sds.forCaller(List.of()).generate(claimsIstioSystem, null, Set.of(CRED), false));
        assertEquals(List.of(), sds.forCaller(List.of("spiffe://cluster.local/not-a-workload"))
                .generate(claimsIstioSystem, null, Set.of(CRED), false));
        // as istiod: the bare name is looked up in the identity's namespace (default, where it is missing), the
        // istio-system one is refused; then no identity, then no SPIFFE one
        assertEquals(4, SecretGenerator.CERTIFICATE_ERRORS.value() - errorsBefore);
        assertEquals(1, sds.forCaller(List.of(DEFAULT_ID, GATEWAY_ID)).generate(claimsIstioSystem, null, Set.of(CRED),
                false).size(), "any verified identity of the Secret's namespace will do");
        assertEquals(0, new Generators(new XdsCache(false), () -> server.server().components().credentials(),
                Generators.DebugSources.none(), PilotFeatures.Ambient.OFF)
                .forType(TypeUrls.SECRET, claimsIstioSystem)
                .generate(claimsIstioSystem, null, Set.of(CRED), false).size(), "without a connection: nothing");
    }

    @Test
    void aKubernetesGatewayNameIsRefusedAsNoGatewayOfTheProxyVerifiedIt() throws Exception {
        // istiod serves kubernetes-gateway:// only for the certificate references verified for this proxy's
        // Gateways; this proxy has none, so even a Secret of the identity's own namespace is refused
        // (GatewayApiSdsTest serves them)
        String own = "kubernetes-gateway://istio-system/bookinfo-cred";
        long errorsBefore = SecretGenerator.CERTIFICATE_ERRORS.value();
        try (CapturedLog log = new CapturedLog(SecretGenerator.class); AdsClient c = gateway("gateway-api-1")) {
            c.subscribe(TypeUrls.SECRET, List.of(own, CRED));
            Map<String, Secret> got = secrets(c.await(TypeUrls.SECRET, WAIT));
            assertEquals(List.of(CRED), List.copyOf(got.keySet()), "the kubernetes:// one only");
            assertEquals(1, SecretGenerator.CERTIFICATE_ERRORS.value() - errorsBefore, "one refusal for the request");
            assertTrue(log.has("WARNING", "gateway-api-1", "attempted to access unauthorized certificates " + own,
                    "not a verified certificate reference of this proxy's Gateways"), String.valueOf(log.lines()));
            assertNull(c.error(), "left out, not a stream error");
        }
    }

    @Test
    void resourceNamesAsIstiodParsesThem() {
        assertEquals(new CredentialNames.Resource(CredentialNames.Type.KUBERNETES, "edge", "shop-cert",
                "kubernetes://shop-cert"), SecretGenerator.parse("kubernetes://shop-cert", "edge"));
        assertEquals(new CredentialNames.Resource(CredentialNames.Type.KUBERNETES, "shop", "cert", "kubernetes://shop/cert"),
                SecretGenerator.parse("kubernetes://shop/cert", "edge"));
        assertEquals(new CredentialNames.Resource(CredentialNames.Type.KUBERNETES_GATEWAY, "shop", "cert",
                "kubernetes-gateway://shop/cert"), SecretGenerator.parse("kubernetes-gateway://shop/cert", "edge"));
        assertEquals(new CredentialNames.Resource(CredentialNames.Type.CONFIG_MAP, "shop", "ca", "configmap://shop/ca"),
                SecretGenerator.parse("configmap://shop/ca", "edge"));
        assertTrue(SecretGenerator.parse("configmap://shop/ca", "edge").caOnly(), "a ConfigMap only ever holds a CA");
        assertEquals(CredentialNames.Type.INVALID, SecretGenerator.parse("invalid://", "edge").type());
        assertNull(SecretGenerator.parse("configmap://ca", "edge"), "configmap names its namespace");
        assertTrue(SecretGenerator.parse("kubernetes://shop-cert-cacert", "edge").caOnly());
        assertNull(SecretGenerator.parse("kubernetes-gateway://cert", "edge"), "kubernetes-gateway names its namespace");
        assertNull(SecretGenerator.parse("kubernetes://", "edge"));
        assertNull(SecretGenerator.parse("kubernetes:///cert", "edge"));
        assertNull(SecretGenerator.parse("file-cert:/etc/certs/cert.pem", "edge"));
        assertNull(SecretGenerator.parse("default", "edge"), "the agent's own, never asked of istiod");
    }

    @Test
    void identityNamespaces() {
        assertEquals("istio-system", SecretGenerator.identityNamespace(GATEWAY_ID));
        assertEquals("default", SecretGenerator.identityNamespace("spiffe://example.org/ns/default/sa/a"));
        assertNull(SecretGenerator.identityNamespace("spiffe://cluster.local/ns/default"));
        assertNull(SecretGenerator.identityNamespace("spiffe:///ns/default/sa/a"));
        assertNull(SecretGenerator.identityNamespace("spiffe://cluster.local/ns//sa/a"));
        assertNull(SecretGenerator.identityNamespace("spiffe://cluster.local/ns/default/sa/a/extra"));
        assertNull(SecretGenerator.identityNamespace("https://cluster.local/ns/default/sa/a"));
    }
}
