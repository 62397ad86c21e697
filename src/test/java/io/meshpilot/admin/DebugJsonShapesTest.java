package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.admin.v3.ClustersConfigDump;
import io.envoyproxy.envoy.admin.v3.ConfigDump;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.JsonShape;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, acceptance 1 for the debug endpoints whose JSON istiod's readers (istioctl,
 * Kiali) decode: each answer of a real server, with a real ADS client connected, is checked
 * against istiod's response shape, recorded here by hand from the Go structs (and, for
 * config_dump, Envoy's admin protos) named above each shape. Field names and JSON types must
 * match; fields Go prints without {@code omitempty} must be there; our extra fields are named.
 */
class DebugJsonShapesTest {
    static final String WAIT_REASON = "the server handles an ACK or NACK after the client sent it";
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String NODE = "sidecar~10.7.0.1~shape.default~default.svc.cluster.local";
    static final String REVIEWS = "outbound|9080||reviews.default.svc.cluster.local";
    static final String NACK = "listener virtualInbound: bad filter chain";

    /**
     * istiod's {@code model.Service} (pilot/pkg/model/service.go) as encoding/json prints it,
     * with {@code ServiceAttributes} and its embedded {@code K8sAttributes}, {@code Port}, and
     * {@code AddressMap} (pilot/pkg/model/addressmap.go). Untagged fields keep their Go names;
     * {@code Resolution} is an int; {@code creationTime} and {@code clusterVIPs} are structs, which
     * omitempty never leaves out. Attributes we have no data for are recorded without
     * {@code always} (their type is still checked if they appear).
     */
    static final JsonShape REGISTRYZ = JsonShape.of(
            "$ array always",
            "$[] object",
            "$[].Attributes object always",
            "$[].Attributes.ServiceRegistry string always",
            "$[].Attributes.Name string always",
            "$[].Attributes.Namespace string always",
            "$[].Attributes.Labels map always",
            "$[].Attributes.Labels.* string",
            "$[].Attributes.ExportTo map always",
            "$[].Attributes.ExportTo.* object",
            "$[].Attributes.LabelSelectors map",
            "$[].Attributes.LabelSelectors.* string",
            "$[].Attributes.ClusterExternalAddresses object",
            "$[].Attributes.ClusterExternalPorts map",
            "$[].Attributes.PassthroughTargetPorts map",
            "$[].Attributes.Type string",
            "$[].Attributes.ExternalName string",
            "$[].Attributes.NodeLocal boolean",
            "$[].Attributes.ObjectName string",
            "$[].ports array",
            "$[].ports[] object",
            "$[].ports[].name string",
            "$[].ports[].port number always",
            "$[].ports[].protocol string",
            "$[].serviceAccounts array",
            "$[].serviceAccounts[] string",
            "$[].creationTime string always",
            "$[].hostname string always",
            "$[].clusterVIPs object always",
            "$[].clusterVIPs.Addresses map always",
            "$[].clusterVIPs.Addresses.* array",
            "$[].clusterVIPs.Addresses.*[] string",
            "$[].defaultAddress string",
            "$[].autoAllocatedIPv4Address string",
            "$[].autoAllocatedIPv6Address string",
            "$[].Resolution number always",
            "$[].MeshExternal boolean always",
            "$[].ResourceVersion string always");

    /**
     * istiod's {@code AdsClients} and {@code AdsClient} (pilot/pkg/xds/debug.go); metadata is
     * {@code model.NodeMetadata} (keyed by the node metadata names; we list its string values),
     * locality Envoy's {@code core.Locality} Go struct (proto field names).
     */
    static final JsonShape ADSZ = JsonShape.of(
            "$ object",
            "$.totalClients number always",
            "$.clients array",
            "$.clients[] object",
            "$.clients[].connectionId string always",
            "$.clients[].connectedAt string always",
            "$.clients[].address string always",
            "$.clients[].labels map",
            "$.clients[].labels.* string",
            "$.clients[].metadata map",
            "$.clients[].metadata.* string",
            "$.clients[].locality object",
            "$.clients[].locality.region string",
            "$.clients[].locality.zone string",
            "$.clients[].locality.sub_zone string",
            "$.clients[].watches map",
            "$.clients[].watches.* array",
            "$.clients[].watches.*[] string");

    /** {@code /debug/connections}: the same AdsClients, filled with id, time and address only (connectionsHandler). */
    static final JsonShape CONNECTIONS = JsonShape.of(
            "$ object",
            "$.totalClients number always",
            "$.clients array",
            "$.clients[] object",
            "$.clients[].connectionId string always",
            "$.clients[].connectedAt string always",
            "$.clients[].address string always");

    /** Ours on /debug/connections (slow-reader queue, verified identities); Go's decoder skips them. */
    static final Set<String> CONNECTIONS_EXTRAS = Set.of("$.clients[].unsent", "$.clients[].replaced",
            "$.clients[].identities");

    /** istiod's {@code SyncStatus} and {@code ResourceStatus} (pilot/pkg/xds/debug.go). */
    static final JsonShape SYNCZ = JsonShape.of(
            "$ array always",
            "$[] object",
            "$[].cluster_id string",
            "$[].proxy string",
            "$[].proxy_type string",
            "$[].proxy_version string",
            "$[].istio_version string",
            "$[].cluster_sent string",
            "$[].cluster_acked string",
            "$[].listener_sent string",
            "$[].listener_acked string",
            "$[].route_sent string",
            "$[].route_acked string",
            "$[].endpoint_sent string",
            "$[].endpoint_acked string",
            "$[].extensionconfig_sent string",
            "$[].extensionconfig_acked string",
            "$[].resources map",
            "$[].resources.* object",
            "$[].resources.*.sent string",
            "$[].resources.*.acked string",
            "$[].resources.*.sentTime string always",
            "$[].resources.*.lastError string");

    /**
     * Envoy's {@code envoy.admin.v3.ConfigDump} in protobuf JSON (api/envoy/admin/v3/config_dump.proto
     * and config_dump_shared.proto), as istiod's connectionConfigDump fills it: the union of the
     * fields of the section types it puts in {@code configs}; each resource is an Any.
     */
    static final JsonShape CONFIG_DUMP = JsonShape.of(
            "$ object",
            "$.configs array",
            "$.configs[] object",
            "$.configs[].@type string always",
            "$.configs[].versionInfo string",
            "$.configs[].dynamicActiveClusters array",
            "$.configs[].dynamicActiveClusters[] object",
            "$.configs[].dynamicActiveClusters[].versionInfo string",
            "$.configs[].dynamicActiveClusters[].cluster any",
            "$.configs[].dynamicActiveClusters[].lastUpdated string",
            "$.configs[].dynamicEndpointConfigs array",
            "$.configs[].dynamicEndpointConfigs[] object",
            "$.configs[].dynamicEndpointConfigs[].versionInfo string",
            "$.configs[].dynamicEndpointConfigs[].endpointConfig any",
            "$.configs[].dynamicListeners array",
            "$.configs[].dynamicListeners[] object",
            "$.configs[].dynamicListeners[].name string",
            "$.configs[].dynamicListeners[].activeState object",
            "$.configs[].dynamicListeners[].activeState.versionInfo string",
            "$.configs[].dynamicListeners[].activeState.listener any",
            "$.configs[].dynamicRouteConfigs array",
            "$.configs[].dynamicRouteConfigs[] object",
            "$.configs[].dynamicRouteConfigs[].versionInfo string",
            "$.configs[].dynamicRouteConfigs[].routeConfig any",
            "$.configs[].dynamicActiveSecrets array",
            "$.configs[].dynamicActiveSecrets[] object",
            "$.configs[].dynamicActiveSecrets[].name string",
            "$.configs[].dynamicActiveSecrets[].versionInfo string",
            "$.configs[].dynamicActiveSecrets[].secret any",
            "$.configs[].ecdsFilters array",
            "$.configs[].ecdsFilters[] object",
            "$.configs[].ecdsFilters[].versionInfo string",
            "$.configs[].ecdsFilters[].ecdsFilter any");

    static final String ADMIN = "type.googleapis.com/envoy.admin.v3.";
    /** istiod's texts (pilot/pkg/xds/debug.go errorHandler) when a request names no proxy, or one not connected. */
    static final String NO_PROXY_ID = "You must provide a proxyID in the query string\n";
    static final String NOT_CONNECTED =
            "Proxy not connected to this Pilot instance. It may be connected to another instance.\n";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;
    static int monitoring;
    static AdsClient proxy;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        // a DNS ServiceEntry with an address, so registryz has a non-zero Resolution and a VIP
        Files.writeString(dir.resolve("config/external.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: httpbin-ext, namespace: default}
                spec:
                  hosts: [httpbin.example.com]
                  addresses: [10.88.0.9]
                  location: MESH_EXTERNAL
                  resolution: DNS
                  ports:
                  - {number: 80, name: http, protocol: HTTP}
                """);
        server = TestServers.start(dir);
        http = server.ports().get("http");
        monitoring = server.ports().get("monitoring");
        proxy = new AdsClient(server.ports().get("grpc"), NODE, Map.of("NAMESPACE", "default",
                "CLUSTER_ID", "Kubernetes", "ISTIO_VERSION", "1.24.0", "LABELS", "{\"app\": \"shape\"}"),
                Locality.newBuilder().setRegion("r1").setZone("z1").build());
        proxy.subscribe(TypeUrls.CLUSTER, List.of());
        proxy.ack(proxy.await(TypeUrls.CLUSTER, WAIT), List.of());
        proxy.subscribe(TypeUrls.ENDPOINT, List.of(REVIEWS));
        proxy.ack(proxy.await(TypeUrls.ENDPOINT, WAIT), List.of(REVIEWS));
        proxy.subscribe(TypeUrls.LISTENER, List.of());
        proxy.nack(proxy.await(TypeUrls.LISTENER, WAIT), List.of(), NACK);
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static JsonElement json(Http.Reply r) {
        assertEquals(200, r.status(), r.body());
        assertTrue(r.contentType().startsWith("application/json"), r.contentType());
        return JsonParser.parseString(r.body());
    }

    static void assertShape(JsonShape shape, JsonElement actual, Set<String> extras) {
        assertEquals(List.of(), shape.problems(actual, extras), actual.toString());
    }

    /** Polls {@code path} until {@code until} holds (the server takes the ACK/NACK on its own thread). */
    static JsonElement await(String path, Predicate<JsonElement> until) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        JsonElement last = json(Http.get(http, path));
        while (!until.test(last) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            last = json(Http.get(http, path));
        }
        assertTrue(until.test(last), WAIT_REASON + ": " + last);
        return last;
    }

    @Test
    void registryzIsIstiodsServiceList() {
        for (int port : List.of(http, monitoring)) {
            JsonArray services = json(Http.get(port, "/debug/registryz")).getAsJsonArray();
            assertShape(REGISTRYZ, services, Set.of("$[].source"));
            JsonObject ext = null;
            for (JsonElement e : services) {
                if (e.getAsJsonObject().get("hostname").getAsString().equals("httpbin.example.com")) {
                    ext = e.getAsJsonObject();
                }
            }
            assertNotNull(ext, services.toString());
            assertEquals(1, ext.get("Resolution").getAsInt(), "istiod's DNSLB: " + ext);
            assertTrue(ext.get("MeshExternal").getAsBoolean(), ext.toString());
            assertEquals("10.88.0.9", ext.get("defaultAddress").getAsString(), ext.toString());
            assertEquals("External", ext.getAsJsonObject("Attributes").get("ServiceRegistry").getAsString());
            assertEquals("httpbin.example.com", ext.getAsJsonObject("Attributes").get("Name").getAsString());
            assertEquals(80, ext.getAsJsonArray("ports").get(0).getAsJsonObject().get("port").getAsInt());
        }
    }

    @Test
    void adszIsIstiodsAdsClientsWithWatchesAndTakesProxyIdAndPush() throws Exception {
        JsonObject all = json(Http.get(http, "/debug/adsz")).getAsJsonObject();
        assertShape(ADSZ, all, Set.of());
        JsonObject one = json(Http.get(http, "/debug/adsz?proxyID=shape.default")).getAsJsonObject();
        assertShape(ADSZ, one, Set.of());
        assertEquals(1, one.get("totalClients").getAsInt(), one.toString());
        JsonObject client = one.getAsJsonArray("clients").get(0).getAsJsonObject();
        assertTrue(client.get("connectionId").getAsString().matches("shape\\.default-\\d+"),
                "istiod's connection id, proxy ID and counter: " + client);
        assertEquals(List.of(REVIEWS), client.getAsJsonObject("watches").getAsJsonArray(TypeUrls.ENDPOINT).asList()
                .stream().map(JsonElement::getAsString).toList(), client.toString());
        assertEquals("shape", client.getAsJsonObject("labels").get("app").getAsString(), client.toString());
        assertEquals("r1", client.getAsJsonObject("locality").get("region").getAsString(), client.toString());

        Http.Reply missing = Http.get(http, "/debug/adsz?proxyID=nobody.nowhere");
        assertEquals(404, missing.status());
        assertEquals(NOT_CONNECTED, missing.body());

        int before = proxy.received().size();
        Http.Reply push = Http.get(http, "/debug/adsz?push=true");
        assertEquals(200, push.status());
        assertTrue(push.contentType().startsWith("text/plain"), push.contentType());
        assertTrue(push.body().matches("Pushed to \\d+ servers\n"), push.body());
        DiscoveryResponse pushed = proxy.next(WAIT);
        assertNotNull(pushed, "a full push reaches the connected proxy after ?push=true (had " + before + ")");
    }

    @Test
    void connectionsIsIstiodsAdsClientsWithoutDetails() {
        for (int port : List.of(http, monitoring)) {
            JsonObject o = json(Http.get(port, "/debug/connections")).getAsJsonObject();
            assertShape(CONNECTIONS, o, CONNECTIONS_EXTRAS);
            assertTrue(o.get("totalClients").getAsInt() >= 1, o.toString());
        }
    }

    @Test
    void synczIsIstiodsSyncStatusWithTheProxyIdAndTheNack() throws Exception {
        JsonElement syncz = await("/debug/syncz", s -> s.getAsJsonArray().asList().stream()
                .map(JsonElement::getAsJsonObject)
                .anyMatch(o -> o.has("resources") && o.getAsJsonObject("resources").has(TypeUrls.LISTENER)
                        && o.getAsJsonObject("resources").getAsJsonObject(TypeUrls.LISTENER).has("lastError")
                        && o.has("endpoint_acked")));
        assertShape(SYNCZ, syncz, Set.of());
        JsonObject mine = syncz.getAsJsonArray().asList().stream().map(JsonElement::getAsJsonObject)
                .filter(o -> o.get("proxy").getAsString().equals("shape.default")).findFirst()
                .orElseThrow(() -> new AssertionError("istiod's proxy ID (name.namespace), not the node id: " + syncz));
        assertEquals("sidecar", mine.get("proxy_type").getAsString());
        assertEquals("Kubernetes", mine.get("cluster_id").getAsString());
        assertEquals("1.24.0", mine.get("istio_version").getAsString());
        assertTrue(mine.has("cluster_sent") && mine.has("cluster_acked"), mine.toString());
        assertEquals(NACK, mine.getAsJsonObject("resources").getAsJsonObject(TypeUrls.LISTENER).get("lastError")
                .getAsString());
        assertEquals(0, json(Http.get(http, "/debug/syncz?namespace=other")).getAsJsonArray().size());
        assertTrue(json(Http.get(monitoring, "/debug/syncz?namespace=default")).getAsJsonArray().asList().stream()
                .anyMatch(o -> o.getAsJsonObject().get("proxy").getAsString().equals("shape.default")));
    }

    @Test
    void configDumpIsEnvoysAdminConfigDump() throws Exception {
        JsonObject dump = json(Http.get(http, "/debug/config_dump?proxyID=shape.default")).getAsJsonObject();
        assertShape(CONFIG_DUMP, dump, Set.of());
        assertEquals(List.of(ADMIN + "BootstrapConfigDump", ADMIN + "ClustersConfigDump", ADMIN + "ListenersConfigDump",
                ADMIN + "ScopedRoutesConfigDump", ADMIN + "RoutesConfigDump", ADMIN + "SecretsConfigDump",
                ADMIN + "EcdsConfigDump"), types(dump), "istiod's sections, in its order");
        // what istioctl does with it: parse it as the admin proto
        ConfigDump.Builder parsed = ConfigDump.newBuilder();
        JsonFormat.parser().usingTypeRegistry(EnvoyTypes.REGISTRY)
                .merge(dump.toString(), parsed);
        var clusters = parsed.getConfigs(1).unpack(ClustersConfigDump.class);
        assertTrue(clusters.getDynamicActiveClustersList().stream().anyMatch(c -> {
            try {
                return c.getCluster().unpack(Cluster.class).getName()
                        .equals(REVIEWS);
            } catch (InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
        }), clusters.toString());

        JsonObject withEds = json(Http.get(monitoring, "/debug/config_dump?proxyID=shape.default&include_eds"))
                .getAsJsonObject();
        assertShape(CONFIG_DUMP, withEds, Set.of());
        assertEquals(ADMIN + "EndpointsConfigDump", types(withEds).get(2), "endpoints follow clusters when asked for");

        Http.Reply noId = Http.get(http, "/debug/config_dump");
        assertEquals(400, noId.status());
        assertEquals(NO_PROXY_ID, noId.body());
        assertEquals(404, Http.get(http, "/debug/config_dump?proxyID=nobody.nowhere").status());
    }

    static List<String> types(JsonObject dump) {
        return dump.getAsJsonArray("configs").asList().stream()
                .map(c -> c.getAsJsonObject().get("@type").getAsString()).toList();
    }

    @Test
    void versionIsIstiodsPlainText() {
        Http.Reply r = Http.get(monitoring, "/version");
        assertEquals(200, r.status());
        assertTrue(r.contentType().startsWith("text/plain"), r.contentType());
        // istioctl splits it on its last two dashes: version, git revision, build status
        assertTrue(r.body().matches("\\S+-\\S+-(Clean|Modified|unknown)"), r.body());
    }

    @Test
    void forceDisconnectEndsThatProxysStream() throws Exception {
        try (AdsClient gone = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.7.0.2~gone.default~default.svc.cluster.local", Map.of("NAMESPACE", "default"))) {
            gone.subscribe(TypeUrls.CLUSTER, List.of());
            gone.await(TypeUrls.CLUSTER, WAIT);
            assertEquals(400, Http.get(http, "/debug/force_disconnect").status());
            assertEquals(404, Http.get(http, "/debug/force_disconnect?proxyID=nobody.nowhere").status());
            Http.Reply ok = Http.get(http, "/debug/force_disconnect?proxyID=gone.default");
            assertEquals(200, ok.status(), ok.body());
            assertEquals("OK", ok.body());
            assertNotNull(gone.awaitError(WAIT), "the proxy's stream ends (it would reconnect)");
            await("/debug/adsz", a -> a.getAsJsonObject().getAsJsonArray("clients").asList().stream()
                    .noneMatch(c -> c.getAsJsonObject().get("connectionId").getAsString().contains("gone.default")));
        }
        assertEquals(200, Http.get(http, "/debug/config_dump?proxyID=shape.default").status(), "the other proxy stays");
    }
}
