package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** REST writes across a restart of the server, with a damaged state file among them. */
class ConfigStateRestartTest {
    static final String BASE = "/api/v1/configs/networking.istio.io/v1/virtualservices/team-a/";

    @Test
    void writesAreServedAfterARestartAndADamagedFileIsListedNotFatal(@TempDir Path dir) throws Exception {
        String rv;
        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            for (String name : new String[] {"kept", "torn"}) {
                Http.Reply r = Http.send(http, BASE + name, "PUT", ConfigApiTest.vs(name, name + ".example.com", ""), null);
                assertEquals(201, r.status(), r.body());
            }
            rv = com.google.gson.JsonParser.parseString(Http.get(http, BASE + "kept").body()).getAsJsonObject()
                    .getAsJsonObject("metadata").get("resourceVersion").getAsString();
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
            String errors = Http.get(http, "/api/v1/config-errors").body();
            assertTrue(errors.contains(damaged.toString()) && errors.contains("damaged:"), errors);
            // the kept object is also what the proxies are served
            assertTrue(Http.get(http, "/debug/configz").body().contains("kept.example.com"));
        }
    }
}
