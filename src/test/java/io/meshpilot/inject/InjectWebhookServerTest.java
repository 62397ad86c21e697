package io.meshpilot.inject;

import static io.meshpilot.testing.InjectWebhookCalls.admitted;
import static io.meshpilot.testing.InjectWebhookCalls.response;
import static io.meshpilot.testing.InjectWebhookCalls.review;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.InjectWebhookCalls;
import io.meshpilot.testing.TestServers;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /inject} on the webhook listener of a running server, over TLS with istiod's
 * serving certificate, as the API server calls it: AdmissionReview v1 in, the AdmissionReview
 * with a JSON Patch out; istiod's sidecar_injection metrics on the monitoring port.
 */
class InjectWebhookServerTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static HttpClient client;
    static int webhook;

    @BeforeAll
    static void start() throws Exception {
        Files.writeString(dir.resolve("mesh"), "trustDomain: cluster.local\n");
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir);
        webhook = server.ports().get("webhook");
        client = tlsClient(server);
    }

    /** A client that trusts only the server's CA root and checks the embedded serving certificate's name. */
    static HttpClient tlsClient(MeshPilotServer server) throws Exception {
        return InjectWebhookCalls.tlsClientFor(server, "localhost");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static HttpResponse<String> post(String path, String contentType, String body) throws Exception {
        return InjectWebhookCalls.post(client, webhook, path, contentType, body);
    }

    @Test
    void aPodComesBackWithAPatchThatInjectsTheSidecar() throws Exception {
        JsonObject pod = SidecarInjectionTableTest.hello();
        JsonObject response = response(post("/inject", "application/json", review("uid-1", pod)));
        assertEquals("uid-1", response.get("uid").getAsString());
        assertTrue(response.get("allowed").getAsBoolean());
        assertEquals("JSONPatch", response.get("patchType").getAsString());
        JsonArray patch = JsonParser.parseString(new String(Base64.getDecoder().decode(response.get("patch").getAsString()),
                StandardCharsets.UTF_8)).getAsJsonArray();
        JsonObject injected = SidecarInjectionTableTest.apply(pod, patch);
        // embedded mode: classic sidecar (ENABLE_NATIVE_SIDECARS unset), the chart's default images
        JsonObject proxy = SidecarInjectionTableTest.named(injected.getAsJsonObject("spec").getAsJsonArray("containers"),
                "istio-proxy");
        assertNotNull(proxy, injected.toString());
        assertEquals("docker.io/istio/proxyv2:1.28.0", proxy.get("image").getAsString());
        assertNotNull(SidecarInjectionTableTest.named(injected.getAsJsonObject("spec").getAsJsonArray("initContainers"),
                "istio-init"));
        assertTrue(injected.getAsJsonObject("metadata").getAsJsonObject("annotations").has("sidecar.istio.io/status"));
    }

    @Test
    void istiodsPathParametersSetTheProxysClusterAndNetwork() throws Exception {
        JsonObject pod = SidecarInjectionTableTest.hello();
        JsonObject response = response(post("/inject/cluster/east/net/n1", "application/json", review("uid-2", pod)));
        JsonArray patch = JsonParser.parseString(new String(Base64.getDecoder().decode(response.get("patch").getAsString()),
                StandardCharsets.UTF_8)).getAsJsonArray();
        JsonObject injected = SidecarInjectionTableTest.apply(pod, patch);
        JsonArray env = SidecarInjectionTableTest.named(injected.getAsJsonObject("spec").getAsJsonArray("containers"),
                "istio-proxy").getAsJsonArray("env");
        assertEquals("east", SidecarInjectionTableTest.named(env, "ISTIO_META_CLUSTER_ID").get("value").getAsString());
        assertEquals("n1", SidecarInjectionTableTest.named(env, "ISTIO_META_NETWORK").get("value").getAsString());
    }

    @Test
    void anOptedOutPodIsAllowedUnchangedAndCountedAsASkip() throws Exception {
        long before = InjectWebhook.SKIP.value();
        JsonObject pod = SidecarInjectionTableTest.with(SidecarInjectionTableTest.hello(), "labels",
                Map.of("sidecar.istio.io/inject", "false"));
        JsonObject response = response(post("/inject", "application/json", review("uid-3", pod)));
        assertTrue(response.get("allowed").getAsBoolean());
        assertNull(response.get("patch"));
        assertEquals(before + 1, InjectWebhook.SKIP.value());
        String metrics = Http.get(server.ports().get("monitoring"), "/metrics").body();
        assertTrue(metrics.contains("sidecar_injection_requests_total"), "requests metric missing");
        assertTrue(metrics.contains("sidecar_injection_skip_total"), "skip metric missing");
    }

    /**
     * A mistyped (or empty) inject.istio.io/templates is refused with istiod's words: admitted
     * without its sidecar, the pod would run outside the mesh. The templates istiod's chart
     * always defines are the ones istiod would list.
     */
    @Test
    void aPodAskingForATemplateThatDoesNotExistIsRefusedAsIstiodRefusesIt() throws Exception {
        for (String asked : new String[] {"nosuch", ""}) {
            long failures = InjectWebhook.FAILURE.value();
            assertEquals("failed to run injection template: requested template \"" + asked + "\" not found; have "
                            + "agentgateway, agentgateway-waypoint, gateway, grpc-agent, grpc-simple, kube-gateway, sidecar, waypoint",
                    refusalAskingFor(asked));
            assertEquals(failures + 1, InjectWebhook.FAILURE.value());
        }
    }

    /**
     * Waypoints and Gateway API deployments ask for templates istiod's chart always defines and
     * MeshPilot does not render: the refusal names MeshPilot as the cause, not the pod's annotation.
     */
    @Test
    void aPodAskingForAnIstiodBuiltInTemplateIsRefusedAsNotRendered() throws Exception {
        for (String asked : new String[] {"waypoint", "kube-gateway"}) {
            long unsupported = InjectWebhook.UNSUPPORTED_TEMPLATE.value();
            assertEquals("failed to run injection template: MeshPilot does not render the injection template \"" + asked
                    + "\" (it renders istiod's \"gateway\", \"grpc-agent\", \"grpc-simple\" and \"sidecar\" templates,"
                                + " and templates without Go template actions)",
                    refusalAskingFor(asked));
            assertEquals(unsupported + 1, InjectWebhook.UNSUPPORTED_TEMPLATE.value());
        }
    }

    /** The message refusing a pod annotated inject.istio.io/templates: {@code templates}; fails if it is admitted. */
    private static String refusalAskingFor(String templates) throws Exception {
        JsonObject pod = SidecarInjectionTableTest.with(SidecarInjectionTableTest.hello(), "annotations",
                Map.of("inject.istio.io/templates", templates));
        JsonObject response = response(post("/inject", "application/json", review("uid-4", pod)));
        assertFalse(response.get("allowed").getAsBoolean(), response.toString());
        assertNull(response.get("patch"));
        return response.getAsJsonObject("status").get("message").getAsString();
    }

    @Test
    void notJsonIsRefusedAsIstiodDoes() throws Exception {
        long before = InjectWebhook.FAILURE.value();
        HttpResponse<String> r = post("/inject", "text/plain", "{}");
        assertEquals(415, r.statusCode());
        assertEquals(400, post("/inject", "application/json", "").statusCode());
        assertFalse(InjectWebhook.FAILURE.value() < before + 2);
    }

    /**
     * istiod's injector answers a body its decoder cannot read as an AdmissionReview with a
     * refusal inside a 200 AdmissionReview (toAdmissionResponse), as the validation webhook
     * does: both read reviews with one codec, so they refuse with the same error; the injector
     * answers the decoder's error alone (err.Error()), the validation webhook prefixes it with
     * "could not decode body: ".
     */
    @Test
    void aBodyThatIsNoAdmissionReviewIsRefusedInsideAReviewAsTheValidationWebhookRefusesIt() throws Exception {
        JsonObject notAReview = JsonParser.parseString(review("u-1", SidecarInjectionTableTest.hello())).getAsJsonObject();
        notAReview.addProperty("kind", "Pod");
        for (String body : List.of("{\"request\":{}}", "[1, 2]", "{not json", notAReview.toString())) {
            long failures = InjectWebhook.FAILURE.value();
            JsonObject fromInject = response(post("/inject", "application/json", body));
            JsonObject fromValidate = response(post("/validate", "application/json", body));
            assertFalse(fromInject.get("allowed").getAsBoolean(), body);
            assertNull(fromInject.get("patch"), body);
            String message = fromInject.getAsJsonObject("status").get("message").getAsString();
            assertFalse(message.isEmpty(), body);
            assertEquals(fromValidate.getAsJsonObject("status").get("message").getAsString(),
                    "could not decode body: " + message, body);
            assertEquals(failures + 1, InjectWebhook.FAILURE.value(), "counted as a failure, as istiod's handleError");
        }
    }

    /** Nothing a caller nests deep enough to exhaust a stack reaches the injector: refused, counted, never a 500. */
    @Test
    void aDeeplyNestedPodIsRefusedAsAFailure() throws Exception {
        String review = review("u-deep", SidecarInjectionTableTest.hello());
        String deep = review.replace("\"containers\":", "\"x\":" + "[".repeat(100_000) + "]".repeat(100_000) + ",\"containers\":");
        long failures = InjectWebhook.FAILURE.value();
        HttpResponse<String> r = post("/inject", "application/json", deep);
        assertEquals(200, r.statusCode(), r.body());
        JsonObject response = response(r);
        assertFalse(response.get("allowed").getAsBoolean(), response.toString());
        assertEquals(failures + 1, InjectWebhook.FAILURE.value());
    }

    @Test
    void theKindAndApiVersionACallerSentAreClippedInTheLogAndTheAnswer() throws Exception {
        JsonObject review = JsonParser.parseString(review("u-2", SidecarInjectionTableTest.hello())).getAsJsonObject();
        String flood = "K".repeat(100_000) + "\nFORGED log line";
        review.addProperty("kind", flood);
        review.addProperty("apiVersion", flood);
        try (CapturedLog log = new CapturedLog(InjectWebhook.class)) {
            JsonObject response = response(post("/inject", "application/json", review.toString()));
            String message = response.getAsJsonObject("status").get("message").getAsString();
            assertTrue(message.length() < 1_000 && !message.contains("\n"), "answer of " + message.length() + " chars");
            List<String> refusals = log.lines().stream().filter(l -> l.contains("Could not decode body")).toList();
            assertEquals(1, refusals.size(), log.lines().toString());
            assertTrue(refusals.getFirst().length() < 1_000 && !refusals.getFirst().contains("\n"),
                    "log line of " + refusals.getFirst().length() + " chars");
        }
    }

    @Test
    void aV1beta1ReviewIsAnsweredInItsOwnVersionWithItsUid() throws Exception {
        String body = review("u-beta", SidecarInjectionTableTest.hello()).replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1");
        HttpResponse<String> r = post("/inject", "application/json", body);
        assertEquals(200, r.statusCode(), r.body());
        JsonObject review = JsonParser.parseString(r.body()).getAsJsonObject();
        assertEquals("admission.k8s.io/v1beta1", review.get("apiVersion").getAsString());
        assertEquals("u-beta", review.getAsJsonObject("response").get("uid").getAsString());
        assertTrue(review.getAsJsonObject("response").get("allowed").getAsBoolean());
    }

    @Test
    void aReviewWithoutAPodIsRefusedWithItsUid() throws Exception {
        JsonObject review = JsonParser.parseString(review("u-none", SidecarInjectionTableTest.hello())).getAsJsonObject();
        review.getAsJsonObject("request").remove("object");
        JsonObject response = response(post("/inject", "application/json", review.toString()));
        assertEquals("u-none", response.get("uid").getAsString());
        assertFalse(response.get("allowed").getAsBoolean());
        assertTrue(response.getAsJsonObject("status").get("message").getAsString().contains("no pod"),
                response.toString());
    }
}
