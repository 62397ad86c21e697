package io.meshpilot.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.testing.Http;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ControlZ pages {@code istioctl dashboard controlz} opens (istiod's pkg/ctrlz: the home
 * page and the topics' {@code /<topic>z/} HTML and {@code /<topic>j/} JSON), over real HTTP.
 * The environment topic is not served: the process's environment may hold secrets.
 */
class ControlZPagesTest {

    @Test
    void homeAndTopicPagesAnswer(@TempDir Path dir) throws Exception {
        try (IstioLogging logging = IstioLogging.install(IstioLoggingTest.options("", true, dir.resolve("pilot.log")));
             ControlZ z = ControlZ.start("127.0.0.1", 0, logging.scopes(), BuildInfo.current().istiodInfo())) {
            Http.Reply home = Http.get(z.port(), "/");
            assertEquals(200, home.status(), home.body());
            for (String topic : List.of("/scopez/", "/memz/", "/procz/", "/versionz/")) {
                assertTrue(home.body().contains("href=\"" + topic + "\""), topic + " not linked from " + home.body());
                Http.Reply page = Http.get(z.port(), topic);
                assertEquals(200, page.status(), topic + ": " + page.body());
                assertTrue(page.body().startsWith("<!DOCTYPE html>"), topic + ": " + page.body());
            }
            assertTrue(Http.get(z.port(), "/scopez/").body().contains("<td>ads</td>"), "the scopes page lists ads");

            JsonObject version = JsonParser.parseString(Http.get(z.port(), "/versionj/").body()).getAsJsonObject();
            assertEquals(List.of("version", "revision", "golang_version", "status", "tag"), List.copyOf(version.keySet()));
            assertEquals(BuildInfo.current().tag(), version.get("tag").getAsString());

            JsonObject proc = JsonParser.parseString(Http.get(z.port(), "/procj/").body()).getAsJsonObject();
            assertEquals(ProcessHandle.current().pid(), proc.get("pid").getAsLong());
            assertTrue(proc.keySet().containsAll(List.of("egid", "euid", "gid", "groups", "pid", "ppid", "uid", "wd",
                    "hostname", "tempdir", "threads", "goroutines")), proc.toString());

            JsonObject mem = JsonParser.parseString(Http.get(z.port(), "/memj/").body()).getAsJsonObject();
            assertTrue(mem.get("HeapAlloc").getAsLong() > 0, mem.toString());
            assertTrue(mem.get("HeapSys").getAsLong() >= mem.get("HeapAlloc").getAsLong(), mem.toString());
            assertEquals(202, Http.send(z.port(), "/memj/forcecollection", "PUT", "", null).status());

            assertEquals(404, Http.get(z.port(), "/envj/").status(), "the environment may hold secrets");
            assertEquals(404, Http.get(z.port(), "/envz/").status(), "the environment may hold secrets");
            assertEquals(404, Http.get(z.port(), "/nosuch").status());
        }
    }
}
