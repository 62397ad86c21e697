package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.Server;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second, independent xDS client stack: {@code @grpc/grpc-js-xds} (Node.js), run as a real
 * process ({@code src/test/node/xds-client/client.js}) against our plaintext ADS port with the
 * grpc generator, making routed calls to real gRPC backends (the same setup as
 * {@link ProxylessGrpcTest}, which covers grpc-java). The npm packages (exact versions pinned
 * in that folder's package.json) are installed by this test into {@code target/node-xds-client}
 * once and reused while package.json is unchanged. Needs {@code node} and {@code npm} on PATH:
 * without them the test fails, it does not skip.
 */
class GrpcJsXdsClientTest {
    static final String HOST = "echo.test.svc.cluster.local";
    static final String NODE_ID = "sidecar~127.0.0.1~node-client.test~test.svc.cluster.local";
    static final String[] TYPES = {"cds", "lds", "rds", "eds"};
    /** The same types as /debug/syncz names them. */
    static final List<String> KINDS = List.of("cluster", "listener", "route", "endpoint");
    static final Path HOME = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
    static final Path CLIENT_SRC = HOME.resolve("src/test/node/xds-client");
    static final Path CLIENT_DIR = HOME.resolve("target/node-xds-client");

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static Server v1;
    static Server v2;
    static Server v3;

    @BeforeAll
    static void start() throws Exception {
        installClient();
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
                ---
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
                    - {destination: {host: echo, subset: v1}, weight: 75}
                    - {destination: {host: echo, subset: v2}, weight: 25}
                """.formatted(v1.getPort(), v2.getPort(), v3.getPort()));
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        Stream.of(v1, v2, v3).filter(s -> s != null).forEach(Server::shutdownNow);
    }

    @Test
    void grpcJsXdsRoutesThroughOurConfigWithoutNack() throws Exception {
        assertEquals("[]", Http.get(server.ports().get("http"), "/api/v1/config-errors").body());
        long rejectsBefore = rejects();
        Path bootstrap = dir.resolve("bootstrap.json");
        Files.writeString(bootstrap, new Gson().toJson(Map.of(
                "xds_servers", List.of(Map.of("server_uri", "127.0.0.1:" + server.ports().get("grpc"),
                        "channel_creds", List.of(Map.of("type", "insecure")), "server_features", List.of("xds_v3"))),
                // grpc-js-xds insists on node.locality (grpc-java does not)
                "node", Map.of("id", NODE_ID, "cluster", "node-client.test", "locality", Map.of("region", "r1", "zone", "z1"),
                        "metadata", Map.of("GENERATOR", "grpc", "NAMESPACE", "test")))));
        Path stderr = CLIENT_DIR.resolve("client.stderr"); // kept after the run, for a look at the xDS trace
        ProcessBuilder pb = new ProcessBuilder("node", "client.js", "--hold", "--deadline-ms", "15000",
                "400", "20@end-user=jason", "5@x-fail=yes!UNAVAILABLE")
                .directory(CLIENT_DIR.toFile()).redirectError(stderr.toFile());
        pb.environment().put("GRPC_XDS_BOOTSTRAP", bootstrap.toString());
        pb.environment().put("GRPC_TRACE", "xds_client,xds_resolver");
        pb.environment().put("GRPC_VERBOSITY", "DEBUG");
        Process node = startOrFail(pb);
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            String json;
            try {
                json = line.get(30, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fail("client.js printed nothing within 30 s; /debug/syncz: "
                        + Http.get(server.ports().get("http"), "/debug/syncz").body() + tail(stderr));
                return;
            }
            if (json == null) {
                fail("client.js exited (" + node.waitFor() + ") without a result" + tail(stderr));
            }
            JsonObject result = JsonParser.parseString(json).getAsJsonObject();
            JsonArray phases = result.getAsJsonArray("phases");
            String why = "client.js result " + json + tail(stderr);

            JsonObject split = phases.get(0).getAsJsonObject();
            assertEquals(400, split.get("ok").getAsInt(), "every default-route call succeeds: " + why);
            Map<String, Integer> seen = counts(split.getAsJsonObject("backends"));
            int v1Calls = seen.getOrDefault("v1", 0);
            assertEquals(400, v1Calls + seen.getOrDefault("v2", 0), "the default route goes to v1 and v2 only: " + why);
            assertTrue(Math.abs(v1Calls - 300) <= 45, "75/25 within 11 points (5 sigma) over 400 calls: " + why);

            JsonObject jason = phases.get(1).getAsJsonObject();
            assertEquals(Map.of("v3", 20), counts(jason.getAsJsonObject("backends")),
                    "the header match (end-user: jason) picks subset v3: " + why);

            JsonObject abort = phases.get(2).getAsJsonObject();
            assertEquals(0, abort.get("ok").getAsInt(), "the fault abort fails every call: " + why);
            assertEquals(0, abort.get("unexpected").getAsInt(), "the fault abort's status is UNAVAILABLE: " + why);
            assertEquals(0, result.get("unexpected").getAsInt(), why);

            // still connected (--hold): what the control plane recorded for this connection
            int http = server.ports().get("http");
            JsonObject proxy = JsonParser.parseString(Http.get(http, "/api/v1/proxies/" + NODE_ID).body()).getAsJsonObject();
            assertEquals("grpc", proxy.get("generator").getAsString(), "served by the grpc generator: " + proxy);
            JsonObject sync = syncz(http);
            for (String kind : KINDS) {
                assertTrue(sync.has(kind + "_sent") && !sync.get(kind + "_sent").getAsString().isEmpty(),
                        kind + " sent: " + sync);
                assertEquals(sync.get(kind + "_sent").getAsString(), sync.get(kind + "_acked").getAsString(),
                        kind + " ACKed: " + sync + tail(stderr));
                assertTrue(!sync.has(kind + "_nack"), "no " + kind + " NACK: " + sync + tail(stderr));
            }
            assertEquals(rejectsBefore, rejects(), "pilot_total_xds_rejects unchanged (no NACK at any point)" + tail(stderr));

            node.getOutputStream().close(); // ends --hold
            assertTrue(node.waitFor(10, TimeUnit.SECONDS), "client.js exits once stdin closes");
            assertEquals(0, node.exitValue(), why);
        } finally {
            node.destroyForcibly();
        }
    }

    /** This connection's /debug/syncz entry once every type's last response is ACKed (or after 5 s). */
    static JsonObject syncz(int http) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        JsonObject mine = null;
        while (true) {
            for (JsonElement e : JsonParser.parseString(Http.get(http, "/debug/syncz").body()).getAsJsonArray()) {
                JsonObject o = e.getAsJsonObject();
                if (o.get("proxy").getAsString().startsWith(NODE_ID)) {
                    mine = o;
                }
            }
            assertTrue(mine != null, "the grpc-js connection is in /debug/syncz");
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
            n += DiscoveryServer.XDS_REJECTS.value(t);
        }
        return n;
    }

    static Map<String, Integer> counts(JsonObject o) {
        Map<String, Integer> m = new HashMap<>();
        o.entrySet().forEach(e -> m.put(e.getKey(), e.getValue().getAsInt()));
        return m;
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            // a NACK is a discovery request whose error_detail has a "message"; grpc-js-xds's
            // own failures say "failed" or "ended"
            List<String> interesting = lines.stream().filter(l -> l.contains("\"message\"") || l.contains("failed")
                    || l.contains("ADS stream ended") || l.contains("Error")).toList();
            List<String> show = new ArrayList<>(interesting.subList(Math.max(0, interesting.size() - 20), interesting.size()));
            show.add("... last lines:");
            show.addAll(lines.subList(Math.max(0, lines.size() - 20), lines.size()));
            return "\n--- " + log + " (" + lines.size() + " lines) ---\n" + String.join("\n", show);
        } catch (IOException e) {
            return "\n(" + log + " unreadable: " + e + ")";
        }
    }

    // ---- installing the Node client into target/ ----

    /**
     * Copies package.json and client.js to target/node-xds-client and runs {@code npm install}
     * there, unless an earlier run already installed the same package.json.
     */
    static void installClient() throws Exception {
        String version = run(new ProcessBuilder("node", "--version"), 30).strip();
        run(new ProcessBuilder("npm", "--version"), 60);
        assertTrue(version.matches("v(\\d{3,}|[2-9]\\d)\\..*"), "GrpcJsXdsClientTest needs Node.js >= 20, found " + version);
        Files.createDirectories(CLIENT_DIR);
        Files.copy(CLIENT_SRC.resolve("client.js"), CLIENT_DIR.resolve("client.js"), StandardCopyOption.REPLACE_EXISTING);
        String wanted = Files.readString(CLIENT_SRC.resolve("package.json"));
        Path stamp = CLIENT_DIR.resolve(".installed-package.json");
        if (Files.exists(stamp) && Files.readString(stamp).equals(wanted)
                && Files.exists(CLIENT_DIR.resolve("node_modules/@grpc/grpc-js-xds/package.json"))) {
            return;
        }
        Files.deleteIfExists(stamp);
        deleteTree(CLIENT_DIR.resolve("node_modules"));
        Files.writeString(CLIENT_DIR.resolve("package.json"), wanted);
        // --ignore-scripts: nothing in this tree needs an install script (protobufjs's only checks versions)
        run(new ProcessBuilder("npm", "install", "--no-audit", "--no-fund", "--no-package-lock", "--ignore-scripts")
                .directory(CLIENT_DIR.toFile()), 600);
        Files.writeString(stamp, wanted);
    }

    static Process startOrFail(ProcessBuilder pb) {
        try {
            return pb.start();
        } catch (IOException e) {
            fail("GrpcJsXdsClientTest runs the npm package @grpc/grpc-js-xds and needs `node` (>= 20) and `npm` "
                    + "on PATH (the test installs the packages into target/node-xds-client itself); could not run "
                    + pb.command() + ": " + e.getMessage());
            throw new AssertionError(e);
        }
    }

    /** Runs a command to completion, failing the test (with its output) if it fails or overruns. */
    static String run(ProcessBuilder pb, int timeoutSeconds) throws Exception {
        Path log = Files.createTempFile("node-xds-client", ".log");
        try {
            Process p = startOrFail(pb.redirectErrorStream(true).redirectOutput(log.toFile()));
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(pb.command() + " took over " + timeoutSeconds + " s:\n" + Files.readString(log));
            }
            String output = Files.readString(log);
            if (p.exitValue() != 0) {
                fail(pb.command() + " exited " + p.exitValue() + ":\n" + output);
            }
            return output;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
