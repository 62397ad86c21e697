package io.meshpilot.security.jwt;

import static io.meshpilot.security.jwt.TestTokens.AUDIENCE;
import static io.meshpilot.security.jwt.TestTokens.ISSUER;
import static io.meshpilot.security.jwt.TestTokens.NOW;
import static io.meshpilot.security.jwt.TestTokens.claims;
import static io.meshpilot.security.jwt.TestTokens.jwks;
import static io.meshpilot.security.jwt.TestTokens.sign;
import static org.jose4j.jws.AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256;
import static org.jose4j.jws.AlgorithmIdentifiers.RSA_USING_SHA256;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.meshpilot.security.Authenticator.AuthenticationException;
import io.meshpilot.security.jwt.TestTokens.MutableClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jose4j.jwk.PublicJsonWebKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Key sets loaded from a real file and from a real HTTP server on loopback: caching, reloading
 * on an unknown kid at most once per interval, failures reported as authentication errors.
 */
class RemoteJwksTest {
    static final Duration INTERVAL = JwtAuthenticator.DEFAULT_REFRESH_INTERVAL;
    static PublicJsonWebKey rsa1;
    static PublicJsonWebKey rsa2;
    static PublicJsonWebKey ec1;

    final MutableClock clock = new MutableClock(NOW);
    /** Path -> (status, body) served by the HTTP server; absent paths are 404. */
    final Map<String, Map.Entry<Integer, String>> served = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    HttpServer server;
    String base;
    JwtAuthenticator authn;

    @BeforeAll
    static void keys() {
        rsa1 = TestTokens.rsa("rsa-1");
        rsa2 = TestTokens.rsa("rsa-2");
        ec1 = TestTokens.ec("ec-1");
    }

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
            var reply = served.getOrDefault(path, Map.entry(404, "not found"));
            byte[] body = reply.getValue().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(reply.getKey(), body.length);
            try (var out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (authn != null) {
            authn.close();
        }
        server.stop(0);
    }

    JwtAuthenticator authenticator(String issuer, String jwksUri) {
        authn = new JwtAuthenticator(List.of(new JwtRule(issuer, List.of(AUDIENCE), jwksUri, "")),
                () -> "cluster.local", clock, INTERVAL);
        return authn;
    }

    String identity(String token) throws AuthenticationException {
        return JwtAuthenticatorTest.authenticate(authn, "Bearer " + token).orElseThrow().identities().get(0);
    }

    String reason(String token) {
        return assertThrows(AuthenticationException.class,
                () -> JwtAuthenticatorTest.authenticate(authn, "Bearer " + token)).getMessage();
    }

    static String token(PublicJsonWebKey key) {
        return sign(key, RSA_USING_SHA256, claims());
    }

    int hits(String path) {
        return hits.getOrDefault(path, new AtomicInteger()).get();
    }

    @Test
    void fromAFileReloadedOnAnUnknownKidOncePerInterval(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, jwks(rsa1, ec1));
        authenticator(ISSUER, file.toUri().toString());
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep",
                identity(sign(ec1, ECDSA_USING_P256_CURVE_AND_SHA256, claims())));

        // The issuer rotates to rsa-2. Within the interval since the last load, no reload.
        Files.writeString(file, jwks(rsa2));
        assertEquals("unknown key id rsa-2", reason(token(rsa2)));
        clock.advance(INTERVAL.plusSeconds(1));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa2)));
        // rsa-1 is gone now; asking for it again cannot reload yet.
        assertEquals("unknown key id rsa-1", reason(token(rsa1)));
    }

    @Test
    void aMissingOrInvalidFileIsAnAuthenticationError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("absent.json");
        authenticator(ISSUER, file.toUri().toString());
        String reason = reason(token(rsa1));
        assertTrue(reason.startsWith("key set unavailable from " + file.toUri()), reason);

        Files.writeString(file, "{\"keys\": [");
        assertTrue(reason(token(rsa1)).startsWith("key set unavailable"), "still within the interval");
        clock.advance(INTERVAL.plusSeconds(1));
        reason = reason(token(rsa1));
        assertTrue(reason.startsWith("key set unavailable from " + file.toUri()), reason);

        Files.writeString(file, jwks(rsa1));
        clock.advance(INTERVAL.plusSeconds(1));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
    }

    @Test
    void overHttpCachedAndReloadedOnAnUnknownKid() throws Exception {
        served.put("/keys", Map.entry(200, jwks(rsa1)));
        authenticator(ISSUER, base + "/keys");
        assertEquals(0, hits("/keys"), "nothing is fetched before the first token");
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
        assertEquals(1, hits("/keys"), "cached");

        // Unknown kid: one reload, then none until the interval has passed.
        served.put("/keys", Map.entry(200, jwks(rsa1, rsa2)));
        clock.advance(INTERVAL.plusSeconds(1));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa2)));
        assertEquals(2, hits("/keys"));
        PublicJsonWebKey unknown = TestTokens.rsa("made-up");
        assertEquals("unknown key id made-up", reason(token(unknown)));
        assertEquals("unknown key id made-up", reason(token(unknown)));
        assertEquals(2, hits("/keys"), "rate limited: the last load was less than an interval ago");
        clock.advance(INTERVAL.plusSeconds(1));
        assertEquals("unknown key id made-up", reason(token(unknown)));
        assertEquals(3, hits("/keys"));
        // Known keys keep working without fetching.
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
        assertEquals(3, hits("/keys"));
    }

    @Test
    void httpFailuresAreAuthenticationErrorsAndRateLimited() throws Exception {
        served.put("/keys", Map.entry(500, "boom"));
        authenticator(ISSUER, base + "/keys");
        assertEquals("key set unavailable from " + base + "/keys: GET " + base + "/keys: HTTP 500", reason(token(rsa1)));
        assertTrue(reason(token(rsa1)).startsWith("key set unavailable"));
        assertEquals(1, hits("/keys"), "a failed load also waits out the interval");

        served.put("/keys", Map.entry(200, "x".repeat(DocumentFetcher.MAX_BYTES + 1)));
        clock.advance(INTERVAL.plusSeconds(1));
        String reason = reason(token(rsa1));
        assertTrue(reason.contains("is larger than " + DocumentFetcher.MAX_BYTES + " bytes"), reason);

        served.put("/keys", Map.entry(200, jwks(rsa1)));
        clock.advance(INTERVAL.plusSeconds(1));
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token(rsa1)));
    }

    @Test
    void anUnreachableServerIsAnAuthenticationError() {
        authenticator(ISSUER, base + "/keys");
        server.stop(0);
        String reason = reason(token(rsa1));
        assertTrue(reason.startsWith("key set unavailable from " + base + "/keys: "), reason);
    }

    @Test
    void oidcDiscoveryWhenTheRuleNamesNoKeys() throws Exception {
        served.put("/.well-known/openid-configuration",
                Map.entry(200, "{\"issuer\": \"" + base + "\", \"jwks_uri\": \"" + base + "/discovered-keys\"}"));
        served.put("/discovered-keys", Map.entry(200, jwks(rsa1)));
        List<JwtRule> rules = JwtRuleParser.parse("{\"issuer\": \"" + base + "\", \"audiences\": [\"" + AUDIENCE + "\"]}");
        authn = new JwtAuthenticator(rules, () -> "cluster.local", clock, INTERVAL);
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep",
                identity(sign(rsa1, RSA_USING_SHA256, claims(c -> c.setIssuer(base)))));
        assertEquals(1, hits("/discovered-keys"));
    }

    @Test
    void discoveryMustStateTheSameIssuer() {
        served.put("/.well-known/openid-configuration",
                Map.entry(200, "{\"issuer\": \"https://impostor.test\", \"jwks_uri\": \"" + base + "/keys\"}"));
        served.put("/keys", Map.entry(200, jwks(rsa1)));
        authn = new JwtAuthenticator(List.of(new JwtRule(base, List.of(AUDIENCE), "", "")),
                () -> "cluster.local", clock, INTERVAL);
        String reason = reason(sign(rsa1, RSA_USING_SHA256, claims(c -> c.setIssuer(base))));
        assertTrue(reason.startsWith("key set unavailable from OIDC discovery of " + base), reason);
        assertTrue(reason.contains("states issuer \"https://impostor.test\""), reason);
        assertEquals(0, hits("/keys"));
    }
}
