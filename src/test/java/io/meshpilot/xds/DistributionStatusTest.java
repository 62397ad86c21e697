package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** "Has my config reached the proxies?" with 50 connected clients, then one that NACKs. */
class DistributionStatusTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;
    static final List<AdsClient> clients = new ArrayList<>();
    static final String VS = "/api/v1/configs/networking.istio.io/v1/virtualservices/default/web";

    @BeforeAll
    static void start() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        // 51 streams open at once: above the 2-core default admission burst (25)
        server = TestServers.start(dir, Map.of("PILOT_MAX_REQUESTS_PER_SECOND", "1000"));
        http = server.ports().get("http");
        for (int i = 0; i < 50; i++) {
            AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~10.1.0." + i + "~p" + i + ".default~default.svc.cluster.local",
                    Map.of("NAMESPACE", "default"));
            c.autoAnswer(null);
            c.subscribe(TypeUrls.CLUSTER, List.of());
            clients.add(c);
        }
    }

    @AfterAll
    static void stop() {
        clients.forEach(AdsClient::close);
        if (server != null) {
            server.close();
        }
    }

    static String vs(String host) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: web, namespace: default}
                spec:
                  hosts: [web.example.com]
                  http: [{route: [{destination: {host: %s}}]}]
                """.formatted(host);
    }

    static JsonObject awaitStatus(Predicate<JsonObject> done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        JsonObject st;
        do {
            st = JsonParser.parseString(Http.get(http, VS + "/status").body()).getAsJsonObject();
            if (done.test(st)) {
                return st;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("status did not settle: " + st);
    }

    @Test
    void fiftyClientsAckAChangeAndANackIsNamed() throws Exception {
        assertEquals(201, Http.send(http, VS, "PUT", vs("a.example.com"), null).status());
        JsonObject st = awaitStatus(s -> s.get("acked").getAsInt() == 50);
        assertEquals(50, st.get("proxies").getAsInt());
        assertEquals(0, st.get("pending").getAsInt());
        assertTrue(st.get("pushVersion").getAsLong() > 1, st.toString());

        AdsClient nacker = new AdsClient(server.ports().get("grpc"), "sidecar~10.2.0.1~bad.default~default.svc.cluster.local",
                Map.of("NAMESPACE", "default"));
        clients.add(nacker);
        nacker.subscribe(TypeUrls.CLUSTER, List.of());
        nacker.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
        nacker.autoAnswer("this proxy rejects everything");
        assertEquals(200, Http.send(http, VS, "PUT", vs("b.example.com"), null).status());
        st = awaitStatus(s -> s.get("acked").getAsInt() == 50 && s.getAsJsonArray("nacked").size() == 1);
        JsonObject nack = st.getAsJsonArray("nacked").get(0).getAsJsonObject();
        assertEquals("sidecar~10.2.0.1~bad.default~default.svc.cluster.local", nack.get("proxy").getAsString());
        assertEquals("cds: this proxy rejects everything", nack.get("error").getAsString());
        assertEquals(51, st.get("proxies").getAsInt());

        JsonObject proxy = JsonParser.parseString(Http.get(http, "/api/v1/proxies/" + nack.get("proxy").getAsString())
                .body()).getAsJsonObject();
        assertEquals("this proxy rejects everything", proxy.getAsJsonObject("types").getAsJsonObject("cds")
                .get("lastNack").getAsString());
        assertEquals(51, JsonParser.parseString(Http.get(http, "/api/v1/proxies").body()).getAsJsonArray().size());
    }
}
