package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every step of newServer and of start, in Kubernetes mode with the status controller on, is
 * timed: it has its own entry in {@code GET /api/v1/server} and its own start-up log line, in
 * the order the steps ran.
 */
class StartStepsTest {
    static final Jsonb JSON = JsonbBuilder.create();

    /** The steps of a Kubernetes-mode server with status enabled, in the order they run. */
    static final List<String> STEPS = List.of("args", "environment", "kube-client", "mesh-watchers", "ca",
            "config-stores", "config-validation", "sidecar-injector", "discovery-init", "service-registries",
            "discovery-server", "registry-event-handlers", "kube-controllers", "servers", "readiness-probes",
            "injection-webhook-patcher", "kube-informers", "namespace-controller", "validation-webhook-patcher",
            "config-sync", "registries-synced", "gatewayclass-controller", "first-push", "status-controller",
            "gateway-deployment", "gateway-api-status", "metrics", "serving", "start-functions");

    @TempDir
    Path dir;

    @Test
    @SuppressWarnings("unchecked")
    void everyStepIsListedWithItsTimeAndLogged() throws Exception {
        try (FakeApiServer api = FakeApiServer.start();
             CapturedLog log = new CapturedLog("io.meshpilot.startup")) {
            api.installIstioCrds();
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(
                    NamespaceControllerServerTest.kubernetesFlags(dir, api),
                    Map.of("POD_NAME", "istiod-1", "PILOT_ENABLE_STATUS", "true")))) {
                Http.Reply r = Http.get(server.ports().get("http"), "/api/v1/server");
                assertEquals(200, r.status());
                List<Map<String, Object>> components = (List<Map<String, Object>>) JSON.fromJson(r.body(), Map.class)
                        .get("components");
                assertEquals(STEPS, components.stream().map(c -> (String) c.get("name")).toList());
                for (Map<String, Object> c : components) {
                    double millis = ((Number) c.get("millis")).doubleValue();
                    assertTrue(millis >= 0, c.get("name") + " has a time: " + c);
                    assertTrue(log.has("component=" + c.get("name") + " started in "),
                            c.get("name") + " has its start-up log line: " + log.lines());
                }
            }
        }
    }
}
