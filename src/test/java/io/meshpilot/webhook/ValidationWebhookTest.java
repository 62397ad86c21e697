package io.meshpilot.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.validation.NetworkingValidationTest;
import io.meshpilot.config.validation.PolicyValidationTest;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code /validate} on the webhook listener over real TLS, called as the API server calls it
 * (AdmissionReview JSON, trusting only the CA root, checking the certificate's name). The
 * tables are the validation tests' own cases: each valid one is allowed, each invalid one is
 * refused with its field path and reason, each warning comes back as an admission warning.
 */
class ValidationWebhookTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static AdmissionClient api;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dir);
        api = new AdmissionClient(server.server().components().certificates().trustBundle().pem(), server.ports().get("webhook"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** name, YAML, error path (null: valid), a word of the reason. */
    static Stream<Arguments> validationCases() {
        Stream<Arguments> policy = PolicyValidationTest.cases()
                .map(c -> Arguments.of(c.name(), c.yaml(), c.errorPath(), c.word()));
        return Stream.concat(NetworkingValidationTest.cases(), policy);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validationCases")
    void everyPilotKindValidAndInvalid(String name, String yaml, String path, String word) {
        List<JsonObject> objects;
        try {
            objects = AdmissionClient.json(yaml);
        } catch (RuntimeException e) {
            // YAML that has no JSON form (a non-string key): the API server never sends it
            Assumptions.abort("no JSON form: " + e.getMessage());
            return;
        }
        Assumptions.assumeTrue(objects.size() == 1, "one object per case");
        AdmissionClient.Reply r = api.admit("/validate", AdmissionClient.review("v1", "CREATE", objects.get(0), false));
        assertEquals(200, r.status(), r.body());
        if (path == null) {
            assertTrue(r.allowed(), name + ": refused: " + r.message());
        } else {
            assertFalse(r.allowed(), name + ": allowed");
            assertTrue(r.message().startsWith("configuration is invalid: "), r.message());
            assertTrue(r.message().contains(path.isEmpty() ? "" : path + ": "), name + ": no " + path + " in "
                    + r.message());
            assertTrue(r.message().toLowerCase(Locale.ROOT).contains(word.toLowerCase(Locale.ROOT)),
                    name + ": no \"" + word + "\" in " + r.message());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.meshpilot.config.validation.NetworkingValidationTest#warnings")
    void warningsAreAdmissionWarnings(String name, String yaml, String path, String word) {
        AdmissionClient.Reply r = api.admit("/validate",
                AdmissionClient.review("v1", "CREATE", AdmissionClient.json(yaml).get(0), false));
        assertTrue(r.allowed(), name + ": refused: " + r.message());
        assertTrue(r.warnings().stream().anyMatch(w -> w.startsWith(path + ": ")
                        && w.toLowerCase(Locale.ROOT).contains(word.toLowerCase(Locale.ROOT))),
                name + ": no warning at " + path + " with \"" + word + "\" in " + r.warnings());
    }

    @Test
    void theSamplesAreAllowed() throws Exception {
        int checked = 0;
        Path samples = Path.of("src/test/resources/golden/samples");
        try (var files = Files.list(samples)) {
            for (Path f : files.sorted().toList()) {
                for (JsonObject o : AdmissionClient.json(Files.readString(f))) {
                    if (!o.get("apiVersion").getAsString().contains("istio.io")) {
                        continue;
                    }
                    AdmissionClient.Reply r = api.admit("/validate/networking",
                            AdmissionClient.review("v1", "UPDATE", o, false));
                    assertTrue(r.allowed(), f + ": " + r.message());
                    checked++;
                }
            }
        }
        assertTrue(checked >= 30, "checked " + checked);
    }

    @Test
    void aBadVirtualServiceIsRefusedWithTheReasonInTheRequestsVersion() {
        JsonObject vs = AdmissionClient.json("""
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: reviews, namespace: default}
                spec:
                  hosts: [reviews]
                  http:
                  - route:
                    - destination: {host: reviews, port: {number: 70000}}
                """).get(0);
        JsonObject review = AdmissionClient.review("v1beta1", "CREATE", vs, false);
        AdmissionClient.Reply r = api.admit("/validate", review);
        assertEquals("admission.k8s.io/v1beta1", r.review().get("apiVersion").getAsString());
        assertEquals("AdmissionReview", r.review().get("kind").getAsString());
        assertEquals(review.getAsJsonObject("request").get("uid"), r.response().get("uid"));
        assertFalse(r.allowed());
        assertTrue(r.message().startsWith("configuration is invalid: spec.http[0].route[0].destination.port.number: "), r.message());
    }

    @Test
    void anyVersionOfAKnownKindIsValidatedAsTheKind() {
        JsonObject ok = AdmissionClient.json("""
                apiVersion: networking.istio.io/v2
                kind: DestinationRule
                metadata: {name: r, namespace: default}
                spec: {host: reviews}
                """).get(0);
        assertTrue(api.admit("/validate", AdmissionClient.review("v1", "CREATE", ok, false)).allowed());
        ok.getAsJsonObject("spec").remove("host");
        AdmissionClient.Reply r = api.admit("/validate", AdmissionClient.review("v1", "CREATE", ok, false));
        assertFalse(r.allowed());
        assertTrue(r.message().contains("spec.host"), r.message());
    }

    /** Unknown kinds include istiod 1.30's TrafficExtension, which MeshPilot does not serve (as the README says). */
    @Test
    void unknownKindsTopLevelFieldsAndTheAlwaysRejectAnnotationAreRefusedAsIstiodDoes() {
        for (String[] type : new String[][] {{"networking.istio.io/v1", "TrafficSplit"},
                {"extensions.istio.io/v1alpha1", "TrafficExtension"}}) {
            JsonObject unknown = AdmissionClient.json("apiVersion: " + type[0] + "\nkind: " + type[1]
                    + "\nmetadata: {name: t, namespace: default}\nspec: {}\n").get(0);
            AdmissionClient.Reply r = api.admit("/validate", AdmissionClient.review("v1", "CREATE", unknown, false));
            assertFalse(r.allowed());
            assertEquals("unrecognized type " + type[0] + ", Kind=" + type[1], r.message());
        }

        JsonObject extra = AdmissionClient.json("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: r, namespace: default}
                spec: {host: reviews}
                extra: 1
                """).get(0);
        AdmissionClient.Reply r = api.admit("/validate", AdmissionClient.review("v1", "CREATE", extra, false));
        assertFalse(r.allowed());
        assertEquals("unknown field \"extra\" on DestinationRule resource default/r", r.message());

        JsonObject probe = AdmissionClient.json("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata:
                  name: r
                  namespace: default
                  annotations: {internal.istio.io/webhook-always-reject: "true"}
                spec: {host: reviews}
                """).get(0);
        r = api.admit("/validate", AdmissionClient.review("v1", "CREATE", probe, false));
        assertFalse(r.allowed());
        assertTrue(r.message().contains("webhook-always-reject\" annotation found, rejecting"), r.message());
    }

    @Test
    void deleteIsAllowedAndDryRunIsLeftOutOfTheFailureMetric() {
        JsonObject bad = AdmissionClient.json("""
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: p, namespace: default}
                spec: {action: DENY, rules: [{to: [{operation: {methods: [""]}}]}]}
                """).get(0);
        assertTrue(api.admit("/validate", AdmissionClient.review("v1", "DELETE", bad, false)).allowed());
        long before = failed("authorizationpolicies", "invalid_resource");
        AdmissionClient.Reply dry = api.admit("/validate", AdmissionClient.review("v1", "CREATE", bad, true));
        assertFalse(dry.allowed(), "a dry run is judged alike");
        assertEquals(before, failed("authorizationpolicies", "invalid_resource"));
        api.admit("/validate", AdmissionClient.review("v1", "CREATE", bad, false));
        assertEquals(before + 1, failed("authorizationpolicies", "invalid_resource"));
    }

    @Test
    void httpErrorsAreIstiods() {
        AdmissionClient.Reply empty = api.post("/validate", "", "application/json");
        assertEquals(400, empty.status());
        assertEquals("no body found", empty.body().trim());
        AdmissionClient.Reply yaml = api.post("/validate", "{}", "application/yaml");
        assertEquals(415, yaml.status());
        AdmissionClient.Reply garbage = api.post("/validate", "{\"apiVersion\": ", "application/json");
        assertEquals(200, garbage.status(), "istiod answers an unreadable review with a refusal");
        assertFalse(garbage.allowed());
        assertTrue(garbage.message().startsWith("could not decode body: not JSON: "), garbage.message());
        AdmissionClient.Reply notReview = api.post("/validate", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}",
                "application/json");
        assertTrue(notReview.message().contains("expected kind AdmissionReview"), notReview.message());
        assertNotEquals(200, Http.get(server.ports().get("http"), "/validate").status(),
                "the webhooks are on their own listener");
    }

    /**
     * The API server always sends a review's apiVersion, but the port takes any caller: a
     * review without one is refused with the reason (istiod's decoder says "Object
     * 'apiVersion' is missing"), not with a NullPointerException's text.
     */
    @Test
    void aReviewWithoutApiVersionOrKindIsRefusedWithTheReason() {
        JsonObject review = AdmissionClient.review("v1", "CREATE", AdmissionClient.json("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: r, namespace: default}
                spec: {host: reviews}
                """).get(0), false);
        review.remove("apiVersion");
        AdmissionClient.Reply r = api.admit("/validate", review);
        assertEquals(200, r.status(), r.body());
        assertFalse(r.allowed());
        assertEquals("could not decode body: Object 'apiVersion' is missing", r.message());
        assertEquals("admission.k8s.io/v1", r.review().get("apiVersion").getAsString());

        review.addProperty("apiVersion", "admission.k8s.io/v1");
        review.remove("kind");
        r = api.admit("/validate", review);
        assertFalse(r.allowed());
        assertEquals("could not decode body: Object 'Kind' is missing", r.message());
    }

    /**
     * Callers of the webhook port are not authenticated, and the metrics' labels come from
     * what they send: 2,000 reviews of made-up kinds add at most the one "unknown" series per
     * reason, not a series each (istiod's labels for known kinds stay as they are).
     */
    @Test
    void madeUpKindsDoNotGrowTheValidationSeries() {
        int before = validationSeries();
        for (int i = 0; i < 2_000; i++) {
            JsonObject made = new JsonObject();
            made.addProperty("apiVersion", "made-up-" + i + ".example.com/v" + i);
            made.addProperty("kind", "Kind" + i);
            JsonObject meta = new JsonObject();
            meta.addProperty("name", "m" + i);
            meta.addProperty("namespace", "default");
            made.add("metadata", meta);
            AdmissionClient.Reply r = api.admit("/validate/" + i, AdmissionClient.review("v1", "CREATE", made, false));
            assertFalse(r.allowed(), r.body());
        }
        int after = validationSeries();
        assertTrue(after - before <= 1, "galley_validation series grew from " + before + " to " + after);
        assertTrue(Http.get(server.ports().get("monitoring"), "/metrics").body().lines()
                        .anyMatch(l -> l.startsWith("galley_validation_failed{") && l.contains("group=\"unknown\"")
                                && l.contains("resource=\"unknown\"") && l.contains("reason=\"unknown_type\"")),
                "made-up kinds are counted as unknown");
    }

    private int validationSeries() {
        return (int) Http.get(server.ports().get("monitoring"), "/metrics").body().lines()
                .filter(l -> l.startsWith("galley_validation_")).count();
    }

    private long failed(String resource, String reason) {
        String text = Http.get(server.ports().get("monitoring"), "/metrics").body();
        List<String> lines = new ArrayList<>(text.lines().filter(l -> l.startsWith("galley_validation_failed{")).toList());
        for (String l : lines) {
            if (l.contains("resource=\"" + resource + "\"") && l.contains("reason=\"" + reason + "\"")) {
                Matcher m = Pattern.compile("} ([0-9.eE+]+)$").matcher(l);
                return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
            }
        }
        return 0;
    }
}
