package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pages operators' tools open on an embedded server: istiod's {@code /debug} index
 * ({@code istioctl dashboard istiod-debug}) on the http and monitoring listeners,
 * {@code /debug/clusterz} refused as istiod refuses it without Kubernetes, and
 * {@code istio_build} tagged with {@code git describe --tags --always} of the source built.
 */
class OperatorPagesTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theDebugIndexLinksEveryDebugPageWithIstiodsDescription() {
        List<String> pages = JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/list").body())
                .getAsJsonArray().asList().stream().map(e -> e.getAsString()).toList();
        for (String listener : List.of("http", "monitoring")) {
            Http.Reply index = Http.get(server.ports().get(listener), "/debug");
            assertEquals(200, index.status(), listener + ": " + index.body());
            assertTrue(index.contentType().startsWith("text/html"), index.contentType());
            assertTrue(index.body().contains("<title>Pilot Debug Console</title>"), index.body());
            for (String page : pages) {
                assertTrue(index.body().contains("<a href='/debug/" + page + "'>/debug/" + page + "</a>"),
                        page + " not in the index on " + listener);
            }
            assertTrue(index.body().contains("<a href='/debug/syncz'>/debug/syncz</a></td><td>Synchronization status of"
                    + " all Envoys connected to this Pilot instance</td>"), index.body());
        }
    }

    @Test
    void clusterzIsRefusedWithoutKubernetes() {
        Http.Reply clusterz = Http.get(server.ports().get("http"), "/debug/clusterz");
        assertEquals(400, clusterz.status(), clusterz.body());
        assertEquals("", clusterz.body());
    }

    @Test
    void istioBuildCarriesTheGitDescribeTag() throws Exception {
        var build = PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body())
                .get("istio_build").samples();
        assertEquals(1, build.size(), build.toString());
        assertEquals("pilot", build.getFirst().labels().get("component"));
        // of the commit the build recorded, which is this tree's HEAD unless it moved since the build
        assertEquals(gitDescribe(BuildInfo.current().revision()), build.getFirst().labels().get("tag"),
                "istiod's tag is git describe --tags --always");
    }

    /**
     * What istiod's report_build_info.sh records as the tag (git describe --tags --always), for a
     * commit of the source tree the tests run from. The abbreviation is pinned to git's minimum of 7
     * (lengthened while ambiguous), as the build records it: git's automatic length depends on the
     * object count of each clone. The build also marks a tree with uncommitted changes, which
     * istiod's release builds never have.
     */
    private static String gitDescribe(String commit) throws IOException, InterruptedException {
        Process git = (BuildInfo.current().status().equals("Modified")
                ? new ProcessBuilder("git", "describe", "--tags", "--always", "--abbrev=7", "--dirty")
                : new ProcessBuilder("git", "describe", "--tags", "--always", "--abbrev=7", commit)).redirectErrorStream(true)
                .start();
        String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertEquals(0, git.waitFor(), out);
        return out;
    }
}
