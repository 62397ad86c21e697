package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** REST writes across a restart of the server, with a damaged state file among them. */
class ConfigStateRestartTest {
    static final String BASE = "/api/v1/configs/networking.istio.io/v1/virtualservices/team-a/";
    static final String LONGEST = "l".repeat(253);

    @Test
    void writesAreServedAfterARestartAndADamagedFileIsListedNotFatal(@TempDir Path dir) throws Exception {
        String rv;
        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            for (String name : new String[] {"kept", "torn"}) {
                Http.Reply r = Http.send(http, BASE + name, "PUT", ConfigApiTest.vs(name, name + ".example.com", ""), null);
                assertEquals(201, r.status(), r.body());
            }
            rv = JsonParser.parseString(Http.get(http, BASE + "kept").body()).getAsJsonObject()
                    .getAsJsonObject("metadata").get("resourceVersion").getAsString();
            // the longest name Kubernetes allows: its file name is hashed to fit the file system
            Http.Reply longest = Http.send(http, BASE + LONGEST, "PUT", ConfigApiTest.vs(LONGEST, "long.example.com", ""), null);
            assertEquals(201, longest.status(), longest.body());
        }
        Path damaged = dir.resolve("state/virtualservice/team-a/torn.json");
        Files.writeString(damaged, Files.readString(damaged).substring(0, 40));

        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            assertEquals(200, Http.get(http, "/ready").status());
            Http.Reply kept = Http.get(http, BASE + "kept");
            assertEquals(200, kept.status(), kept.body());
            assertTrue(kept.body().contains("\"resourceVersion\":\"" + rv + "\""), kept.body());
            assertEquals(404, Http.get(http, BASE + "torn").status());
            assertEquals(200, Http.get(http, BASE + LONGEST).status());
            String errors = Http.get(http, "/api/v1/config-errors").body();
            assertTrue(errors.contains(damaged.toString()) && errors.contains("damaged:"), errors);
            // the kept object is also what the proxies are served
            assertTrue(Http.get(http, "/debug/configz").body().contains("kept.example.com"));
        }
    }

    /**
     * What is acknowledged comes back after a restart: a body the REST API takes whose stored
     * form (with metadata and status) would be too big to load back is refused with 413, not
     * acknowledged and then lost; one a little smaller is kept and served.
     */
    @Test
    void anObjectTooBigToLoadBackIsRefusedAndOneThatFitsIsKept(@TempDir Path dir) throws Exception {
        String tooBig = bodyOfBytes("too-big", HttpLimits.MAX_REQUEST_BODY - 16);
        String fits = bodyOfBytes("fits", HttpLimits.MAX_REQUEST_BODY - 4096);
        String rv;
        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            Http.Reply refused = Http.send(http, BASE + "too-big", "PUT", tooBig, null);
            assertEquals(413, refused.status(), refused.body().substring(0, Math.min(500, refused.body().length())));
            assertTrue(refused.body().contains("config state file"), refused.body());
            assertEquals(404, Http.get(http, BASE + "too-big").status());
            Http.Reply kept = Http.send(http, BASE + "fits", "PUT", fits, null);
            assertEquals(201, kept.status(), kept.body().substring(0, Math.min(500, kept.body().length())));
            rv = JsonParser.parseString(kept.body()).getAsJsonObject()
                    .getAsJsonObject("metadata").get("resourceVersion").getAsString();
        }
        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            Http.Reply fitsAfter = Http.get(http, BASE + "fits");
            assertEquals(200, fitsAfter.status());
            assertTrue(fitsAfter.body().contains("\"resourceVersion\":\"" + rv + "\""));
            assertEquals(404, Http.get(http, BASE + "too-big").status());
            String errors = Http.get(http, "/api/v1/config-errors").body();
            assertEquals(0, JsonParser.parseString(errors).getAsJsonArray().size(), errors);
        }
    }

    /**
     * A VirtualService of exactly {@code bytes} bytes of compact JSON, padded with annotations
     * of 1000 characters each (one huge scalar would take SnakeYAML seconds to scan). As
     * stored it is longer by its metadata (resourceVersion, generation, creation time).
     */
    private static String bodyOfBytes(String name, long bytes) {
        String head = "{\"apiVersion\":\"networking.istio.io/v1\",\"kind\":\"VirtualService\",\"metadata\":{\"name\":\""
                + name + "\",\"namespace\":\"team-a\",\"annotations\":{";
        String tail = "\"last\":\"\"}},\"spec\":{\"hosts\":[\"" + name + ".example.com\"],\"http\":[{\"route\":"
                + "[{\"destination\":{\"host\":\"" + name + ".example.com\"}}]}]}}";
        StringBuilder annotations = new StringBuilder();
        for (int i = 0; head.length() + annotations.length() + tail.length() + 1100 < bytes; i++) {
            annotations.append("\"a").append(i).append("\":\"").append("p".repeat(1000)).append("\",");
        }
        int pad = (int) (bytes - head.length() - annotations.length() - tail.length());
        String body = head + annotations + tail.replace("\"last\":\"\"", "\"last\":\"" + "p".repeat(pad) + "\"");
        assertEquals(bytes, body.getBytes(StandardCharsets.UTF_8).length);
        return body;
    }
}
