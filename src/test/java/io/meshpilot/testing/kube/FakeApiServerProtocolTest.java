package io.meshpilot.testing.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The stand-in's protocol over plain HTTP, where the real server's behaviour is specific:
 * CRD registration and removal, watch semantics (initial events, selector transitions,
 * timeouts, 410, stop versus kill), namespaces, finalizers, dry runs and the patch media types.
 */
class FakeApiServerProtocolTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final String WIDGETS = "/apis/example.com/v1/namespaces/default/widgets";
    private static final String CRD = """
            {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": "widgets.example.com"},
             "spec": {"group": "example.com", "scope": "Namespaced",
                      "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                      "versions": [{"name": "v1", "served": true, "storage": true,
                                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                                    "subresources": {"status": {}}},
                                   {"name": "v1beta1", "served": true, "storage": false,
                                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
            """;
    private FakeApiServer server;

    @BeforeEach
    void start() {
        server = FakeApiServer.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void aCreatedCrdMakesItsKindServableAndItsDeletionTakesTheObjects() throws Exception {
        assertEquals(404, call("GET", WIDGETS, null, null).statusCode());
        assertFalse(call("GET", "/apis", null, null).body().contains("example.com"));

        HttpResponse<String> created = call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD,
                "application/json");
        assertEquals(201, created.statusCode(), created.body());
        JsonObject crd = json(created);
        assertTrue(crd.getAsJsonObject("status").toString().contains("\"type\":\"Established\""), crd.toString());

        JsonObject group = json(call("GET", "/apis/example.com", null, null));
        assertEquals("example.com/v1", Json.string(group, "preferredVersion", "groupVersion"));
        JsonObject resources = json(call("GET", "/apis/example.com/v1", null, null));
        assertTrue(resources.toString().contains("\"name\":\"widgets/status\""), resources.toString());

        assertEquals(201, call("POST", WIDGETS, "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                + "\"metadata\":{\"name\":\"w1\"},\"spec\":{\"size\":3}}", "application/json").statusCode());
        // every served version sees the object, in its own apiVersion
        JsonObject beta = json(call("GET", "/apis/example.com/v1beta1/namespaces/default/widgets/w1", null, null));
        assertEquals("example.com/v1beta1", Json.string(beta, "apiVersion"));
        // no strategic merge for custom resources, as on the real server
        assertEquals(415, call("PATCH", WIDGETS + "/w1", "{\"spec\":{\"size\":4}}",
                "application/strategic-merge-patch+json").statusCode());
        assertEquals(200, call("PATCH", WIDGETS + "/w1", "{\"spec\":{\"size\":4}}",
                "application/merge-patch+json").statusCode());

        assertEquals(200, call("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
                null, null).statusCode());
        assertEquals(404, call("GET", WIDGETS, null, null).statusCode());
        assertFalse(call("GET", "/apis", null, null).body().contains("example.com"));
    }

    @Test
    void watchesStartWithTheCurrentObjectsAndFollowTheSelector() throws Exception {
        server.apply(configMap("one", "blue") + "---\n" + configMap("two", "red"));
        BlockingQueue<JsonObject> events = watch("/api/v1/namespaces/default/configmaps?watch=true&labelSelector=color%3Dblue");
        JsonObject first = poll(events);
        assertEquals("ADDED", Json.string(first, "type"));
        assertEquals("one", Json.string(first, "object", "metadata", "name"));

        server.apply(configMap("two", "blue"));   // into the selection: ADDED
        server.apply(configMap("one", "green"));  // out of it: DELETED
        server.apply(configMap("three", "red"));  // never in it: nothing
        server.delete("v1", "ConfigMap", "default", "two");
        List<String> seen = Stream.of(poll(events), poll(events), poll(events))
                .map(e -> Json.string(e, "type") + " " + Json.string(e, "object", "metadata", "name")).toList();
        assertEquals(List.of("ADDED two", "DELETED one", "DELETED two"), seen);
    }

    @Test
    void aWatchEndsAtItsTimeoutAndAnExpiredVersionIsOneErrorEvent() throws Exception {
        long version = server.resourceVersion();
        HttpResponse<String> ended = call("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1"
                + "&resourceVersion=" + version, null, null);
        assertEquals(200, ended.statusCode());
        assertEquals("", ended.body());

        server.compact();
        // bounded, so that a server that wrongly streams on ends the call with an empty body
        HttpResponse<String> gone = call("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5"
                + "&resourceVersion=" + version, null, null);
        JsonObject error = Json.parse(gone.body().strip()).getAsJsonObject();
        assertEquals("ERROR", Json.string(error, "type"));
        assertEquals("410", Json.string(error, "object", "code"));
        assertEquals("Expired", Json.string(error, "object", "reason"));
    }

    @Test
    void afterARestartWithResetVersionsTheNumbersStartOverAndAWatchFromBeforeSeesWhatFollows() throws Exception {
        for (int i = 0; i < 20; i++) {
            server.apply(configMap("one", "shade-" + i));
        }
        String before = Json.string(server.get("v1", "ConfigMap", "default", "one").orElseThrow(), "metadata",
                "resourceVersion");
        server.restartWithResetVersions();
        JsonObject renumbered = server.get("v1", "ConfigMap", "default", "one").orElseThrow();
        assertTrue(Long.parseLong(Json.string(renumbered, "metadata", "resourceVersion")) < Long.parseLong(before),
                "a lower version than " + before + ": " + renumbered);
        assertEquals("shade-19", Json.string(renumbered, "metadata", "labels", "color"), "the objects are kept");

        // a list from the version seen before the reset: that version lies ahead of the server
        HttpResponse<String> ahead = call("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=" + before,
                null, null);
        assertEquals(504, ahead.statusCode());
        JsonObject status = json(ahead);
        assertEquals("Timeout", Json.string(status, "reason"));
        assertEquals("ResourceVersionTooLarge", Json.string(status.getAsJsonObject("details").getAsJsonArray("causes")
                .get(0).getAsJsonObject(), "reason"));
        assertEquals(200, call("GET", "/api/v1/namespaces/default/configmaps?resourceVersion=", null, null).statusCode());

        // a watch from the version seen before the reset is sent the changes from now on
        BlockingQueue<JsonObject> events = watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="
                + before);
        server.apply(configMap("one", "after"));
        JsonObject changed = poll(events);
        assertEquals("MODIFIED", Json.string(changed, "type"));
        assertEquals("after", Json.string(changed, "object", "metadata", "labels", "color"));
        // one from below the new numbering is gone
        HttpResponse<String> gone = call("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5"
                + "&resourceVersion=1", null, null);
        assertEquals("410", Json.string(Json.parse(gone.body().strip()).getAsJsonObject(), "object", "code"));
    }

    @Test
    void theHookBeforeAWriteAnswerRunsAfterTheWriteIsStored() throws Exception {
        List<String> seenByHook = new CopyOnWriteArrayList<>();
        server.beforeWriteAnswer(() -> seenByHook.add(Json.string(server.get("v1", "ConfigMap", "default", "one")
                .orElseThrow(), "metadata", "labels", "color")));
        assertEquals(201, call("POST", "/api/v1/namespaces/default/configmaps", Json.yamlDocuments(configMap("one",
                "blue")).get(0).toString(), "application/json").statusCode());
        assertEquals(200, call("PATCH", "/api/v1/namespaces/default/configmaps/one",
                "{\"metadata\":{\"labels\":{\"color\":\"red\"}}}", "application/merge-patch+json").statusCode());
        assertEquals(List.of("blue", "red"), seenByHook);
    }

    @Test
    void stopEndsWatchStreamsAndKillCutsThem() throws Exception {
        HttpRequest watch = HttpRequest.newBuilder(URI.create(server.url()
                + "/api/v1/namespaces/default/configmaps?watch=true")).build();
        HttpResponse<InputStream> stopped = HTTP.send(watch, HttpResponse.BodyHandlers.ofInputStream());
        server.stop();
        try (InputStream in = stopped.body()) {
            assertEquals(0, in.readAllBytes().length, "a stopped server ends the stream with its last chunk");
        }
        server.restart();
        HttpResponse<InputStream> killed = HTTP.send(watch, HttpResponse.BodyHandlers.ofInputStream());
        server.kill();
        try (InputStream in = killed.body()) {
            Assertions.assertThrows(IOException.class, in::readAllBytes,
                    "a killed server cuts the stream");
        }
    }

    @Test
    void namespacesFinalizersDryRunsAndJsonPatchTests() throws Exception {
        String cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}";
        HttpResponse<String> noNamespace = call("POST", "/api/v1/namespaces/missing/configmaps", cm, "application/json");
        assertEquals(404, noNamespace.statusCode());
        assertTrue(noNamespace.body().contains("namespaces \\\"missing\\\" not found"), noNamespace.body());

        server.apply("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}");
        assertEquals("Active", Json.string(server.get("v1", "Namespace", null, "team").orElseThrow(), "status", "phase"));
        assertEquals(200, call("POST", "/api/v1/namespaces/team/configmaps?dryRun=All", cm, "application/json")
                .statusCode());
        assertTrue(server.get("v1", "ConfigMap", "team", "c").isEmpty(), "a dry run stores nothing");
        assertEquals(201, call("POST", "/api/v1/namespaces/team/configmaps", cm, "application/json").statusCode());

        // a failed JSON patch test changes nothing
        HttpResponse<String> failedTest = call("PATCH", "/api/v1/namespaces/team/configmaps/c",
                "[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"other\"},"
                        + "{\"op\":\"add\",\"path\":\"/data\",\"value\":{\"k\":\"v\"}}]", "application/json-patch+json");
        assertEquals(422, failedTest.statusCode());
        assertFalse(server.get("v1", "ConfigMap", "team", "c").orElseThrow().has("data"));

        // finalizers hold a deletion until the last one is removed
        call("PATCH", "/api/v1/namespaces/team/configmaps/c", "{\"metadata\":{\"finalizers\":[\"example.com/hold\"]}}",
                "application/merge-patch+json");
        assertEquals(200, call("DELETE", "/api/v1/namespaces/team/configmaps/c", null, null).statusCode());
        JsonObject held = server.get("v1", "ConfigMap", "team", "c").orElseThrow();
        assertNotNull(Json.string(held, "metadata", "deletionTimestamp"));
        call("PATCH", "/api/v1/namespaces/team/configmaps/c", "{\"metadata\":{\"finalizers\":null}}",
                "application/merge-patch+json");
        assertTrue(server.get("v1", "ConfigMap", "team", "c").isEmpty());

        // deleting a namespace deletes what is in it
        server.apply("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"d\",\"namespace\":\"team\"}}");
        assertEquals(200, call("DELETE", "/api/v1/namespaces/team", null, null).statusCode());
        assertTrue(server.list("v1", "ConfigMap", "team").isEmpty());
        assertEquals(404, call("GET", "/api/v1/namespaces/team", null, null).statusCode());
    }

    private static String configMap(String name, String color) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: %s, namespace: default, labels: {color: %s}}
                data: {k: v}
                """.formatted(name, color);
    }

    @Test
    void aCsrsApprovalSubresourceSetsOnlyConditionsAndItsStatusSubresourceKeepsThem() throws Exception {
        String csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
        assertTrue(call("GET", "/apis/certificates.k8s.io/v1", null, null).body()
                .contains("\"name\":\"certificatesigningrequests/approval\""));
        assertEquals(201, call("POST", csrs, """
                {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": "c1"},
                 "spec": {"request": "UkVR", "signerName": "example.com/s", "usages": ["client auth"]},
                 "status": {"certificate": "Q0VSVA=="}}""", "application/json").statusCode());
        JsonObject created = server.get("certificates.k8s.io/v1", "CertificateSigningRequest", null, "c1").orElseThrow();
        assertFalse(created.has("status") && created.getAsJsonObject("status").has("certificate"),
                "status is not written on create: " + created);

        // the approver's PUT of the whole object: only the conditions change
        JsonObject approval = created.deepCopy();
        approval.add("status", Json.parse("""
                {"certificate": "Q0VSVA==", "conditions": [{"type": "Approved", "status": "True", "reason": "ok"}]}""")
                .getAsJsonObject());
        JsonObject approved = json(call("PUT", csrs + "/c1/approval", approval.toString(), "application/json"));
        assertEquals("Approved", Json.string(approved.getAsJsonObject("status").getAsJsonArray("conditions").get(0)
                .getAsJsonObject(), "type"));
        assertFalse(approved.getAsJsonObject("status").has("certificate"), approved.toString());

        // the signer's status PUT sets the certificate and cannot drop the approval
        JsonObject signed = approved.deepCopy();
        signed.add("status", Json.parse("{\"certificate\": \"Q0VSVA==\"}").getAsJsonObject());
        JsonObject after = json(call("PUT", csrs + "/c1/status", signed.toString(), "application/json"));
        assertEquals("Q0VSVA==", Json.string(after, "status", "certificate"));
        assertEquals("Approved", Json.string(after.getAsJsonObject("status").getAsJsonArray("conditions").get(0)
                .getAsJsonObject(), "type"));
        assertEquals(409, call("PUT", csrs + "/c1/approval", approval.toString(), "application/json").statusCode(),
                "an approval with a stale resourceVersion conflicts");
    }

    private HttpResponse<String> call(String method, String path, String body, String contentType)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The events of a watch, read line by line on a thread of its own. */
    private BlockingQueue<JsonObject> watch(String path) throws IOException, InterruptedException {
        HttpResponse<Stream<String>> response = HTTP.send(HttpRequest.newBuilder(URI.create(server.url() + path)).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertEquals(200, response.statusCode());
        BlockingQueue<JsonObject> events = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() -> {
            try (Stream<String> lines = response.body()) {
                lines.filter(l -> !l.isBlank()).forEach(l -> events.add(Json.parse(l).getAsJsonObject()));
            } catch (RuntimeException ended) {
                // the server closed the stream
            }
        });
        return events;
    }

    private static JsonObject poll(BlockingQueue<JsonObject> events) throws InterruptedException {
        JsonObject e = events.poll(20, TimeUnit.SECONDS);
        assertNotNull(e, "no watch event within 20 s");
        return e;
    }

    private static JsonObject json(HttpResponse<String> response) {
        return Json.parse(response.body()).getAsJsonObject();
    }
}
