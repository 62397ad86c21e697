package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A third, independent xDS client stack: gRPC C-core (under Python, C++, Ruby and PHP gRPC),
 * through Debian's {@code python3-grpcio} for {@code /usr/bin/python3}, run as a real process
 * ({@code src/test/python/xds-client/client.py}) through {@link XdsClientScenario}, the scenario
 * grpc-java ({@link ProxylessGrpcTest}) and grpc-js ({@link GrpcJsXdsClientTest}) run too.
 * {@code bin/test} installs python3-grpcio when it is missing; without it this test fails, it
 * does not skip.
 *
 * <p>C-core runs on the Netty transport. On Helidon 4.4 it cannot connect at all: Helidon's
 * HTTP/2 server answers its first HEADERS with GOAWAY PROTOCOL_ERROR (see
 * {@link CCoreHeadersEncodingTest}); {@link #healthCheckOnEachTransport} asserts that limit, so
 * it fails, and tells, once Helidon is fixed.
 */
class CCoreXdsClientTest {
    static final String PYTHON = "/usr/bin/python3";
    static final Path HOME = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
    static final Path CLIENT = HOME.resolve("src/test/python/xds-client/client.py");
    static final String NODE_ID = "sidecar~127.0.0.1~ccore-client.test~test.svc.cluster.local";
    static final String NEEDS = "CCoreXdsClientTest runs gRPC C-core through Debian's python3-grpcio for " + PYTHON
            + " (bin/test installs it: apt-get install python3-grpcio)";

    @TempDir
    Path dir;

    @BeforeAll
    static void grpcioInstalled() throws Exception {
        Path out = Files.createTempFile("ccore-import", ".out");
        try {
            Process p = new ProcessBuilder(PYTHON, "-c", "import grpc; print(grpc.__version__)").redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            boolean exited = finished(p, "`import grpc`");
            assertTrue(exited && p.exitValue() == 0, NEEDS + "; `import grpc` failed: " + Files.readString(out).strip());
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /**
     * Waits up to 30 s for {@code p}, which writes its output to a file (read after it exited,
     * so a client that hangs cannot hang the test); a process still running then is killed.
     */
    static boolean finished(Process p, String what) throws InterruptedException {
        if (p.waitFor(30, TimeUnit.SECONDS)) {
            return true;
        }
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        fail(what + " did not finish within 30 s");
        return false;
    }

    @Test
    void cCoreRunsTheProxylessScenarioOnNetty() throws Exception {
        try (XdsClientScenario scenario = new XdsClientScenario(dir)) {
            scenario.start("--grpcTransport", "netty");
            ProcessBuilder pb = new ProcessBuilder(PYTHON, CLIENT.toString(), "--deadline-ms", "15000");
            pb.environment().put("GRPC_XDS_BOOTSTRAP", scenario.writeBootstrap(NODE_ID).toString());
            pb.environment().put("GRPC_TRACE", "xds_client");
            pb.environment().put("GRPC_VERBOSITY", "DEBUG");
            Path stderr = HOME.resolve("target/ccore-xds-client.stderr"); // kept after the run, for a look at the xDS trace
            Files.createDirectories(stderr.getParent());
            try (ExternalXdsClient ccore = ExternalXdsClient.start(pb, stderr, NEEDS)) {
                scenario.run(NODE_ID, ccore);
                // how C-core announces itself in node.user_agent_name/version (from its xDS trace)
                assertTrue(Files.readString(stderr).contains("user_agent_name: \"gRPC C-core"),
                        "the client is C-core" + ccore.diagnostics());
                assertEquals(0, ccore.finish(), "client.py exits 0 (every call ended as expected)" + ccore.diagnostics());
            }
        }
    }

    /**
     * A plain (non-xDS) C-core call, grpc.health.v1.Health/Check, to the plaintext gRPC port:
     * served on Netty; on Helidon 4.4, the documented limit: the connection is refused with
     * GOAWAY PROTOCOL_ERROR before any call, so C-core reports UNAVAILABLE.
     */
    @Test
    void healthCheckOnEachTransport() throws Exception {
        try (MeshPilotServer netty = TestServers.start(Files.createDirectories(dir.resolve("netty")), "--grpcTransport", "netty")) {
            JsonObject served = health(netty.ports().get("grpc"));
            assertEquals("OK", served.get("code").getAsString(), "C-core's Health/Check on Netty: " + served);
            assertEquals("0801", served.get("response").getAsString(), "status SERVING: " + served);
        }
        try (MeshPilotServer helidon = TestServers.start(Files.createDirectories(dir.resolve("helidon")), "--grpcTransport", "helidon")) {
            JsonObject refused = health(helidon.ports().get("grpc"));
            assertEquals("UNAVAILABLE", refused.get("code").getAsString(),
                    "Helidon 4.4 refuses C-core's HEADERS (if this call now succeeds, Helidon was fixed: update the "
                            + "README's transport limits and this test): " + refused);
        }
    }

    static JsonObject health(int port) throws Exception {
        Path out = Files.createTempFile("ccore-health", ".out");
        try {
            Process p = new ProcessBuilder(PYTHON, CLIENT.toString(), "--health", "127.0.0.1:" + port)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).redirectOutput(out.toFile()).start();
            finished(p, "client.py --health");
            return JsonParser.parseString(Files.readString(out).strip()).getAsJsonObject();
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
