package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.Server;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The one proxyless scenario every xDS client stack runs (grpc-java in
 * {@link ProxylessGrpcTest}, grpc-js in {@link GrpcJsXdsClientTest}, gRPC C-core in
 * {@link CCoreXdsClientTest}): a ServiceEntry with three WorkloadEntries, one real gRPC echo backend each answering its subset name (v1, v2, v3), a
 * DestinationRule with those subsets and a VirtualService routing {@code end-user: jason} to
 * v3, aborting {@code x-fail: yes} with UNAVAILABLE and splitting the rest 80/20 between v1 and
 * v2, all in the watched config directory. {@link #run} drives a client through it and checks:
 * the split within 5 points over 1,000 calls, the header match, the abort's status, an atomic
 * edit of the routes file moving all traffic to v2, and every type ACKed with no NACK.
 */
final class XdsClientScenario implements AutoCloseable {
    static final String HOST = "echo.test.svc.cluster.local";
    static final String TARGET_AUTHORITY = HOST + ":7070";
    /** The same types as /debug/syncz names them. */
    static final List<String> KINDS = List.of("cluster", "listener", "route", "endpoint");
    static final String[] TYPES = {"cds", "lds", "rds", "eds"};
    static final String SPLIT = """
            - {destination: {host: echo, subset: v1}, weight: 80}
            - {destination: {host: echo, subset: v2}, weight: 20}""";
    static final String ALL_TO_V2 = """
            - {destination: {host: echo, subset: v2}, weight: 100}""";
    /** 5 points of 1,000 calls are 50 calls, about 4 standard deviations of an 80/20 split. */
    static final int SPLIT_CALLS = 1000;

    /** What a client stack reports for a phase of sequential calls. */
    record PhaseResult(int ok, Map<String, Integer> backends, Map<String, Integer> errors, int unexpected) {
    }

    /** A client stack under test: runs {@code calls} unary calls, expecting status {@code expect}. */
    interface Client {
        PhaseResult phase(int calls, Map<String, String> headers, String expect) throws Exception;

        /** What to show when an assertion fails (the client's own log, for one). */
        default String diagnostics() {
            return "";
        }
    }

    final Path dir;
    final Server v1;
    final Server v2;
    final Server v3;
    MeshPilotServer server;

    /** Starts the backends and writes the config directory under {@code dir}; {@link #start} starts MeshPilot. */
    XdsClientScenario(Path dir) throws IOException {
        this.dir = dir;
        v1 = ProxylessGrpcTest.backend("v1");
        v2 = ProxylessGrpcTest.backend("v2");
        v3 = ProxylessGrpcTest.backend("v3");
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("echo.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  workloadSelector: {labels: {app: echo}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-v1, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %d}, labels: {app: echo, version: v1}, locality: r1/z1}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-v2, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %d}, labels: {app: echo, version: v2}, locality: r1/z2}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: echo-v3, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %d}, labels: {app: echo, version: v3}, locality: r1/z3}
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: echo, namespace: test}
                spec:
                  host: echo
                  subsets:
                  - {name: v1, labels: {version: v1}}
                  # gRPC has no LEAST_REQUEST over lb_policy (grpc-js-xds NACKed the whole CDS
                  # response): proxyless clients get ROUND_ROBIN, as from istiod
                  - {name: v2, labels: {version: v2}, trafficPolicy: {loadBalancer: {simple: LEAST_REQUEST}}}
                  - {name: v3, labels: {version: v3}}
                """.formatted(v1.getPort(), v2.getPort(), v3.getPort()));
        Files.writeString(config.resolve("routes.yaml"), routes(SPLIT));
    }

    /** The VirtualService with {@code defaultRoute} (YAML list items) as its last route. */
    static String routes(String defaultRoute) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo]
                  http:
                  - match: [{headers: {end-user: {exact: jason}}}]
                    route: [{destination: {host: echo, subset: v3}}]
                  - match: [{headers: {x-fail: {exact: "yes"}}}]
                    fault: {abort: {grpcStatus: UNAVAILABLE, percentage: {value: 100}}}
                    route: [{destination: {host: echo, subset: v1}}]
                  - route:
                %s""".formatted(defaultRoute.strip().indent(4));
    }

    /** Starts MeshPilot on the scenario's directory with {@code flags} added. */
    MeshPilotServer start(String... flags) throws MeshPilotServer.StartupFailure {
        server = TestServers.start(dir, flags);
        return server;
    }

    int port(String name) {
        return server.ports().get(name);
    }

    /** The xDS bootstrap of a proxyless client with this node id on the plaintext ADS port. */
    Map<String, Object> bootstrap(String nodeId) {
        return bootstrap(port("grpc"), nodeId);
    }

    /** The xDS bootstrap of a proxyless client in locality r1/z1 with this node id on ADS port {@code adsPort}. */
    static Map<String, Object> bootstrap(int adsPort, String nodeId) {
        return Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + adsPort,
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                // grpc-js-xds insists on node.locality (grpc-java and C-core do not)
                "node", Map.of("id", nodeId, "cluster", "client.test", "locality", Map.of("region", "r1", "zone", "z1"),
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test")));
    }

    Path writeBootstrap(String nodeId) throws IOException {
        Path file = dir.resolve("bootstrap-" + nodeId.replaceAll("[^A-Za-z0-9.-]", "_") + ".json");
        Files.writeString(file, new Gson().toJson(bootstrap(nodeId)));
        return file;
    }

    /** Runs the whole scenario with {@code client}, whose xDS node id is {@code nodeId}. */
    void run(String nodeId, Client client) throws Exception {
        int http = port("http");
        assertEquals("[]", Http.get(http, "/api/v1/config-errors").body());
        long rejectsBefore = rejects();

        PhaseResult split = client.phase(SPLIT_CALLS, Map.of(), "OK");
        String why = " (" + split + ")" + client.diagnostics();
        assertEquals(SPLIT_CALLS, split.ok(), "every default-route call succeeds" + why);
        int v1Calls = split.backends().getOrDefault("v1", 0);
        assertEquals(SPLIT_CALLS, v1Calls + split.backends().getOrDefault("v2", 0), "the split goes to v1 and v2 only" + why);
        assertTrue(Math.abs(v1Calls - SPLIT_CALLS * 8 / 10) <= SPLIT_CALLS / 20, "80/20 within 5 points" + why);

        PhaseResult jason = client.phase(20, Map.of("end-user", "jason"), "OK");
        assertEquals(Map.of("v3", 20), jason.backends(), "the header match (end-user: jason) picks subset v3: "
                + jason + client.diagnostics());

        PhaseResult abort = client.phase(5, Map.of("x-fail", "yes"), "UNAVAILABLE");
        assertEquals(0, abort.unexpected(), "the fault abort fails every call with UNAVAILABLE: " + abort + client.diagnostics());

        // an atomic edit of the routes file (a temp file renamed over it) moves traffic, no restart
        Path tmp = dir.resolve("config/.routes.tmp");
        Files.writeString(tmp, routes(ALL_TO_V2));
        Files.move(tmp, dir.resolve("config/routes.yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // each check is 20 real calls; the push lands within the debounce plus a round trip
        while (!client.phase(20, Map.of(), "OK").backends().equals(Map.of("v2", 20)) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        PhaseResult moved = client.phase(100, Map.of(), "OK");
        assertEquals(Map.of("v2", 100), moved.backends(), "all traffic moved to v2: " + moved + client.diagnostics());

        JsonObject sync = syncz(http, nodeId);
        for (String kind : KINDS) {
            assertTrue(sync.has(kind + "_sent") && !sync.get(kind + "_sent").getAsString().isEmpty(),
                    kind + " sent: " + sync);
            assertEquals(sync.get(kind + "_sent").getAsString(), sync.get(kind + "_acked").getAsString(),
                    kind + " ACKed: " + sync + client.diagnostics());
        }
        sync.getAsJsonObject("resources").entrySet().forEach(e -> assertTrue(
                !e.getValue().getAsJsonObject().has("lastError"), "no NACK of " + e.getKey() + ": " + sync
                        + client.diagnostics()));
        assertEquals(rejectsBefore, rejects(), "pilot_total_xds_rejects unchanged (no NACK at any point)" + client.diagnostics());
    }

    /**
     * The connection's /debug/syncz entry once every type's last response is ACKed (or after 5 s);
     * syncz names a proxy by istiod's proxy ID, the third {@code ~} field of its node id.
     */
    static JsonObject syncz(int http, String nodeId) throws InterruptedException {
        String proxyId = nodeId.split("~")[2];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            JsonObject mine = null;
            for (JsonElement e : JsonParser.parseString(Http.get(http, "/debug/syncz").body()).getAsJsonArray()) {
                JsonObject o = e.getAsJsonObject();
                if (o.get("proxy").getAsString().equals(proxyId)) {
                    mine = o;
                }
            }
            assertTrue(mine != null, nodeId + " is in /debug/syncz");
            JsonObject m = mine;
            boolean synced = KINDS.stream().allMatch(k ->
                    m.has(k + "_sent") && m.get(k + "_sent").equals(m.get(k + "_acked")));
            if (synced || System.nanoTime() > deadline) {
                return mine;
            }
            Thread.sleep(100);
        }
    }

    static long rejects() {
        long n = 0;
        for (String t : TYPES) {
            n += AdsProtocol.XDS_REJECTS.value(t);
        }
        return n;
    }

    static Map<String, Integer> counts(JsonObject o) {
        Map<String, Integer> m = new LinkedHashMap<>();
        o.entrySet().forEach(e -> m.put(e.getKey(), e.getValue().getAsInt()));
        return m;
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
        Stream.of(v1, v2, v3).forEach(Server::shutdownNow);
    }
}
