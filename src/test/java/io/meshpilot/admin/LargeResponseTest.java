package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multi-megabyte admin responses arrive whole: with 12,000 ServiceEntries loaded,
 * {@code /debug/configz} and {@code /api/v1/services} (several MB each) are fetched 60 times,
 * ten at a time, over HTTP/1.1 and HTTP/2 (h2c upgrade), and every body is complete JSON with
 * every entry. On Helidon 4.4.0's NIO socket (its default) HTTP/1.1 bodies arrived short
 * ("Malformed encoding found in chunked-encoding") or stalled, and HTTP/2 frames arrived
 * corrupt; the listeners now use its plain socket (HelidonConfig).
 */
class LargeResponseTest {
    private static final int SERVICE_ENTRIES = 12_000;
    private static final List<HttpClient> CLIENTS = List.of(
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(),
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build());

    @Test
    void largeResponsesArriveWhole(@TempDir Path dir) throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < SERVICE_ENTRIES; i++) {
            yaml.append("""
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: large-%1$d, namespace: default}
                    spec:
                      hosts: [large-%1$d.example.com]
                      location: MESH_INTERNAL
                      resolution: STATIC
                      ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: https, protocol: HTTPS}]
                      endpoints: [{address: 10.1.%2$d.%3$d, labels: {app: large-%1$d, version: v1}}]
                    ---
                    """.formatted(i, i / 250, i % 250));
        }
        Files.writeString(config.resolve("large.yaml"), yaml);
        try (MeshPilotServer server = TestServers.start(dir)) {
            int http = server.ports().get("http");
            long deadline = System.nanoTime() + 120_000_000_000L;
            String last = "/api/v1/services/default/large-" + (SERVICE_ENTRIES - 1) + ".example.com";
            while (Http.get(http, last).status() != 200 && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            List<String> paths = List.of("/debug/configz", "/api/v1/services");
            // its size, read with the plain socket's help or not: a short body still has most of it
            int configzSize = CLIENTS.get(0).send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http
                    + "/debug/configz")).build(), HttpResponse.BodyHandlers.ofByteArray()).body().length;
            assertTrue(configzSize > 4_000_000, "/debug/configz is " + configzSize + " bytes");

            List<String> failures = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(10);
            try {
                List<Future<String>> gets = new ArrayList<>();
                for (int i = 0; i < 60; i++) {
                    String path = paths.get(i % paths.size());
                    HttpClient client = CLIENTS.get(i / 2 % CLIENTS.size());
                    gets.add(pool.submit(() -> check(client, http, path)));
                }
                for (Future<String> g : gets) {
                    String problem = g.get();
                    if (problem != null) {
                        failures.add(problem);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(0, failures.size(), failures.size() + " of 60 large responses incomplete, e.g. "
                    + failures.subList(0, Math.min(5, failures.size())));
        }
    }

    /** Null when the response is whole, else what was wrong. */
    private static String check(HttpClient client, int http, String path) {
        String what = client.version() + " " + path;
        try {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + path))
                    .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return what + ": status " + r.statusCode();
            }
            int entries = path.equals("/api/v1/services") ? services(r.body())
                    : (int) JsonParser.parseString(r.body()).getAsJsonArray().asList().stream()
                            .filter(c -> c.getAsJsonObject().get("kind").getAsString().equals("ServiceEntry")).count();
            return entries >= SERVICE_ENTRIES ? null : what + ": " + entries + " entries";
        } catch (IOException | RuntimeException e) {
            return what + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return what + ": interrupted";
        }
    }

    private static int services(String body) {
        return JsonParser.parseString(body).getAsJsonArray().size();
    }
}
