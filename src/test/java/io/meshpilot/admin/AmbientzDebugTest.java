package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's {@code /debug/ambientz} (pilot/pkg/xds/debug.go {@code ambientz}) over a whole server in
 * Kubernetes mode with PILOT_ENABLE_AMBIENT, an ambient namespace applied with kubectl to the API
 * stand-in: {@code {workloads, services, policies}}, each the workload API message as protobuf JSON,
 * with istiod's rewrite of IP bytes to the bytes of the IP's text (so JSON shows the base64 of
 * "10.1.0.1", not of its four bytes).
 */
class AmbientzDebugTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: ambient, labels: {istio.io/dataplane-mode: ambient}}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: echo, namespace: ambient}
                spec:
                  clusterIP: 10.96.0.10
                  clusterIPs: [10.96.0.10]
                  selector: {app: echo}
                  ports: [{name: tcp, port: 9000}]
                ---
                apiVersion: v1
                kind: Pod
                metadata:
                  name: echo-1
                  namespace: ambient
                  labels: {app: echo}
                  annotations: {ambient.istio.io/redirection: enabled}
                spec:
                  nodeName: node1
                  serviceAccountName: echo
                  containers: [{name: app, image: app}]
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: from-shop, namespace: ambient}
                spec:
                  action: DENY
                  rules: [{from: [{source: {namespaces: [shop]}}]}]
                """, "apply", "-f", "-").ok();
        kubectl.run("patch", "pod", "-n", "ambient", "echo-1", "--subresource=status", "--type=merge", "-p", """
                {"status": {"phase": "Running", "podIP": "10.1.0.1", "podIPs": [{"ip": "10.1.0.1"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}}""").ok();
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, dir.resolve("kubeconfig")),
                Map.of("PILOT_ENABLE_AMBIENT", "true")));
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

    static JsonObject ambientz(String query) {
        Http.Reply r = Http.get(server.ports().get("http"), "/debug/ambientz" + query);
        assertEquals(200, r.status(), r.body());
        assertTrue(r.contentType().startsWith("application/json"), r.contentType());
        return JsonParser.parseString(r.body()).getAsJsonObject();
    }

    /** istiod's rewriteAddress: the IP's text as bytes, which protobuf JSON prints as base64. */
    static String ipText(String ip) {
        return Base64.getEncoder().encodeToString(ip.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void workloadsServicesAndPoliciesAsIstiodPrintsThem() throws Exception {
        Await.until("the pod, the Service and the policy in /debug/ambientz", WAIT, () -> {
            JsonObject o = ambientz("");
            return o.getAsJsonArray("workloads").size() == 1 && o.getAsJsonArray("services").size() == 1
                    && o.getAsJsonArray("policies").size() == 1;
        });
        JsonObject out = ambientz("");
        assertEquals(Set.of("workloads", "services", "policies"), out.keySet());

        JsonObject workload = out.getAsJsonArray("workloads").get(0).getAsJsonObject();
        assertEquals("Kubernetes//Pod/ambient/echo-1", workload.get("uid").getAsString());
        assertEquals("echo-1", workload.get("name").getAsString());
        assertEquals("ambient", workload.get("namespace").getAsString());
        assertEquals("echo", workload.get("serviceAccount").getAsString());
        assertEquals("node1", workload.get("node").getAsString());
        assertEquals("HBONE", workload.get("tunnelProtocol").getAsString());
        assertEquals(array(ipText("10.1.0.1")), workload.get("addresses"));
        assertTrue(workload.getAsJsonObject("services").has("ambient/echo.ambient.svc.cluster.local"), workload.toString());

        JsonObject service = out.getAsJsonArray("services").get(0).getAsJsonObject();
        assertEquals("echo.ambient.svc.cluster.local", service.get("hostname").getAsString());
        assertEquals("echo", service.get("name").getAsString());
        JsonObject vip = new JsonObject();
        vip.addProperty("address", ipText("10.96.0.10")); // network "" is a default value: left out
        assertEquals(array(vip), service.get("addresses"));

        // ztunnel's conversion of the policy (scope NAMESPACE, DENY, one group of one match), in
        // istiod's names of the security proto (groups/rules/matches; ztunnel calls them rules/clauses)
        assertEquals(JsonParser.parseString("""
                {"name": "from-shop", "namespace": "ambient", "scope": "NAMESPACE", "action": "DENY",
                 "groups": [{"rules": [{"matches": [{"namespaces": [{"exact": "shop"}]}]}]}]}"""),
                out.getAsJsonArray("policies").get(0));
    }

    @Test
    void prettyIndentsTheSameAnswer() {
        Http.Reply pretty = Http.get(server.ports().get("http"), "/debug/ambientz?pretty");
        assertEquals(200, pretty.status(), pretty.body());
        assertTrue(pretty.body().contains("\n    \""), pretty.body());
        assertEquals(JsonParser.parseString(pretty.body()).getAsJsonObject().keySet(), ambientz("").keySet());
    }

    @Test
    void listedInDebugListAndTheIndex() {
        Http.Reply list = Http.get(server.ports().get("http"), "/debug/list");
        assertTrue(JsonParser.parseString(list.body()).getAsJsonArray().contains(JsonParser.parseString("\"ambientz\"")),
                list.body());
        Http.Reply index = Http.get(server.ports().get("http"), "/debug");
        assertTrue(index.body().contains("<a href='/debug/ambientz'>/debug/ambientz</a></td><td>Debug support for ambient</td>"),
                index.body());
    }

    static JsonArray array(JsonElement... items) {
        JsonArray a = new JsonArray();
        for (JsonElement e : items) {
            a.add(e);
        }
        return a;
    }

    static JsonArray array(String item) {
        JsonArray a = new JsonArray();
        a.add(item);
        return a;
    }
}
