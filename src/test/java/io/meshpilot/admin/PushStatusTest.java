package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance 4 over the wire: conflicting config applied to a running server (bookinfo) does
 * not stop the push; {@code /debug/push_status} shows it in istiod's {@code ProxyStatus} and
 * {@code /metrics} has the gauge at the current push's count, back to 0 once it is fixed.
 */
class PushStatusTest {
    static final String VS = "/api/v1/configs/networking.istio.io/v1/virtualservices/default/";
    static final String REVIEWS = "reviews.default.svc.cluster.local";
    static final String DUP = "pilot_vservice_dup_domain";
    static final String UNDEFINED = "pilot_vservice_undefined_subset";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;
    static int monitoring;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        http = server.ports().get("http");
        monitoring = server.ports().get("monitoring");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static JsonObject pushStatus() {
        Http.Reply r = Http.get(http, "/debug/push_status");
        assertEquals(200, r.status(), r.body());
        return JsonParser.parseString(r.body()).getAsJsonObject();
    }

    /** Polls push_status until {@code until} holds (a full push follows the debounce). */
    static JsonObject awaitPushStatus(Predicate<JsonObject> until) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        JsonObject s = pushStatus();
        while (!until.test(s) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            s = pushStatus();
        }
        assertTrue(until.test(s), s.toString());
        return s;
    }

    static double gauge(String name) {
        Map<String, PrometheusTextParser.Family> families =
                PrometheusTextParser.parse(Http.get(monitoring, "/metrics").body());
        PrometheusTextParser.Family f = families.get(name);
        assertTrue(f != null && f.type().equals("gauge") && f.samples().size() == 1, name + ": " + f);
        return f.samples().get(0).value();
    }

    static void put(String name, String yaml) {
        Http.Reply r = Http.send(http, VS + name, "PUT", yaml, null);
        assertEquals(201, r.status(), r.body());
    }

    @Test
    void conflictsShowInPushStatusAndGaugesAndThePushGoesOn() throws Exception {
        JsonObject before = pushStatus();
        assertEquals(new JsonObject(), before.getAsJsonObject("ProxyStatus"), "bookinfo has no problems: " + before);
        assertEquals(0, gauge(DUP));
        assertEquals(0, gauge(UNDEFINED));
        assertEquals(0, gauge("pilot_destrule_subsets"));
        long version = before.get("version").getAsLong();

        put("a-reviews-canary", """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: a-reviews-canary, namespace: default}
                spec: {hosts: [reviews], http: [{route: [{destination: {host: reviews, subset: v3}}]}]}
                """);
        put("shop", """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: shop, namespace: default}
                spec: {hosts: [shop.example.com], http: [{route: [{destination: {host: reviews, subset: v4}}]}]}
                """);
        JsonObject s = awaitPushStatus(o -> o.getAsJsonObject("ProxyStatus").has(DUP)
                && o.getAsJsonObject("ProxyStatus").has(UNDEFINED));
        assertTrue(s.get("version").getAsLong() > version, "a new push was built and installed: " + s);
        assertEquals(6, s.get("virtualServices").getAsInt(), "both new VirtualServices are in the push: " + s);

        JsonObject status = s.getAsJsonObject("ProxyStatus");
        assertEquals(2, status.size(), status.toString());
        JsonObject dup = status.getAsJsonObject(DUP);
        assertEquals(1, dup.size(), dup.toString());
        JsonObject entry = dup.getAsJsonObject(REVIEWS);
        assertFalse(entry.has("proxy"), "concerns every proxy: no proxy, as istiod's omitempty");
        assertTrue(entry.get("message").getAsString().contains("default/a-reviews-canary (default/reviews is older)"),
                entry.toString());
        JsonObject undefined = status.getAsJsonObject(UNDEFINED);
        assertEquals(1, undefined.size(), undefined.toString());
        assertTrue(undefined.getAsJsonObject("default/shop|v4|" + REVIEWS).get("message").getAsString()
                .contains("subset v4"), undefined.toString());

        assertEquals(1, gauge(DUP));
        assertEquals(1, gauge(UNDEFINED));
        assertEquals(0, gauge("pilot_destrule_subsets"));

        // fixed: the next push has no such problem, and the gauge follows the push in force
        assertEquals(200, Http.send(http, VS + "a-reviews-canary", "DELETE", null, null).status());
        s = awaitPushStatus(o -> !o.getAsJsonObject("ProxyStatus").has(DUP));
        assertTrue(s.getAsJsonObject("ProxyStatus").has(UNDEFINED), s.toString());
        assertEquals(0, gauge(DUP));
        assertEquals(1, gauge(UNDEFINED));
    }

    @Test
    void aConnectedGatewaysMissingCredentialShowsUntilTheSecretAppears() throws Exception {
        String missing = "pilot_gateway_credential_missing";
        Http.Reply r = Http.send(http, "/api/v1/configs/networking.istio.io/v1/gateways/istio-system/secure", "PUT", """
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: secure, namespace: istio-system}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - port: {number: 443, name: https, protocol: HTTPS}
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, credentialName: shop-cert}
                """, null);
        assertEquals(201, r.status(), r.body());
        String id = "router~10.0.0.9~ingress-1.istio-system~istio-system.svc.cluster.local";
        try (var gateway = new io.meshpilot.testing.AdsClient(server.ports().get("grpc"), id,
                Map.of("NAMESPACE", "istio-system", "LABELS", "{\"istio\":\"ingressgateway\"}"))) {
            gateway.subscribe(io.meshpilot.xds.TypeUrls.LISTENER, java.util.List.of());
            // the push goes on: the gateway gets its HTTPS listener, with the credential as an SDS reference
            var lds = gateway.await(io.meshpilot.xds.TypeUrls.LISTENER, java.time.Duration.ofSeconds(20));
            for (int i = 0; i < 5 && lds.getResourcesCount() == 0; i++) {
                // connected before the push with the new Gateway: that push brings the listener
                gateway.ack(lds, java.util.List.of());
                lds = gateway.await(io.meshpilot.xds.TypeUrls.LISTENER, java.time.Duration.ofSeconds(20));
            }
            assertEquals(1, lds.getResourcesCount(), lds.toString());

            JsonObject s = awaitPushStatus(o -> o.getAsJsonObject("ProxyStatus").has(missing));
            JsonObject entries = s.getAsJsonObject("ProxyStatus").getAsJsonObject(missing);
            JsonObject entry = entries.getAsJsonObject("istio-system/secure|443|istio-system/shop-cert");
            assertEquals(id, entry.get("proxy").getAsString(), entries.toString());
            assertTrue(entry.get("message").getAsString().contains("credentialName \"shop-cert\" not found"),
                    entry.toString());
            assertEquals(1, gauge(missing));

            var cert = io.meshpilot.security.credentials.TestCredentials.selfSigned("shop.example.com");
            io.meshpilot.security.credentials.TestCredentials.write(java.nio.file.Files.createDirectories(
                    dir.resolve("credentials")), "shop.yaml", io.meshpilot.security.credentials.TestCredentials
                    .tlsSecret("istio-system", "shop-cert", cert.cert(), cert.key(), null));
            awaitPushStatus(o -> !o.getAsJsonObject("ProxyStatus").has(missing));
            assertEquals(0, gauge(missing));
        } finally {
            Http.send(http, "/api/v1/configs/networking.istio.io/v1/gateways/istio-system/secure", "DELETE", null, null);
        }
    }
}
