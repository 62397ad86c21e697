package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.helidon.jersey.webserver.JaxRsService;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stopping the server says nothing an operator's pipeline alerts on: the JAX-RS applications of
 * the http and monitoring listeners shut down without Helidon's "Exception while shutting down
 * Jersey's application handler" WARN.
 */
class ShutdownLogTest {
    @Test
    void theJaxRsApplicationsStopWithoutAWarning(@TempDir Path dir) throws Exception {
        MeshPilotServer server = TestServers.start(dir);
        try (CapturedLog jersey = new CapturedLog(JaxRsService.class)) {
            // each application has served a request before it is shut down
            assertEquals(200, Http.get(server.ports().get("http"), "/ready").status());
            assertEquals(200, Http.get(server.ports().get("monitoring"), "/version").status());
            server.close();
            assertEquals(List.of(), jersey.lines().stream()
                    .filter(line -> line.startsWith("WARNING") || line.startsWith("SEVERE")).toList());
        }
    }
}
