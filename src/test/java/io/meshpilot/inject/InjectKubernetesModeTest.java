package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.InjectWebhookCalls;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server in Kubernetes mode against the API server stand-in, called as the API server calls
 * its mutating webhook: a pod in a namespace labelled istio-injection=enabled comes back
 * injected with the istio-sidecar-injector ConfigMap's values and config; one in a namespace
 * labelled disabled comes back untouched.
 */
class InjectKubernetesModeTest {
    @TempDir
    Path dir;

    static String injectorConfigMap(String tag) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: istio-sidecar-injector, namespace: istio-system}
                data:
                  config: |
                    policy: enabled
                    injectedAnnotations:
                      example.com/injected-by: meshpilot
                    templates:
                      sidecar: "{{ istiod's template, not interpreted }}"
                      custom: "{{ an operator's own template, not rendered by MeshPilot }}"
                  values: |
                    {"global":{"hub":"example.com/istio","tag":"%s"}}
                """.formatted(tag);
    }

    @Test
    void aPodComesBackInjectedWithTheClustersInjectorSettings() throws Exception {
        try (FakeApiServer api = FakeApiServer.start()) {
            api.installIstioCrds();
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n");
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: legacy, labels: {istio-injection: disabled}}\n");
            api.apply(injectorConfigMap("1.27.3"));
            Files.createDirectories(dir.resolve("config"));
            List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                    "--registries", "Mock"));
            try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags,
                    Map.of("ENABLE_NATIVE_SIDECARS", "true")))) {
                HttpClient client = InjectWebhookCalls.tlsClientFor(server, "istiod.istio-system.svc");
                int webhook = server.ports().get("webhook");

                JsonObject pod = SidecarInjectionTableTest.hello();
                pod.getAsJsonObject("metadata").addProperty("namespace", "shop");
                JsonObject injected = awaitImage(client, webhook, pod, "example.com/istio/proxyv2:1.27.3");
                JsonObject proxy = SidecarInjectionTableTest.named(
                        injected.getAsJsonObject("spec").getAsJsonArray("initContainers"), "istio-proxy");
                assertNotNull(proxy, "ENABLE_NATIVE_SIDECARS=true: istio-proxy is a native sidecar");
                assertEquals("Always", proxy.get("restartPolicy").getAsString());
                assertEquals("meshpilot", injected.getAsJsonObject("metadata").getAsJsonObject("annotations")
                        .get("example.com/injected-by").getAsString());

                api.apply(injectorConfigMap("1.27.4"));
                awaitImage(client, webhook, pod, "example.com/istio/proxyv2:1.27.4");

                JsonObject legacy = SidecarInjectionTableTest.hello();
                legacy.getAsJsonObject("metadata").addProperty("namespace", "legacy");
                JsonObject response = InjectWebhookCalls.response(InjectWebhookCalls.post(client, webhook,
                        "/inject", "application/json", InjectWebhookCalls.review("legacy-1", "legacy", legacy)));
                assertTrue(response.get("allowed").getAsBoolean());
                assertNull(response.get("patch"), "namespace labelled istio-injection=disabled");

                // a template the ConfigMap has but MeshPilot does not render: refused naming it, never admitted bare
                long unsupported = InjectWebhook.UNSUPPORTED_TEMPLATE.value();
                JsonObject custom = SidecarInjectionTableTest.with(SidecarInjectionTableTest.hello(), "annotations",
                        Map.of("inject.istio.io/templates", "custom"));
                custom.getAsJsonObject("metadata").addProperty("namespace", "shop");
                response = InjectWebhookCalls.response(InjectWebhookCalls.post(client, webhook, "/inject",
                        "application/json", InjectWebhookCalls.review("custom-1", "shop", custom)));
                assertFalse(response.get("allowed").getAsBoolean(), response.toString());
                assertNull(response.get("patch"));
                assertEquals("failed to run injection template: MeshPilot does not render the injection template "
                                + "\"custom\" (it renders istiod's \"gateway\", \"grpc-agent\", \"grpc-simple\" and \"sidecar\" templates,"
                                + " and templates without Go template actions)",
                        response.getAsJsonObject("status").get("message").getAsString());
                assertEquals(unsupported + 1, InjectWebhook.UNSUPPORTED_TEMPLATE.value());
            }
        }
    }

    /** Calls /inject until the proxy has {@code image} (the ConfigMap reaches the injector through its watch). */
    static JsonObject awaitImage(HttpClient client, int port, JsonObject pod, String image) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        String last = "";
        while (System.nanoTime() < deadline) {
            String ns = pod.getAsJsonObject("metadata").get("namespace").getAsString();
            JsonObject response = InjectWebhookCalls.response(InjectWebhookCalls.post(client, port, "/inject",
                    "application/json", InjectWebhookCalls.review("shop-1", ns, pod)));
            JsonObject injected = InjectWebhookCalls.admitted(pod, response);
            JsonObject proxy = SidecarInjectionTableTest.named(
                    injected.getAsJsonObject("spec").has("initContainers")
                            ? injected.getAsJsonObject("spec").getAsJsonArray("initContainers") : new JsonArray(),
                    "istio-proxy");
            last = proxy == null ? response.toString() : proxy.get("image").getAsString();
            if (image.equals(last)) {
                return injected;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("proxy image never became " + image + "; last: " + last);
    }
}
