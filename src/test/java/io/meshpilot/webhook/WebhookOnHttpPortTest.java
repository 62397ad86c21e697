package io.meshpilot.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With --httpsAddr empty the webhooks move to the http listener, beside the admin API (as istiod). */
class WebhookOnHttpPortTest {

    @Test
    void validateIsServedOnTheHttpPortWhenHttpsAddrIsEmpty(@TempDir Path dir) throws Exception {
        List<String> flags = new ArrayList<>(TestServers.flags(dir));
        flags.set(flags.indexOf("--httpsAddr") + 1, "");
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags, Map.of()))) {
            int http = server.ports().get("http");
            assertEquals(http, server.ports().get("webhook"));
            String review = AdmissionClient.review("v1", "CREATE", AdmissionClient.json("""
                    apiVersion: networking.istio.io/v1
                    kind: Gateway
                    metadata: {name: g, namespace: default}
                    spec: {}
                    """).get(0), false).toString();
            Http.Reply r = sendJson(http, review);
            assertEquals(200, r.status(), r.body());
            assertTrue(r.body().contains("\"allowed\":false"), r.body());
            assertTrue(r.body().contains("configuration is invalid"), r.body());
            assertEquals(200, Http.get(http, "/ready").status(), "the admin API is still there");
        }
    }

    private static Http.Reply sendJson(int port, String body) throws Exception {
        var client = HttpClient.newHttpClient();
        var response = client.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/validate"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Http.Reply(response.statusCode(), response.body(), "", response.headers().map());
    }
}
