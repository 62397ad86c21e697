package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.credentials.TestCredentials;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
        try (var gateway = new AdsClient(server.ports().get("grpc"), id,
                Map.of("NAMESPACE", "istio-system", "LABELS", "{\"istio\":\"ingressgateway\"}"))) {
            gateway.subscribe(TypeUrls.LISTENER, List.of());
            // the push goes on: the gateway gets its HTTPS listener, with the credential as an SDS reference
            var lds = gateway.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
            for (int i = 0; i < 5 && lds.getResourcesCount() == 0; i++) {
                // connected before the push with the new Gateway: that push brings the listener
                gateway.ack(lds, List.of());
                lds = gateway.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
            }
            assertEquals(1, lds.getResourcesCount(), lds.toString());

            JsonObject s = awaitPushStatus(o -> o.getAsJsonObject("ProxyStatus").has(missing));
            JsonObject entries = s.getAsJsonObject("ProxyStatus").getAsJsonObject(missing);
            JsonObject entry = entries.getAsJsonObject("istio-system/secure|443|istio-system/shop-cert");
            assertEquals(id, entry.get("proxy").getAsString(), entries.toString());
            assertTrue(entry.get("message").getAsString().contains("credentialName \"shop-cert\" not found"),
                    entry.toString());
            assertEquals(1, gauge(missing));

            var cert = TestCredentials.selfSigned("shop.example.com");
            TestCredentials.write(Files.createDirectories(
                    dir.resolve("credentials")), "shop.yaml", TestCredentials
                    .tlsSecret("istio-system", "shop-cert", cert.cert(), cert.key(), null));
            awaitPushStatus(o -> !o.getAsJsonObject("ProxyStatus").has(missing));
            assertEquals(0, gauge(missing));
        } finally {
            Http.send(http, "/api/v1/configs/networking.istio.io/v1/gateways/istio-system/secure", "DELETE", null, null);
        }
    }

    static void putConfig(String path, String yaml) {
        Http.Reply r = Http.send(http, "/api/v1/configs/" + path, "PUT", yaml, null);
        assertEquals(201, r.status(), r.body());
    }

    static void deleteConfig(String path) {
        assertEquals(200, Http.send(http, "/api/v1/configs/" + path, "DELETE", null, null).status());
    }

    /**
     * Nothing silently ignored, over the wire: config that MeshPilot accepts but does not apply
     * shows in push_status (object and field) and in its gauge, and leaves both when deleted.
     */
    @Test
    void acceptedButUnappliedConfigShowsUntilItIsRemoved() throws Exception {
        Map<String, String> objects = new LinkedHashMap<>();
        objects.put("networking.istio.io/v1/sidecars/default/default", """
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: default, namespace: default}
                spec:
                  egress:
                  - {port: {number: 3128, protocol: HTTP_PROXY, name: http-proxy}, hosts: ["*/*"]}
                  - {hosts: ["./*", "istio-system/*"]}
                """);
        objects.put("networking.istio.io/v1/destinationrules/default/proxied", """
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: proxied, namespace: default}
                spec:
                  host: shop.example.com
                  trafficPolicy: {proxyProtocol: {version: V1}}
                """);
        objects.put("networking.istio.io/v1beta1/proxyconfigs/default/cpu", """
                apiVersion: networking.istio.io/v1beta1
                kind: ProxyConfig
                metadata: {name: cpu, namespace: default}
                spec: {concurrency: 2}
                """);
        objects.put("networking.istio.io/v1/workloadgroups/default/vm", """
                apiVersion: networking.istio.io/v1
                kind: WorkloadGroup
                metadata: {name: vm, namespace: default}
                spec: {template: {serviceAccount: vm}}
                """);
        objects.put("security.istio.io/v1/peerauthentications/istio-system/web", """
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: web, namespace: istio-system}
                spec: {selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}}
                """);
        Map<String, String> expected = Map.of(
                "pilot_sidecar_unapplied", "default/default|spec.egress[0].port",
                "pilot_destrule_unapplied", "default/proxied|spec.trafficPolicy.proxyProtocol",
                "pilot_proxyconfig_unapplied", "default/cpu",
                "pilot_workloadgroup_unapplied", "default/vm",
                "pilot_peerauthn_ignored", "istio-system/web");
        expected.keySet().forEach(m -> assertEquals(0, gauge(m), m));
        try {
            objects.forEach(PushStatusTest::putConfig);
            JsonObject s = awaitPushStatus(o -> expected.keySet().stream()
                    .allMatch(m -> o.getAsJsonObject("ProxyStatus").has(m)));
            expected.forEach((metric, key) -> {
                JsonObject entries = s.getAsJsonObject("ProxyStatus").getAsJsonObject(metric);
                assertEquals(Set.of(key), entries.keySet(), metric + ": " + entries);
                String name = key.substring(0, key.contains("|") ? key.indexOf('|') : key.length());
                assertTrue(entries.getAsJsonObject(key).get("message").getAsString().contains(name), entries.toString());
                assertEquals(1, gauge(metric), metric);
            });
        } finally {
            objects.keySet().forEach(PushStatusTest::deleteConfig);
        }
        awaitPushStatus(o -> expected.keySet().stream().noneMatch(m -> o.getAsJsonObject("ProxyStatus").has(m)));
        expected.keySet().forEach(m -> assertEquals(0, gauge(m), m));
    }

    /** What proxyless gRPC proxies do not get is listed while one is connected, and while the config is there. */
    @Test
    void configProxylessGrpcDoesNotApplyShowsWhileAGrpcProxyIsConnected() throws Exception {
        String grpc = "pilot_grpc_unapplied";
        String path = "security.istio.io/v1/peerauthentications/default/strict";
        String key = "PeerAuthentication/default/strict|spec.mtls";
        putConfig(path, """
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: strict, namespace: default}
                spec: {mtls: {mode: STRICT}}
                """);
        try {
            assertEquals(0, gauge(grpc), "no proxyless proxy connected");
            String id = "sidecar~10.0.0.7~grpc-client-1.default~default.svc.cluster.local";
            try (var client = new AdsClient(server.ports().get("grpc"), id,
                    Map.of("NAMESPACE", "default", "GENERATOR", "grpc"))) {
                client.subscribe(TypeUrls.LISTENER, List.of("reviews.default.svc.cluster.local:9080"));
                client.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
                JsonObject s = awaitPushStatus(o -> o.getAsJsonObject("ProxyStatus").has(grpc)
                        && o.getAsJsonObject("ProxyStatus").getAsJsonObject(grpc).has(key));
                JsonObject entries = s.getAsJsonObject("ProxyStatus").getAsJsonObject(grpc);
                assertTrue(entries.getAsJsonObject(key).get("message").getAsString()
                        .contains("not applied to proxyless gRPC servers"), entries.toString());
                // bookinfo's reviews rule: LEAST_REQUEST and outlier detection are not for gRPC clients
                assertTrue(entries.has("DestinationRule/default/reviews|spec.trafficPolicy.outlierDetection"),
                        entries.toString());
                assertEquals(entries.size(), gauge(grpc));
            }
            // the proxy left: not listed any more, though the config is still there (Envoy sidecars apply it)
            awaitPushStatus(o -> !o.getAsJsonObject("ProxyStatus").has(grpc));
            assertEquals(0, gauge(grpc));
        } finally {
            deleteConfig(path);
        }
    }
}
