package io.meshpilot.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.kube.leaderelection.LeaderElection;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.IstioWebhooks;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole server in Kubernetes mode against the API server stand-in, which here plays the
 * real API server's admission step: for Istio objects it calls the webhooks of the stored
 * ValidatingWebhookConfiguration over TLS, trusting only their caBundle, and honours their
 * failurePolicy. The server patches the CA root into the caBundle of its revision's
 * validating and injection webhooks, switches validation to failurePolicy Fail once it sees
 * an invalid Gateway refused, patches again after a reset, and a bad VirtualService created
 * through the API server is refused with the reason.
 */
class WebhookConfigPatcherTest {
    static final String VALIDATOR = "istio-validator-istio-system";

    @TempDir
    Path dir;
    FakeApiServer api;
    final AtomicInteger webhookPort = new AtomicInteger();
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void start() {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                """);
        api.apply(IstioWebhooks.validator());
        api.apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: istio-sidecar-injector
                  labels: {app: sidecar-injector, istio.io/rev: default}
                webhooks:
                - name: rev.namespace.sidecar-injector.istio.io
                  admissionReviewVersions: [v1]
                  clientConfig: {service: {name: istiod, namespace: istio-system, path: /inject}}
                  sideEffects: None
                - name: other.example.com
                  admissionReviewVersions: [v1]
                  clientConfig: {service: {name: other, namespace: default, path: /mutate}}
                  sideEffects: None
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: istio-sidecar-injector-canary
                  labels: {app: sidecar-injector, istio.io/rev: canary}
                webhooks:
                - name: rev.namespace.sidecar-injector.istio.io
                  admissionReviewVersions: [v1]
                  clientConfig: {service: {name: istiod-canary, namespace: istio-system, path: /inject}}
                  sideEffects: None
                """);
        api.admission(this::callWebhooks);
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    /**
     * The API server's validating admission for Istio groups: each webhook of the stored
     * configuration is called at https://localhost:port (the Service's stand-in) trusting only
     * its caBundle; a call that cannot be made fails the request only under failurePolicy Fail.
     */
    String callWebhooks(String operation, String group, String version, String resource, String namespace,
                        JsonObject object, boolean dryRun) {
        if (!group.endsWith("istio.io")) {
            return null;
        }
        JsonObject config = api.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", null, VALIDATOR)
                .orElse(null);
        if (config == null) {
            return null;
        }
        for (JsonElement e : config.getAsJsonArray("webhooks")) {
            JsonObject wh = e.getAsJsonObject();
            String name = wh.get("name").getAsString();
            JsonObject clientConfig = wh.getAsJsonObject("clientConfig");
            String caBundle = clientConfig.has("caBundle") ? clientConfig.get("caBundle").getAsString() : "";
            boolean failClosed = wh.has("failurePolicy") && wh.get("failurePolicy").getAsString().equals("Fail");
            JsonObject review = AdmissionClient.review("v1", operation, object, dryRun);
            review.getAsJsonObject("request").getAsJsonObject("resource").addProperty("resource", resource);
            review.getAsJsonObject("request").addProperty("namespace", namespace);
            AdmissionClient.Reply reply;
            try {
                if (caBundle.isEmpty()) {
                    throw new IllegalStateException("x509: certificate signed by unknown authority (no caBundle)");
                }
                String pem = new String(Base64.getDecoder().decode(caBundle), StandardCharsets.UTF_8);
                reply = new AdmissionClient(pem, webhookPort.get()).admit(
                        clientConfig.getAsJsonObject("service").get("path").getAsString(), review);
            } catch (RuntimeException ex) {
                calls.add(name + " failed: " + ex.getMessage());
                if (failClosed) {
                    return "Internal error occurred: failed calling webhook \"" + name + "\": " + ex.getMessage();
                }
                continue;
            }
            calls.add(name + " answered " + reply.status());
            if (reply.status() != 200) {
                return "failed calling webhook \"" + name + "\": HTTP " + reply.status();
            }
            if (!reply.allowed()) {
                return "admission webhook \"" + name + "\" denied the request: " + reply.message();
            }
        }
        return null;
    }

    MeshPilotServer startServer() throws Exception {
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock"));
        int at = flags.indexOf("--configDir");
        flags.remove(at + 1);
        flags.remove(at);
        MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags, Map.of(
                // the API server reaches istiod by its Service name; this test reaches it as localhost
                "ISTIOD_CUSTOM_HOST", "localhost", "MESHPILOT_LEADER_ELECTION_TTL", "2s")));
        webhookPort.set(server.ports().get("webhook"));
        return server;
    }

    JsonObject webhookConfig(String kind, String name) {
        return api.get("admissionregistration.k8s.io/v1", kind, null, name).orElseThrow();
    }

    static List<JsonObject> entries(JsonObject config) {
        return config.getAsJsonArray("webhooks").asList().stream().map(JsonElement::getAsJsonObject).toList();
    }

    static String caBundle(JsonObject webhook) {
        JsonObject c = webhook.getAsJsonObject("clientConfig");
        return c.has("caBundle") ? c.get("caBundle").getAsString() : "";
    }

    static String failurePolicy(JsonObject webhook) {
        return webhook.has("failurePolicy") ? webhook.get("failurePolicy").getAsString() : "";
    }

    @Test
    void caBundlePatchedFailClosedOnceServingRepatchedAfterAResetAndABadVirtualServiceRefused() throws Exception {
        try (MeshPilotServer server = startServer()) {
            String root = Base64.getEncoder().encodeToString(
                    server.server().components().certificates().trustBundle().pem().getBytes(StandardCharsets.UTF_8));

            await("the validator patched with the CA root and failurePolicy Fail", () -> {
                JsonObject wh = entries(webhookConfig("ValidatingWebhookConfiguration", VALIDATOR)).get(0);
                return root.equals(caBundle(wh)) && failurePolicy(wh).equals("Fail");
            });
            assertTrue(calls.stream().anyMatch(c -> c.startsWith("rev.validation.istio.io answered 200")),
                    "the switch to Fail followed a refused dry run through the webhook: " + calls);
            assertTrue(api.get("coordination.k8s.io/v1", "Lease", "istio-system", LeaderElection.VALIDATION_CONTROLLER)
                    .isPresent(), "patched under istiod's validation-controller Lease");

            await("the injector's webhook patched", () -> root.equals(caBundle(
                    entries(webhookConfig("MutatingWebhookConfiguration", "istio-sidecar-injector")).get(0))));
            assertEquals("", caBundle(entries(webhookConfig("MutatingWebhookConfiguration", "istio-sidecar-injector"))
                    .get(1)), "a webhook not named *sidecar-injector.istio.io is left alone");
            assertEquals("", caBundle(entries(webhookConfig("MutatingWebhookConfiguration",
                    "istio-sidecar-injector-canary")).get(0)), "another revision's injector is left alone");

            // acceptance: through the API server, a bad VirtualService is refused with the reason
            HttpResponse<String> bad = create("networking.istio.io/v1", "virtualservices", """
                    {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                     "metadata": {"name": "reviews", "namespace": "default"},
                     "spec": {"hosts": ["reviews"], "http": [{"route": [{"destination": {"host": "reviews",
                              "port": {"number": 70000}}}]}]}}""");
            assertEquals(400, bad.statusCode(), bad.body());
            assertTrue(bad.body().contains("admission webhook \\\"rev.validation.istio.io\\\" denied the request: "
                    + "configuration is invalid: spec.http[0].route[0].destination.port.number: "), bad.body());
            HttpResponse<String> good = create("networking.istio.io/v1", "virtualservices", """
                    {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                     "metadata": {"name": "reviews", "namespace": "default"},
                     "spec": {"hosts": ["reviews"], "http": [{"route": [{"destination": {"host": "reviews"}}]}]}}""");
            assertEquals(201, good.statusCode(), good.body());

            // someone (helm upgrade) resets the validator: patched again
            api.apply(IstioWebhooks.validator());
            assertEquals("", caBundle(entries(webhookConfig("ValidatingWebhookConfiguration", VALIDATOR)).get(0)));
            await("the reset validator patched again", () -> {
                JsonObject wh = entries(webhookConfig("ValidatingWebhookConfiguration", VALIDATOR)).get(0);
                return root.equals(caBundle(wh)) && failurePolicy(wh).equals("Fail");
            });
        }
    }

    @Test
    void validationStaysFailOpenWhileTheWebhookCannotBeReached() throws Exception {
        // the API server cannot reach the webhook (its Service points nowhere): the caBundle is
        // patched but failurePolicy stays Ignore, so config stays writable
        api.admission((operation, group, version, resource, namespace, object, dryRun) -> null);
        try (MeshPilotServer server = startServer()) {
            String root = Base64.getEncoder().encodeToString(
                    server.server().components().certificates().trustBundle().pem().getBytes(StandardCharsets.UTF_8));
            await("the validator's caBundle patched", () -> root.equals(
                    caBundle(entries(webhookConfig("ValidatingWebhookConfiguration", VALIDATOR)).get(0))));
            Thread.sleep(500); // several dry runs: none refused
            assertEquals("Ignore", failurePolicy(entries(webhookConfig("ValidatingWebhookConfiguration", VALIDATOR))
                    .get(0)));
        }
    }

    HttpResponse<String> create(String apiVersion, String plural, String json) throws Exception {
        URI uri = api.url().resolve("/apis/" + apiVersion + "/namespaces/default/" + plural);
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(30), condition);
    }
}
