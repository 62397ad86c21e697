package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.admin.v3.BootstrapConfigDump;
import io.envoyproxy.envoy.admin.v3.ClustersConfigDump;
import io.envoyproxy.envoy.admin.v3.EcdsConfigDump;
import io.envoyproxy.envoy.admin.v3.ListenersConfigDump;
import io.envoyproxy.envoy.admin.v3.RoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.ScopedRoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.SecretsConfigDump;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ConfigStatus;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.admin.DebugResource;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istioctl's xDS debug path ({@code proxy-status}, {@code proxy-status <pod>}, {@code version},
 * {@code x internal-debug}) spoken as istio's adsc speaks it (istioctl/pkg/xds/client.go,
 * pkg/adsc/adsc.go): TLS to the secure port with a service-account token of
 * {@code istio-system/default} for audience {@code istio-ca} (reviewed by the API server
 * stand-in), a node with {@code GENERATOR=event} and {@code ISTIO_VERSION 65536.65536.65536},
 * a nonce that is a time string, and an ACK after the response. The answers are checked
 * against istiod's shapes (statusgen.go, debuggen.go, xdsgen.go).
 */
class IstioctlXdsTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String SYSTEM_TOKEN = "istioctl-default-token";
    static final String WORKLOAD_TOKEN = "default-default-token";
    static final String OTHER_NAMESPACE_TOKEN = "other-default-token";
    static final String PROXY = "sidecar~10.0.0.5~productpage-v1-7d9f.default~default.svc.cluster.local";
    static final String NACKED_PROXY = "sidecar~10.0.0.6~reviews-v1-5c8d.default~default.svc.cluster.local";
    static final String POD_NAME = "istiod-5b6c7d-abcde";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static MeshPilotServer server;
    static AdsClient proxy;
    static AdsClient nackedProxy;

    @BeforeAll
    static void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        // what istioctl's DialOptions asks the API server for: a TokenRequest token of istio-system/default
        api.tokens().accept(SYSTEM_TOKEN, "system:serviceaccount:istio-system:default", List.of("istio-ca"));
        api.tokens().accept(WORKLOAD_TOKEN, "system:serviceaccount:default:default", List.of("istio-ca"));
        api.tokens().accept(OTHER_NAMESPACE_TOKEN, "system:serviceaccount:other:default", List.of("istio-ca"));
        List<String> flags = TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock", "--namespace", "istio-system");
        server = MeshPilotServer.start(TestServers.args(flags, Map.of("POD_NAME", POD_NAME)));
        proxy = new AdsClient(server.ports().get("grpc"), PROXY,
                Map.of("NAMESPACE", "default", "CLUSTER_ID", "Kubernetes", "ISTIO_VERSION", "1.30.3"));
        proxy.autoAnswer(null);
        proxy.subscribe(TypeUrls.CLUSTER, List.of());
        proxy.await(TypeUrls.CLUSTER, WAIT);
        proxy.subscribe(TypeUrls.LISTENER, List.of());
        proxy.await(TypeUrls.LISTENER, WAIT);
        nackedProxy = new AdsClient(server.ports().get("grpc"), NACKED_PROXY,
                Map.of("NAMESPACE", "default", "CLUSTER_ID", "Kubernetes"));
        nackedProxy.autoAnswer("listener refused");
        nackedProxy.subscribe(TypeUrls.LISTENER, List.of());
        nackedProxy.await(TypeUrls.LISTENER, WAIT);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {proxy, nackedProxy, server}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // closing the rest regardless
            }
        }
        if (api != null) {
            api.stop();
        }
    }

    /** TLS to the secure port as istioctl dials it: the server's SAN set, a bearer token on every call. */
    static ManagedChannel istioctlChannel(String token) throws Exception {
        var ssl = GrpcSslContexts.forClient()
                .trustManager(server.server().components().certificates().material().root()).build();
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, "Bearer " + token);
        return NettyChannelBuilder.forAddress("localhost", server.ports().get("grpc-secure"))
                .overrideAuthority("istiod.istio-system.svc").sslContext(ssl)
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
    }

    /** adsc's node id (nodeID): sidecar~ip~test-1.ns~ns.svc.cluster.local. */
    static String istioctlNodeId(String namespace) {
        return "sidecar~10.0.0.99~test-1." + namespace + "~" + namespace + ".svc.cluster.local";
    }

    /** adsc's node metadata (buildNode): GENERATOR=event, the default service account, ISTIO_VERSION 65536.65536.65536. */
    static Map<String, String> istioctlMetadata(String namespace) {
        return Map.of("GENERATOR", "event", "SERVICE_ACCOUNT", "default", "NAMESPACE", namespace,
                "ISTIO_VERSION", "65536.65536.65536");
    }

    static AdsClient istioctl(String token, String namespace) throws Exception {
        return new AdsClient(istioctlChannel(token), istioctlNodeId(namespace), istioctlMetadata(namespace));
    }

    /** One istioctl command: a request with a time-string nonce, its first answer, then adsc's ACK. */
    static DiscoveryResponse ask(String type, String... names) throws Exception {
        try (AdsClient c = istioctl(SYSTEM_TOKEN, "istio-system")) {
            c.send(DiscoveryRequest.newBuilder().setTypeUrl(type).addAllResourceNames(List.of(names))
                    .setResponseNonce(ZonedDateTime.now().toString()).build(), false);
            DiscoveryResponse r = c.await(type, WAIT);
            c.send(DiscoveryRequest.newBuilder().setTypeUrl(type).setVersionInfo(r.getVersionInfo())
                    .setResponseNonce(r.getNonce()).build(), false);
            return r;
        }
    }

    static ClientConfig row(DiscoveryResponse syncz, String nodeId) throws Exception {
        for (Any a : syncz.getResourcesList()) {
            ClientConfig c = a.unpack(ClientConfig.class);
            if (c.getNode().getId().equals(nodeId)) {
                return c;
            }
        }
        throw new AssertionError("no syncz row for " + nodeId + " in " + syncz);
    }

    @Test
    void proxyStatusRowsCarryTheControlPlaneAndIstiodsClientConfigShape() throws Exception {
        DiscoveryResponse syncz = ask(TypeUrls.DEBUG_SYNCZ);
        assertTrue(syncz.hasControlPlane(), "no control_plane: istioctl shows ISTIOD MISSING");
        JsonObject id = JsonParser.parseString(syncz.getControlPlane().getIdentifier()).getAsJsonObject();
        assertEquals("istiod", id.get("Component").getAsString());
        assertEquals(POD_NAME, id.get("ID").getAsString());
        JsonObject info = id.getAsJsonObject("Info");
        assertEquals(BuildInfo.current().version(), info.get("version").getAsString());
        assertEquals(BuildInfo.current().revision(), info.get("revision").getAsString());
        assertEquals(BuildInfo.current().tag(), info.get("tag").getAsString());
        assertEquals(BuildInfo.current().status(), info.get("status").getAsString());
        assertTrue(info.has("golang_version"), info.toString());

        // PROXY sends no PROXY_CONFIG (plain Envoy): istiod would leave it out, MeshPilot keeps
        // plain Envoy's rows on purpose (docs/XDS.md, SyncStatusGenerator)
        ClientConfig row = row(syncz, PROXY);
        assertEquals("Kubernetes", row.getNode().getMetadata().getFieldsOrThrow("CLUSTER_ID").getStringValue());
        assertEquals("1.30.3", row.getNode().getMetadata().getFieldsOrThrow("ISTIO_VERSION").getStringValue());
        assertEquals("default", row.getNode().getMetadata().getFieldsOrThrow("NAMESPACE").getStringValue());
        // only the watched types, sorted by type URL (istiod's debugSyncz)
        assertEquals(List.of(TypeUrls.CLUSTER, TypeUrls.LISTENER),
                row.getGenericXdsConfigsList().stream().map(ClientConfig.GenericXdsConfig::getTypeUrl).toList());
        for (var c : row.getGenericXdsConfigsList()) {
            assertEquals(ConfigStatus.SYNCED, c.getConfigStatus(), c.toString());
            assertTrue(c.hasLastUpdated() && c.getLastUpdated().getSeconds() > 0, c.toString());
            assertFalse(c.hasErrorState(), c.toString());
        }
        var nacked = row(syncz, NACKED_PROXY).getGenericXdsConfigsList();
        assertEquals(1, nacked.size(), nacked.toString());
        assertEquals(ConfigStatus.ERROR, nacked.getFirst().getConfigStatus());
        assertTrue(nacked.getFirst().getErrorState().getDetails().contains("listener refused"), nacked.toString());
        assertTrue(nacked.getFirst().getErrorState().hasLastUpdateAttempt(), nacked.toString());
        // istioctl's own debug streams (GENERATOR=event) are no proxies
        assertTrue(syncz.getResourcesList().stream().noneMatch(a -> a.toString().contains("test-1.istio-system")),
                "the debug client is reported: " + syncz);
    }

    /** istiod's delta path answers debug types too (DeltaDiscoveryResponse.control_plane). */
    @Test
    void deltaSynczIdentifiesTheControlPlaneToo() throws Exception {
        Struct.Builder metadata = Struct.newBuilder();
        istioctlMetadata("istio-system").forEach((k, v) -> metadata.putFields(k,
                Value.newBuilder().setStringValue(v).build()));
        try (DeltaAdsClient c = new DeltaAdsClient(istioctlChannel(SYSTEM_TOKEN),
                Node.newBuilder().setId(istioctlNodeId("istio-system")).setMetadata(metadata).build())) {
            c.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.DEBUG_SYNCZ)
                    .setResponseNonce(ZonedDateTime.now().toString()));
            DeltaDiscoveryResponse syncz = c.next(WAIT);
            assertNotNull(syncz, "no delta syncz answer: " + c.awaitError(Duration.ZERO));
            assertTrue(syncz.hasControlPlane(), syncz.toString());
            assertEquals(POD_NAME, JsonParser.parseString(syncz.getControlPlane().getIdentifier()).getAsJsonObject()
                    .get("ID").getAsString());
            assertTrue(syncz.getResourcesList().stream().anyMatch(r -> r.getName().equals(PROXY)), syncz.toString());
        }
    }

    @Test
    void configDumpByPodNameAndNamespaceDecodesAsTheSevenConfigs() throws Exception {
        DiscoveryResponse dump = ask("istio.io/debug/config_dump", "productpage-v1-7d9f.default");
        List<Class<? extends com.google.protobuf.Message>> order = List.of(BootstrapConfigDump.class,
                ClustersConfigDump.class, ListenersConfigDump.class, ScopedRoutesConfigDump.class,
                RoutesConfigDump.class, SecretsConfigDump.class, EcdsConfigDump.class);
        assertEquals(order.size(), dump.getResourcesCount(), dump.toString());
        for (int i = 0; i < order.size(); i++) {
            assertTrue(dump.getResources(i).is(order.get(i)), i + ": " + dump.getResources(i).getTypeUrl());
        }
        ClustersConfigDump clusters = dump.getResources(1).unpack(ClustersConfigDump.class);
        assertTrue(clusters.getDynamicActiveClustersCount() > 0, clusters.toString());
        assertEquals(0, ask("istio.io/debug/config_dump", "nobody.default").getResourcesCount(),
                "a proxy not connected here: istiod answers empty");
        assertEquals(0, ask("istio.io/debug/config_dump", "productpage-v1-7d9f.default", "reviews-v1-5c8d.default")
                .getResourcesCount(), "two names: istiod answers empty");
    }

    static String debugBody(DiscoveryResponse r) {
        assertEquals(1, r.getResourcesCount(), r.toString());
        assertEquals("istio.io/debug", r.getResources(0).getTypeUrl());
        assertFalse(r.hasControlPlane(), "control_plane only on syncz");
        return r.getResources(0).getValue().toString(StandardCharsets.UTF_8);
    }

    @Test
    void internalDebugAnswersFromTheDebugEndpoints() throws Exception {
        JsonArray syncz = JsonParser.parseString(debugBody(ask("istio.io/debug", "syncz"))).getAsJsonArray();
        assertTrue(syncz.toString().contains("productpage-v1-7d9f.default"), syncz.toString());
        assertTrue(JsonParser.parseString(debugBody(ask("istio.io/debug", "configz"))).isJsonArray());
        JsonArray list = JsonParser.parseString(debugBody(ask("istio.io/debug", "list"))).getAsJsonArray();
        for (String entry : List.of("adsz", "adsz?push=true", "cachez?clear=true", "config_dump", "configz", "syncz")) {
            assertTrue(list.toString().contains("\"" + entry + "\""), entry + " not in " + list);
        }
        assertEquals("404 page not found\n", debugBody(ask("istio.io/debug", "no_such_page")));
    }

    @Test
    void aWorkloadIdentityMayNotReadConfigz() throws Exception {
        try (AdsClient c = istioctl(WORKLOAD_TOKEN, "default")) {
            c.send(DiscoveryRequest.newBuilder().setTypeUrl("istio.io/debug").addResourceNames("configz")
                    .setResponseNonce(ZonedDateTime.now().toString()).build(), false);
            Throwable error = c.awaitError(WAIT);
            assertNotNull(error, "answered: " + c.received());
            assertEquals(Status.Code.PERMISSION_DENIED, Status.fromThrowable(error).getCode(), error.toString());
            assertTrue(error.getMessage().contains("the debug info is not available for current identity"),
                    error.getMessage());
        }
    }

    /** The body a workload identity's one istio.io/debug request answers. */
    static String debugBodyFor(String token, String namespace, String request) throws Exception {
        try (AdsClient c = istioctl(token, namespace)) {
            c.send(DiscoveryRequest.newBuilder().setTypeUrl("istio.io/debug").addResourceNames(request)
                    .setResponseNonce(ZonedDateTime.now().toString()).build(), false);
            return debugBody(c.await("istio.io/debug", WAIT));
        }
    }

    /**
     * istiod checks the caller's namespace on the same parsed proxyID that selects the connection
     * (debuggen.go processDebugRequest, debug.go getDebugConnection): however the parameter is
     * spelled, a workload of another namespace never gets the proxy's dump.
     */
    @Test
    void aWorkloadIdentityReadsNoOtherNamespacesProxyHoweverProxyIdIsSpelled() throws Exception {
        String own = debugBodyFor(WORKLOAD_TOKEN, "default", "config_dump?proxyID=productpage-v1-7d9f.default");
        assertTrue(own.contains("ClustersConfigDump"), "its own namespace's proxy: a dump, got " + own);
        for (String request : List.of("config_dump?proxyID=productpage-v1-7d9f.default",
                "config_dump?%70roxyID=productpage-v1-7d9f.default",
                "config_dump?proxyI%44=productpage-v1-7d9f.default",
                "config_dump?proxyID=nobody.other&proxyID=productpage-v1-7d9f.default",
                "config_dump?%70roxyID=productpage-v1-7d9f.default&proxyID=nobody.other",
                "edsz?%70roxyID=productpage-v1-7d9f.default",
                "ndsz?%70roxyID=productpage-v1-7d9f.default")) {
            String body = debugBodyFor(OTHER_NAMESPACE_TOKEN, "other", request);
            assertEquals(DebugResource.NOT_CONNECTED, body, request);
        }
    }

    /** A name the caller chose reaches the log on one line of bounded length (no forged lines, no flooding). */
    @Test
    void aCallerChosenProxyIdIsLoggedOnOneBoundedLine() throws Exception {
        String forged = "nobody.default\r\nINFO forged line " + "x".repeat(4000);
        try (CapturedLog log = new CapturedLog(ConfigDumpGenerator.class)) {
            assertEquals(0, ask("istio.io/debug/config_dump", forged).getResourcesCount());
            List<String> lines = log.lines().stream().filter(l -> l.contains("nobody.default")).toList();
            assertEquals(1, lines.size(), log.lines().toString());
            String line = lines.getFirst();
            assertFalse(line.contains("\r") || line.contains("\n"), line);
            assertTrue(line.length() < 1000, "not bounded: " + line.length() + " chars");
        }
    }
}
