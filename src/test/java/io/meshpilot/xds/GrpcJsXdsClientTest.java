package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.testing.Http;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second, independent xDS client stack: {@code @grpc/grpc-js-xds} (Node.js), run as a real
 * process ({@code src/test/node/xds-client/client.js}) against our plaintext ADS port with the
 * grpc generator, through {@link XdsClientScenario}, the scenario grpc-java
 * ({@link ProxylessGrpcTest}) and gRPC C-core ({@link CCoreXdsClientTest}) run too. The npm
 * packages (exact versions pinned in that folder's package.json) are installed by this test into
 * {@code target/node-xds-client} once and reused while package.json is unchanged. Needs
 * {@code node} and {@code npm} on PATH: without them the test fails, it does not skip.
 */
class GrpcJsXdsClientTest {
    static final String NODE_ID = "sidecar~127.0.0.1~node-client.test~test.svc.cluster.local";
    static final Path HOME = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
    static final Path CLIENT_SRC = HOME.resolve("src/test/node/xds-client");
    static final Path CLIENT_DIR = HOME.resolve("target/node-xds-client");
    static final String NEEDS = "GrpcJsXdsClientTest runs the npm package @grpc/grpc-js-xds and needs `node` (>= 20) "
            + "and `npm` on PATH (the test installs the packages into target/node-xds-client itself)";

    @TempDir
    Path dir;

    @Test
    void grpcJsXdsRunsTheProxylessScenarioWithoutNack() throws Exception {
        installClient();
        try (XdsClientScenario scenario = new XdsClientScenario(dir)) {
            scenario.start();
            ProcessBuilder pb = new ProcessBuilder("node", "client.js", "--deadline-ms", "15000")
                    .directory(CLIENT_DIR.toFile());
            pb.environment().put("GRPC_XDS_BOOTSTRAP", scenario.writeBootstrap(NODE_ID).toString());
            pb.environment().put("GRPC_TRACE", "xds_client,xds_resolver");
            pb.environment().put("GRPC_VERBOSITY", "DEBUG");
            // kept after the run, for a look at the xDS trace
            try (ExternalXdsClient node = ExternalXdsClient.start(pb, CLIENT_DIR.resolve("client.stderr"), NEEDS)) {
                scenario.run(NODE_ID, node);
                JsonObject proxy = JsonParser.parseString(Http.get(scenario.port("http"), "/api/v1/proxies/" + NODE_ID)
                        .body()).getAsJsonObject();
                assertEquals("grpc", proxy.get("generator").getAsString(), "served by the grpc generator: " + proxy);
                // how grpc-js announces itself in node.user_agent_name/version (from its xDS trace)
                assertTrue(Files.readString(CLIENT_DIR.resolve("client.stderr")).contains("\"user_agent_name\": \"gRPC Node"),
                        "the client is grpc-js" + node.diagnostics());
                assertEquals(0, node.finish(), "client.js exits 0 (every call ended as expected)" + node.diagnostics());
            }
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
            fail(NEEDS + "; could not run " + pb.command() + ": " + e.getMessage());
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
