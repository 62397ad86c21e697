package io.meshpilot.networking.authn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.sun.net.httpserver.HttpServer;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.model.JwksResolver;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarInboundListenerBuilder;
import io.meshpilot.security.jwt.JwksCache;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * RequestAuthentication from Istio YAML in the real validating store to the jwt_authn filter of
 * a sidecar's virtualInbound, with key sets served by a real HTTP server on loopback: which
 * policies apply (namespace, root namespace, selector, targetRef), and what a push does when
 * the key server answers, hangs, or answers garbage.
 */
class RequestAuthenticationPushTest {
    static final String ISSUER = "testing@secure.istio.io";
    /** A push never waits longer than this for key sets it has never fetched. */
    static final Duration FIRST_FETCH_WAIT = Duration.ofMillis(300);
    /** Far longer than any bound under test: a push that waited for the hanging server would hit it. */
    static final Duration GUARD = Duration.ofSeconds(20);

    final Proxy web = new Proxy("sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
            List.of("10.0.0.1"), "web-1.shop", "shop.svc.cluster.local", "shop", Map.of("app", "web"), "Kubernetes",
            "1.24.0", "", "", "", Locality.NONE);

    MeshFixture fixture;
    HttpServer server;
    String base;
    final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    final CountDownLatch release = new CountDownLatch(1);
    String goodKeys;
    /** What /rotating answers (null: HTTP 404). */
    volatile String rotating;
    JwksCache cache;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.applyResource("/meshes/shop.yaml");
        goodKeys = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
            String body = switch (path) {
                case "/good" -> goodKeys;
                case "/rotating" -> rotating;
                case "/garbage" -> "<html>this is no key set</html>";
                case "/no-keys" -> "{\"issuer\": \"x\"}";
                case "/hang", "/slow" -> {
                    try {
                        release.await(); // until the test ends (hang) or lets it answer (slow)
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    yield goodKeys;
                }
                default -> null;
            };
            byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length == 0 ? -1 : bytes.length);
            try (var out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
        cache = new JwksCache(new JwksCache.Options(FIRST_FETCH_WAIT, Duration.ofMinutes(20), Duration.ofMinutes(1),
                Duration.ofDays(7)));
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        cache.close();
        server.stop(0);
        fixture.close();
    }

    String policy(String name, String namespace, String extra, String rule) {
        return """
                apiVersion: security.istio.io/v1
                kind: RequestAuthentication
                metadata: {name: %s, namespace: %s}
                spec:
                %s  jwtRules:
                  - %s
                """.formatted(name, namespace, extra, rule);
    }

    String uriRule(String path) {
        return "{issuer: \"" + ISSUER + "\", jwksUri: \"" + base + path + "\", timeout: 60s}";
    }

    /** The jwt_authn config on every HTTP chain of the sidecar's virtualInbound (all equal), or null. */
    JwtAuthentication inboundJwt(PushContext push) throws InvalidProtocolBufferException {
        Listener inbound = SidecarInboundListenerBuilder.virtualInbound(web, push);
        List<JwtAuthentication> found = new ArrayList<>();
        int httpChains = 0;
        for (FilterChain fc : inbound.getFilterChainsList()) {
            for (Filter f : fc.getFiltersList()) {
                if (!f.getTypedConfig().is(HttpConnectionManager.class)) {
                    continue;
                }
                httpChains++;
                HttpConnectionManager hcm = f.getTypedConfig().unpack(HttpConnectionManager.class);
                List<HttpFilter> filters = hcm.getHttpFiltersList();
                for (int i = 0; i < filters.size(); i++) {
                    if (filters.get(i).getName().equals(JwtAuthnFilter.FILTER_NAME)) {
                        assertEquals(0, i, "jwt_authn runs first, before authorization and the rest");
                        found.add(filters.get(i).getTypedConfig().unpack(JwtAuthentication.class));
                    }
                }
            }
        }
        assertTrue(httpChains > 0);
        if (found.isEmpty()) {
            return null;
        }
        assertEquals(httpChains, found.size(), "every inbound HTTP chain authenticates");
        found.forEach(a -> assertEquals(found.get(0), a));
        return found.get(0);
    }

    static String inlineKeys(JwtAuthentication a, String provider) {
        return a.getProvidersOrThrow(provider).getLocalJwks().getInlineString();
    }

    @Test
    void noPolicyNoFilterAndPoliciesApplyByNamespaceRootAndSelector() throws Exception {
        assertEquals(null, inboundJwt(fixture.push(cache)));
        fixture.apply(policy("other-ns", "other", "", "{issuer: other, jwks: '" + goodKeys + "'}")
                + "---\n" + policy("unselected", "shop", "  selector: {matchLabels: {app: db}}\n",
                "{issuer: unselected, jwks: '" + goodKeys + "'}")
                + "---\n" + policy("targeted", "shop", "  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\n",
                "{issuer: targeted, jwks: '" + goodKeys + "'}"));
        assertEquals(null, inboundJwt(fixture.push(cache)), "other namespace, unmatched selector, targetRef: none apply");
        fixture.apply(policy("mesh", "istio-system", "", "{issuer: z-mesh, jwks: '" + goodKeys + "'}")
                + "---\n" + policy("ns", "shop", "", "{issuer: a-namespace, jwks: '" + goodKeys + "'}")
                + "---\n" + policy("workload", "shop", "  selector: {matchLabels: {app: web}}\n",
                "{issuer: m-workload, jwks: '" + goodKeys + "'}"));
        JwtAuthentication a = inboundJwt(fixture.push(cache));
        assertEquals(List.of("a-namespace", "m-workload", "z-mesh"), List.of(a.getProvidersOrThrow("origins-0").getIssuer(),
                a.getProvidersOrThrow("origins-1").getIssuer(), a.getProvidersOrThrow("origins-2").getIssuer()));
        assertEquals(3, a.getProvidersCount());
    }

    /** A cache whose pushes wait for first fetches up to GUARD: for servers that answer at once. */
    static JwksCache patientCache() {
        return new JwksCache(new JwksCache.Options(GUARD, Duration.ofMinutes(20), Duration.ofMinutes(1),
                Duration.ofDays(7)));
    }

    @Test
    void goodKeySetIsFetchedOnceAndInlined() throws Exception {
        fixture.apply(policy("jwt", "shop", "", uriRule("/good")));
        try (JwksCache patient = patientCache()) {
            for (int i = 0; i < 3; i++) {
                assertEquals(goodKeys, inlineKeys(inboundJwt(fixture.push(patient)), "origins-0"));
            }
        }
        assertEquals(1, hits.get("/good").get(), "fetched once, then served from the cache");
    }

    @Test
    void hangingKeyServerNeverStallsAPushAndNeverOpensTheDoor() throws Exception {
        fixture.apply(policy("jwt", "shop", "", uriRule("/hang")));
        // the rule's timeout is 60s: a push that waited for the fetch would not end within GUARD
        for (int i = 0; i < 3; i++) {
            JwtAuthentication a = assertTimeoutPreemptively(GUARD, () -> inboundJwt(fixture.push(cache)));
            assertEquals(JwksResolver.PUBLIC_ONLY_JWKS, inlineKeys(a, "origins-0"));
            assertEquals(ISSUER, a.getProvidersOrThrow("origins-0").getIssuer());
        }
        assertEquals(1, hits.get("/hang").get(), "one fetch in flight, not one per push");
    }

    @Test
    void garbageOrAKeylessDocumentGivesTheRejectAllKeySet() throws Exception {
        fixture.apply(policy("garbage", "shop", "", uriRule("/garbage"))
                + "---\n" + policy("keyless", "shop", "", "{issuer: keyless, jwksUri: \"" + base + "/no-keys\"}")
                + "---\n" + policy("missing", "shop", "", "{issuer: missing, jwksUri: \"" + base + "/nothing-here\"}")
                + "---\n" + policy("oidc", "shop", "", "{issuer: \"" + base + "/no-such-issuer\"}"));
        // the first fetches answer at once; wait for them so the push sees their outcome
        try (JwksCache patient = patientCache()) {
            JwtAuthentication a = inboundJwt(fixture.push(patient));
            assertEquals(4, a.getProvidersCount());
            a.getProvidersMap().forEach((name, p) -> assertEquals(JwksResolver.PUBLIC_ONLY_JWKS,
                    p.getLocalJwks().getInlineString(), name + " (" + p.getIssuer() + ")"));
            assertEquals(1, hits.get("/garbage").get());
            assertEquals(1, hits.get("/no-keys").get());
            assertEquals(1, hits.get("/no-such-issuer/.well-known/openid-configuration").get());
        }
    }

    @Test
    void keysArrivingAfterAPushTriggerAnotherThatInlinesThem() throws Exception {
        CountDownLatch changed = new CountDownLatch(1);
        cache.addChangeHandler(changed::countDown);
        fixture.apply(policy("jwt", "shop", "", uriRule("/slow")));
        assertEquals(JwksResolver.PUBLIC_ONLY_JWKS, inlineKeys(inboundJwt(fixture.push(cache)), "origins-0"));
        release.countDown();
        assertTrue(changed.await(GUARD.toSeconds(), TimeUnit.SECONDS), "the change handler (a full push) ran");
        assertEquals(goodKeys, inlineKeys(inboundJwt(fixture.push(cache)), "origins-0"));
        assertEquals(1, hits.get("/slow").get());
    }

    @Test
    void refreshesPickUpRotatedKeysAndAFailedRefreshKeepsTheKeysHeld() throws Exception {
        String rotated = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
        rotating = goodKeys;
        fixture.apply(policy("jwt", "shop", "", uriRule("/rotating")));
        BlockingQueue<String> pushes = new LinkedBlockingQueue<>();
        try (JwksCache refreshing = new JwksCache(new JwksCache.Options(GUARD, Duration.ofMillis(50),
                Duration.ofMillis(50), Duration.ofDays(7)))) {
            refreshing.addChangeHandler(() -> pushes.add("push"));
            assertEquals(goodKeys, inlineKeys(inboundJwt(fixture.push(refreshing)), "origins-0"));
            rotating = rotated;
            assertEquals("push", pushes.poll(GUARD.toSeconds(), TimeUnit.SECONDS), "a rotation pushes");
            assertEquals(rotated, inlineKeys(inboundJwt(fixture.push(refreshing)), "origins-0"));
            int before = hits.get("/rotating").get();
            rotating = null; // the server now fails: 404
            while (hits.get("/rotating").get() < before + 3) {
                Thread.sleep(20); // several failed refreshes
            }
            assertEquals(rotated, inlineKeys(inboundJwt(fixture.push(refreshing)), "origins-0"),
                    "a failed refresh keeps the keys fetched before, as istiod");
        }
    }

    @Test
    void withoutAResolverEveryRemoteKeySetIsTheRejectAllOne() throws Exception {
        fixture.apply(policy("jwt", "shop", "", uriRule("/good")));
        assertEquals(JwksResolver.PUBLIC_ONLY_JWKS, inlineKeys(inboundJwt(fixture.push()), "origins-0"));
        assertEquals(null, hits.get("/good"));
    }

}
