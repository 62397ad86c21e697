package io.meshpilot.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.DiscoveryServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry in a running server with the embedded bookinfo config. */
class RegistryServerTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;
    static final String REVIEWS = "reviews.default.svc.cluster.local";

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

    static JsonObject service(JsonArray all, String host) {
        for (JsonElement e : all) {
            if (e.getAsJsonObject().get("hostname").getAsString().equals(host)) {
                return e.getAsJsonObject();
            }
        }
        throw new AssertionError("no service " + host + " in " + all);
    }

    @Test
    void bookinfoServicesWithPortsProtocolsAndEndpoints() {
        JsonArray all = JsonParser.parseString(Http.get(http, "/api/v1/services").body()).getAsJsonArray();
        assertEquals(List.of("details.default.svc.cluster.local", "productpage.default.svc.cluster.local",
                "ratings.default.svc.cluster.local", REVIEWS), all.asList().stream()
                .map(e -> e.getAsJsonObject().get("hostname").getAsString()).toList());
        JsonObject reviews = service(all, REVIEWS);
        JsonObject port = reviews.getAsJsonArray("ports").get(0).getAsJsonObject();
        assertEquals(9080, port.get("port").getAsInt());
        assertEquals("http", port.get("name").getAsString());
        assertEquals("HTTP", port.get("protocol").getAsString());
        assertEquals("ClientSideLB", reviews.get("resolution").getAsString());
        assertEquals("ServiceEntry/default/reviews", reviews.get("source").getAsString());
        JsonArray eps = reviews.getAsJsonArray("endpoints");
        assertEquals(3, eps.size());
        Map<String, JsonObject> byVersion = new HashMap<>();
        eps.forEach(e -> byVersion.put(e.getAsJsonObject().getAsJsonObject("labels").get("version").getAsString(),
                e.getAsJsonObject()));
        assertEquals(Set.of("v1", "v2", "v3"), byVersion.keySet());
        JsonObject v3 = byVersion.get("v3");
        assertEquals("127.0.0.1", v3.get("address").getAsString());
        assertEquals(19084, v3.get("port").getAsInt());
        assertEquals("us-west1/us-west1-a", v3.get("locality").getAsString());
        assertEquals("spiffe://cluster.local/ns/default/sa/bookinfo-reviews", v3.get("serviceAccount").getAsString());
        assertEquals("istio", v3.get("tlsMode").getAsString());
        assertEquals("reviews", v3.getAsJsonObject("labels").get("app").getAsString());

        Http.Reply one = Http.get(http, "/api/v1/services/default/" + REVIEWS);
        assertEquals(200, one.status());
        assertEquals(reviews, JsonParser.parseString(one.body()).getAsJsonObject());
        assertEquals(404, Http.get(http, "/api/v1/services/default/nope.example").status());

        JsonObject shardz = JsonParser.parseString(Http.get(http, "/debug/endpointShardz").body()).getAsJsonObject();
        JsonObject shard = shardz.getAsJsonObject(REVIEWS).getAsJsonObject("default");
        assertEquals(3, shard.getAsJsonObject("Shards").getAsJsonArray("External/Kubernetes").size());
        assertEquals(4, JsonParser.parseString(Http.get(http, "/debug/registryz").body()).getAsJsonArray().size());
        assertTrue(Http.get(http, "/debug/instancesz").body().contains("default/reviews-v3"));
        var metrics = PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body());
        assertEquals(4.0, metrics.get("pilot_services").samples().get(0).value());
    }

    @Test
    void aWorkloadEntryIsOneIncrementalEdsPushAndAPortChangeIsFull() throws Exception {
        DiscoveryServer xds = server.server().components().discovery();
        ConfigController configs = server.server().components().configs();
        LinkedBlockingQueue<PushRequest> arrivals = new LinkedBlockingQueue<>();
        List<PushRequest> requests = new CopyOnWriteArrayList<>();
        Consumer<PushRequest> listener = req -> {
            requests.add(req);
            arrivals.add(req);
        };
        xds.updates().addListener(listener);
        try {
            long eds = xds.updates().inboundUpdates("eds");
            long endpointTriggers = xds.updates().pushTriggers(TriggerReason.ENDPOINT);
            Http.Reply r = Http.send(http, "/api/v1/configs/networking.istio.io/v1/workloadentries/default/reviews-v4",
                    "PUT", """
                            apiVersion: networking.istio.io/v1
                            kind: WorkloadEntry
                            metadata: {name: reviews-v4, namespace: default}
                            spec:
                              address: 127.0.0.1
                              ports: {http: 19086}
                              labels: {app: reviews, version: v4}
                              serviceAccount: bookinfo-reviews
                              locality: us-west1/us-west1-b
                            """, null);
            assertEquals(201, r.status(), r.body());
            assertTrue(configs.store().awaitEventsDelivered(20, TimeUnit.SECONDS));
            assertEquals(1, requests.size(), requests.toString());
            PushRequest req = requests.get(0);
            assertFalse(req.full(), "an endpoint change is incremental");
            assertEquals(Set.of(new ConfigKey("ServiceEntry", "default", REVIEWS)), req.configsUpdated());
            assertEquals(Set.of(TriggerReason.ENDPOINT), req.reasons());
            assertEquals(eds + 1, xds.updates().inboundUpdates("eds"), "pilot_inbound_updates{type=eds}");
            assertEquals(endpointTriggers + 1, xds.updates().pushTriggers(TriggerReason.ENDPOINT), "pilot_push_triggers{type=endpoint}");
            JsonObject reviews = JsonParser.parseString(Http.get(http, "/api/v1/services/default/" + REVIEWS).body())
                    .getAsJsonObject();
            assertEquals(4, reviews.getAsJsonArray("endpoints").size());

            // the ServiceEntry's ports change (an edit of its file): one full push naming it
            requests.clear();
            long svc = xds.updates().inboundUpdates("svc");
            Path file = dir.resolve("config/services.yaml");
            String yaml = Files.readString(file);
            int at = yaml.indexOf("name: reviews");
            Files.writeString(file, yaml.substring(0, at) + yaml.substring(at).replaceFirst("number: 9080", "number: 9081"));
            arrivals.clear();
            assertTrue(arrivals.poll(30, TimeUnit.SECONDS) != null, "the file change arrives as a push request");
            assertTrue(configs.store().awaitEventsDelivered(20, TimeUnit.SECONDS));
            assertEquals(1, requests.size(), requests.toString());
            assertTrue(requests.get(0).full(), "a service change is a full push");
            assertEquals(Set.of(new ConfigKey("ServiceEntry", "default", REVIEWS)), requests.get(0).configsUpdated());
            assertEquals(svc + 1, xds.updates().inboundUpdates("svc"));

            // any other kind's change: a full config push naming it
            requests.clear();
            Http.Reply dr = Http.send(http, "/api/v1/configs/networking.istio.io/v1/destinationrules/default/extra",
                    "PUT", "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: extra, namespace: default}\n"
                            + "spec: {host: ratings}\n", null);
            assertEquals(201, dr.status(), dr.body());
            assertTrue(configs.store().awaitEventsDelivered(20, TimeUnit.SECONDS));
            assertEquals(List.of(new ConfigKey("DestinationRule", "default", "extra")),
                    new ArrayList<>(requests.get(0).configsUpdated()));
            assertEquals(Set.of(TriggerReason.CONFIG), requests.get(0).reasons());
        } finally {
            xds.updates().removeListener(listener);
        }
    }
}
