package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.file.FileConfigSource;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Config over REST and the watched config dir, through a running server. */
public class ConfigApiTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;
    static final String BASE = "/api/v1/configs/networking.istio.io/v1/virtualservices/";

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        http = server.ports().get("http");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    public static String vs(String name, String host, String extra) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata:
                  name: %s
                  namespace: team-a
                %s
                spec:
                  hosts: [%s]
                  http:
                  - route:
                    - destination: {host: %s}
                """.formatted(name, extra, host, host);
    }

    static Http.Reply put(String path, String body) {
        return Http.send(http, path, "PUT", body, null);
    }

    static JsonArray configz() {
        return JsonParser.parseString(Http.get(http, "/debug/configz").body()).getAsJsonArray();
    }

    static boolean configzHas(String kind, String name) {
        for (var e : configz()) {
            JsonObject o = e.getAsJsonObject();
            if (o.get("kind").getAsString().equals(kind) && o.getAsJsonObject("metadata").get("name").getAsString().equals(name)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void theEmbeddedBookinfoConfigIsServed() {
        JsonArray all = configz();
        assertEquals(18, all.size(), all.toString());
        assertEquals(4, JsonParser.parseString(Http.get(http, "/api/v1/configs?kind=ServiceEntry").body())
                .getAsJsonArray().size());
        assertEquals(6, JsonParser.parseString(Http.get(http, "/api/v1/configs?kind=workloadentries&namespace=default")
                .body()).getAsJsonArray().size());
        JsonObject reviews = JsonParser.parseString(Http.get(http, BASE + "default/reviews").body()).getAsJsonObject();
        assertEquals("file:traffic.yaml", reviews.get("source").getAsString());
        assertEquals(80, reviews.getAsJsonObject("spec").getAsJsonArray("http").get(1).getAsJsonObject()
                .getAsJsonArray("route").get(0).getAsJsonObject().get("weight").getAsInt());
        assertEquals("[]", Http.get(http, "/api/v1/config-errors").body());
        assertEquals(400, Http.get(http, "/api/v1/configs?kind=Nope").status());
    }

    @Test
    void crudWithOptimisticConcurrency() {
        Http.Reply created = put(BASE + "team-a/web", vs("web", "web.example.com", ""));
        assertEquals(201, created.status(), created.body());
        JsonObject obj = JsonParser.parseString(created.body()).getAsJsonObject();
        String rv = obj.getAsJsonObject("metadata").get("resourceVersion").getAsString();
        assertEquals("api", obj.get("source").getAsString());
        assertEquals(200, Http.get(http, BASE + "team-a/web").status());

        Http.Reply updated = put(BASE + "team-a/web", vs("web", "web2.example.com", "  resourceVersion: \"" + rv + "\""));
        assertEquals(200, updated.status(), updated.body());
        Http.Reply stale = put(BASE + "team-a/web", vs("web", "web3.example.com", "  resourceVersion: \"" + rv + "\""));
        assertEquals(409, stale.status(), stale.body());
        assertTrue(stale.body().contains("stale"), stale.body());

        // any served version names the same kind
        assertEquals(200, Http.get(http, "/api/v1/configs/networking.istio.io/v1alpha3/VirtualService/team-a/web").status());
        assertEquals(404, Http.get(http, "/api/v1/configs/networking.istio.io/v9/virtualservices/team-a/web").status());

        assertEquals(200, Http.send(http, BASE + "team-a/web", "DELETE", null, null).status());
        assertEquals(404, Http.send(http, BASE + "team-a/web", "DELETE", null, null).status());
        assertEquals(404, Http.get(http, BASE + "team-a/web").status());
    }

    @Test
    void aDeletedObjectIsNotBroughtBackByAStaleResourceVersion() {
        Http.Reply created = put(BASE + "team-a/zombie", vs("zombie", "zombie.example.com", ""));
        assertEquals(201, created.status(), created.body());
        String rv = JsonParser.parseString(created.body()).getAsJsonObject().getAsJsonObject("metadata")
                .get("resourceVersion").getAsString();
        assertEquals(200, Http.send(http, BASE + "team-a/zombie", "DELETE", null, null).status());

        // an update of the version the client read: that object is gone (the API server's 404)
        Http.Reply stale = put(BASE + "team-a/zombie", vs("zombie", "zombie.example.com", "  resourceVersion: \"" + rv + "\""));
        assertEquals(404, stale.status(), stale.body());
        assertEquals(404, Http.get(http, BASE + "team-a/zombie").status());
        // creating it anew (no resourceVersion) is still a create
        assertEquals(201, put(BASE + "team-a/zombie", vs("zombie", "zombie.example.com", "")).status());
        assertEquals(200, Http.send(http, BASE + "team-a/zombie", "DELETE", null, null).status());
    }

    @Test
    void invalidWritesAre422WithFieldErrors() {
        Http.Reply r = put(BASE + "team-a/bad", """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: bad, namespace: team-a}
                spec:
                  hosts: [bad.example.com]
                  http:
                  - route:
                    - destination: {host: bad.example.com}
                      weight: fifty
                """);
        assertEquals(422, r.status(), r.body());
        JsonObject body = JsonParser.parseString(r.body()).getAsJsonObject();
        JsonObject first = body.getAsJsonArray("errors").get(0).getAsJsonObject();
        assertEquals("spec.http[0].route[0].weight", first.get("path").getAsString());
        assertEquals(9, first.get("line").getAsInt());
        assertEquals(404, Http.get(http, BASE + "team-a/bad").status(), "nothing was stored");

        Http.Reply mismatch = put(BASE + "team-a/other", vs("web", "web.example.com", ""));
        assertEquals(400, mismatch.status(), mismatch.body());
    }

    /** Bytes that are not UTF-8 are refused, naming the first, not stored as U+FFFD. */
    @Test
    void aBodyThatIsNotUtf8Is400NamingTheByte() throws Exception {
        String text = vs("latin1", "latin1.example.com", "  annotations: {note: \"caf\u00e9\"}");
        byte[] body = text.getBytes(StandardCharsets.ISO_8859_1); // é as one byte 0xE9
        int offset = text.indexOf('\u00e9');
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + BASE + "team-a/latin1"))
                        .timeout(Duration.ofSeconds(20))
                        .header("Content-Type", "application/yaml")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("invalid UTF-8 at byte " + offset), r.body());
        assertEquals(404, Http.get(http, BASE + "team-a/latin1").status(), "nothing was stored");
    }

    @Test
    void acceptedWithWarningsCarriesWarningHeaders() {
        Http.Reply r = put("/api/v1/configs/security.istio.io/v1/peerauthentications/team-a/pa", """
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: pa, namespace: team-a}
                spec:
                  selector: {}
                  mtls: {mode: STRICT}
                """);
        assertEquals(201, r.status(), r.body());
        assertEquals(1, r.header("Warning").size(), r.headers().toString());
        assertTrue(r.header("Warning").get(0).startsWith("299 - \"spec.selector"), r.header("Warning").toString());
        assertEquals(200, Http.send(http, "/api/v1/configs/security.istio.io/v1/peerauthentications/team-a/pa",
                "DELETE", null, null).status());
    }

    @Test
    void fileOwnedObjectsAreReadOnlyOverTheApi() {
        String body = vs("reviews", "reviews", "").replace("team-a", "default");
        Http.Reply r = put(BASE + "default/reviews", body);
        assertEquals(409, r.status(), r.body());
        assertTrue(r.body().contains("read-only"), r.body());
        assertEquals(409, Http.send(http, BASE + "default/reviews", "DELETE", null, null).status());
    }

    @Test
    void configDirChangesShowUpInConfigz() throws Exception {
        FileConfigSource files = server.server().components().configs().files();
        Path f = dir.resolve("config/extra.yaml");
        Files.writeString(f, vs("extra", "extra.example.com", ""));
        await(files, () -> configzHas("VirtualService", "extra"));
        Files.writeString(f, vs("extra2", "extra.example.com", ""));
        await(files, () -> configzHas("VirtualService", "extra2") && !configzHas("VirtualService", "extra"));
        Path renamed = dir.resolve("config/sub/moved.yaml");
        Files.createDirectories(renamed.getParent());
        Files.move(f, renamed, StandardCopyOption.ATOMIC_MOVE);
        await(files, () -> JsonParser.parseString(Http.get(http, BASE + "team-a/extra2").body()).getAsJsonObject()
                .get("source").getAsString().equals("file:sub/moved.yaml"));
        Files.delete(renamed);
        await(files, () -> !configzHas("VirtualService", "extra2"));
        Files.writeString(f, "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: broken}\n"
                + "spec:\n  hosts: [\"*\"]\n  http: 3\n");
        await(files, () -> Http.get(http, "/api/v1/config-errors").body().contains("extra.yaml"));
        assertFalse(configzHas("VirtualService", "broken"));
        Files.delete(f);
        await(files, () -> Http.get(http, "/api/v1/config-errors").body().equals("[]"));
    }

    /** Waits for scans of the config dir until the condition holds (no fixed sleeps). */
    static void await(FileConfigSource files, BooleanSupplier condition) throws InterruptedException {
        LinkedBlockingQueue<Object> scans = new LinkedBlockingQueue<>();
        Consumer<FileConfigSource.ScanResult> l = scans::add;
        files.addScanListener(l);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("condition not reached after 30 s of config dir scans");
                }
                scans.poll(1, TimeUnit.SECONDS);
                files.awaitEventsDelivered(5, TimeUnit.SECONDS);
            }
        } finally {
            files.removeScanListener(l);
        }
    }

    @Test
    void onlySpecChangesNeedAPush() throws Exception {
        LinkedBlockingQueue<ConfigEvent> pushes = new LinkedBlockingQueue<>();
        ConfigController controller = server.server().components().configs();
        Consumer<ConfigEvent> h = pushes::add;
        controller.addPushHandler(h);
        try {
            Http.Reply created = put(BASE + "team-a/push", vs("push", "push.example.com", ""));
            assertEquals(201, created.status());
            assertEquals("push", pushes.poll(30, TimeUnit.SECONDS).current().name());
            // labels only: an update event, but no push
            assertEquals(200, put(BASE + "team-a/push", vs("push", "push.example.com", "  labels: {team: a}")).status());
            // spec change: a push; events are ordered, so the label-only one would have come first
            assertEquals(200, put(BASE + "team-a/push", vs("push", "push2.example.com", "  labels: {team: a}")).status());
            ConfigEvent next = pushes.poll(30, TimeUnit.SECONDS);
            assertEquals(ConfigEvent.Type.UPDATE, next.type());
            assertEquals("push2.example.com", ((VirtualService) next.current().spec())
                    .getHosts(0), "the label-only update did not reach the push handler");
            assertEquals(200, Http.send(http, BASE + "team-a/push", "DELETE", null, null).status());
            assertEquals(ConfigEvent.Type.DELETE, pushes.poll(30, TimeUnit.SECONDS).type());
        } finally {
            controller.removePushHandler(h);
        }
    }

    /** A route with websocketUpgrade, a field older Istio APIs had and today's has not. */
    static String oldRoute(String name) {
        return vs(name, name + ".example.com", "") + "    websocketUpgrade: true\n";
    }

    @Test
    void unknownFieldsAreDroppedWithAWarningHeaderUnlessStrictIsAskedFor() {
        Http.Reply warn = put(BASE + "team-a/old", oldRoute("old"));
        assertEquals(201, warn.status(), warn.body());
        assertEquals(List.of("299 - \"spec.http[0].websocketUpgrade: unknown field \\\"websocketUpgrade\\\" in "
                + "istio.networking.v1alpha3.HTTPRoute, ignored\""), warn.header("Warning"));
        assertFalse(warn.body().contains("websocketUpgrade"), "the stored object has no such field: " + warn.body());
        assertTrue(configzHas("VirtualService", "old"));

        Http.Reply strict = put(BASE + "team-a/old-strict?fieldValidation=Strict", oldRoute("old-strict"));
        assertEquals(422, strict.status(), strict.body());
        JsonObject error = JsonParser.parseString(strict.body()).getAsJsonObject().getAsJsonArray("errors").get(0)
                .getAsJsonObject();
        assertEquals("spec.http[0].websocketUpgrade", error.get("path").getAsString());
        assertEquals(12, error.get("line").getAsInt());
        assertEquals(404, Http.get(http, BASE + "team-a/old-strict").status(), "nothing was stored");

        Http.Reply ignore = put(BASE + "team-a/old-ignore?fieldValidation=Ignore", oldRoute("old-ignore"));
        assertEquals(201, ignore.status(), ignore.body());
        assertEquals(List.of(), ignore.header("Warning"));

        Http.Reply bogus = put(BASE + "team-a/old?fieldValidation=Lenient", oldRoute("old"));
        assertEquals(400, bogus.status(), bogus.body());
        assertTrue(bogus.body().contains("Strict, Warn or Ignore"), bogus.body());

        Http.Reply wrongType = put(BASE + "team-a/old", oldRoute("old").replace("websocketUpgrade: true", "timeout: soon"));
        assertEquals(422, wrongType.status(), "wrong types are rejected in the default mode too: " + wrongType.body());
        for (String name : List.of("old", "old-ignore")) {
            assertEquals(200, Http.send(http, BASE + "team-a/" + name, "DELETE", null, null).status());
        }
    }

    @Test
    void unknownFieldsInConfigDirFilesAreListedAsWarnings() throws Exception {
        FileConfigSource files = server.server().components().configs().files();
        Path f = dir.resolve("config/old-route.yaml");
        try {
            Files.writeString(f, oldRoute("old-file"));
            await(files, () -> configzHas("VirtualService", "old-file"));
            JsonArray warnings = JsonParser.parseString(Http.get(http, "/api/v1/config-warnings").body()).getAsJsonArray();
            JsonObject w = warnings.asList().stream().map(e -> e.getAsJsonObject())
                    .filter(o -> o.get("source").getAsString().equals("old-route.yaml")).findFirst().orElseThrow();
            assertEquals("spec.http[0].websocketUpgrade", w.get("path").getAsString());
            assertEquals(12, w.get("line").getAsInt());
            assertEquals("old-file", w.get("name").getAsString());
        } finally {
            Files.deleteIfExists(f);
        }
        await(files, () -> !Http.get(http, "/api/v1/config-warnings").body().contains("old-route.yaml"));
    }

    @Test
    void aFileThatHidesAnApiObjectIsReportedWithBothSources() throws Exception {
        FileConfigSource files = server.server().components().configs().files();
        assertEquals(201, put(BASE + "team-a/twice", vs("twice", "api.example.com", "")).status());
        Path f = dir.resolve("config/twice.yaml");
        try {
            Files.writeString(f, vs("twice", "file.example.com", ""));
            await(files, () -> Http.get(http, BASE + "team-a/twice").body().contains("file:twice.yaml"));
            JsonObject shadow = JsonParser.parseString(Http.get(http, "/api/v1/config-errors").body()).getAsJsonArray()
                    .asList().stream().map(e -> e.getAsJsonObject())
                    .filter(o -> o.get("source").getAsString().equals("twice.yaml")).findFirst().orElseThrow();
            assertEquals("twice", shadow.get("name").getAsString());
            assertTrue(shadow.get("reason").getAsString().contains("written over the API"), shadow.toString());
        } finally {
            Files.deleteIfExists(f);
        }
        await(files, () -> Http.get(http, BASE + "team-a/twice").body().contains("\"source\":\"api\"")
                && Http.get(http, "/api/v1/config-errors").body().equals("[]"));
        assertTrue(Http.get(http, BASE + "team-a/twice").body().contains("api.example.com"), "the API's object is served again");
        assertEquals(200, Http.send(http, BASE + "team-a/twice", "DELETE", null, null).status());
    }
}
