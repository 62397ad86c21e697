package io.meshpilot.security.jwt;

import static io.meshpilot.security.jwt.TestTokens.AUDIENCE;
import static io.meshpilot.security.jwt.TestTokens.ISSUER;
import static io.meshpilot.security.jwt.TestTokens.NOW;
import static io.meshpilot.security.jwt.TestTokens.at;
import static io.meshpilot.security.jwt.TestTokens.b64;
import static io.meshpilot.security.jwt.TestTokens.claims;
import static io.meshpilot.security.jwt.TestTokens.jwks;
import static io.meshpilot.security.jwt.TestTokens.kubernetesClaim;
import static io.meshpilot.security.jwt.TestTokens.raw;
import static io.meshpilot.security.jwt.TestTokens.sign;
import static org.jose4j.jws.AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256;
import static org.jose4j.jws.AlgorithmIdentifiers.HMAC_SHA256;
import static org.jose4j.jws.AlgorithmIdentifiers.RSA_USING_SHA256;
import static org.jose4j.jws.AlgorithmIdentifiers.RSA_USING_SHA512;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.security.Authenticator.AuthenticationException;
import io.meshpilot.security.Authenticator.Caller;
import io.meshpilot.security.BearerToken;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jose4j.jwk.PublicJsonWebKey;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.keys.HmacKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Token verification against an inline key set with a fixed clock. */
class JwtAuthenticatorTest {
    static final CallPeer PEER = new CallPeer("grpc-secure", new InetSocketAddress("127.0.0.1", 40000), List.of(), true);

    static PublicJsonWebKey rsa;
    static PublicJsonWebKey ec;
    /** A different RSA key published under nobody's name but claiming rsa's kid. */
    static PublicJsonWebKey impostor;

    final AtomicReference<String> trustDomain = new AtomicReference<>("cluster.local");
    JwtAuthenticator authn;

    @BeforeAll
    static void keys() {
        rsa = TestTokens.rsa("rsa-1");
        ec = TestTokens.ec("ec-1");
        impostor = TestTokens.rsa("rsa-1");
    }

    @BeforeEach
    void setUp() {
        JwtRule rule = new JwtRule(ISSUER, List.of("other-audience", AUDIENCE), "", jwks(rsa, ec));
        authn = new JwtAuthenticator(List.of(rule), trustDomain::get, Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @AfterEach
    void tearDown() {
        authn.close();
    }

    static Optional<Caller> authenticate(JwtAuthenticator a, String authorization) throws AuthenticationException {
        return a.authenticate(PEER, name -> "authorization".equals(name) ? List.of(authorization) : List.of());
    }

    String identity(String token) throws AuthenticationException {
        Caller caller = authenticate(authn, "Bearer " + token).orElseThrow();
        assertEquals(JwtAuthenticator.TYPE, caller.authenticator());
        assertEquals(1, caller.identities().size());
        return caller.identities().get(0);
    }

    static String rs256(Consumer<JwtClaims> change) {
        return sign(rsa, RSA_USING_SHA256, claims(change));
    }

    @Test
    void typeIsIstiodsName() {
        assertEquals("IDTokenAuthenticator", authn.type());
    }

    @Test
    void rs256TokenWithTheSubjectForm() throws Exception {
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(rs256(c -> { })));
    }

    @Test
    void es256TokenWithTheKubernetesClaimForm() throws Exception {
        JwtClaims c = claims(x -> {
            x.unsetClaim("sub");
            x.setClaim("kubernetes.io", kubernetesClaim("prod", "api"));
        });
        assertEquals("spiffe://cluster.local/ns/prod/sa/api", identity(sign(ec, ECDSA_USING_P256_CURVE_AND_SHA256, c)));
    }

    @Test
    void bothFormsAgreeing() throws Exception {
        String token = rs256(c -> {
            c.setSubject("system:serviceaccount:prod:api");
            c.setClaim("kubernetes.io", kubernetesClaim("prod", "api"));
        });
        assertEquals("spiffe://cluster.local/ns/prod/sa/api", identity(token));
    }

    @Test
    void trustDomainIsReadPerCall() throws Exception {
        String token = rs256(c -> { });
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(token));
        trustDomain.set("mesh.test");
        assertEquals("spiffe://mesh.test/ns/default/sa/sleep", identity(token));
    }

    @Test
    void acceptedEdges() throws Exception {
        // One of several audiences; exp exactly now; nbf and iat within the 5 minute skew.
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep", identity(rs256(c -> {
            c.setAudience("someone-else", AUDIENCE);
            c.setExpirationTime(at(NOW));
            c.setNotBefore(at(NOW.plus(Duration.ofMinutes(4))));
            c.setIssuedAt(at(NOW.plus(Duration.ofMinutes(4))));
        })));
        // No kid: every key of the issuer is tried, as go-oidc does.
        assertEquals("spiffe://cluster.local/ns/default/sa/sleep",
                identity(sign(rsa.getPrivateKey(), RSA_USING_SHA256, null, claims().toJson())));
    }

    @Test
    void withoutABearerTokenTheCallerIsNotRecognized() throws Exception {
        assertEquals(Optional.empty(), authn.authenticate(PEER, CallHeaders.NONE));
        assertEquals(Optional.empty(), authenticate(authn, "Basic dXNlcjpwYXNz"));
        assertEquals(Optional.empty(), authenticate(authn, "Bearerxyz"));
    }

    @Test
    void emptyBearerTokenIsRejected() {
        var e = assertThrows(AuthenticationException.class, () -> authenticate(authn, "Bearer "));
        assertEquals("empty bearer token", e.getMessage());
        // the spaces are the token, as istiod cuts only the prefix: no JWT
        e = assertThrows(AuthenticationException.class, () -> authenticate(authn, "Bearer    "));
        assertEquals("malformed token: not base64url", e.getMessage());
    }

    static Stream<Arguments> rejections() {
        return Stream.of(
                rejects("expired", () -> rs256(c -> c.setExpirationTime(at(NOW.minusSeconds(1)))),
                        "token expired"),
                rejects("not yet valid (nbf past the skew)",
                        () -> rs256(c -> c.setNotBefore(at(NOW.plus(Duration.ofMinutes(6))))), "token not yet valid"),
                rejects("issued in the future (iat past the skew)",
                        () -> rs256(c -> c.setIssuedAt(at(NOW.plus(Duration.ofMinutes(6))))), "token issued in the future"),
                rejects("missing exp", () -> rs256(c -> c.unsetClaim("exp")), "token has no expiry (exp)"),
                rejects("exp not a number", () -> rs256(c -> c.setClaim("exp", "tomorrow")),
                        "malformed token: exp is not a number"),
                rejects("wrong issuer", () -> rs256(c -> c.setIssuer("https://elsewhere.test")),
                        "issuer not trusted: https://elsewhere.test"),
                rejects("no issuer", () -> rs256(c -> c.unsetClaim("iss")), "issuer not trusted: (none)"),
                rejects("wrong audience", () -> rs256(c -> c.setAudience("someone-else")), "audience not allowed"),
                rejects("no audience", () -> rs256(c -> c.unsetClaim("aud")), "audience missing"),
                rejects("aud not strings", () -> rs256(c -> c.setClaim("aud", 7)),
                        "malformed token: aud is not a string or an array of strings"),
                rejects("signed by another key under the same kid",
                        () -> sign(impostor, RSA_USING_SHA256, claims()), "signature invalid"),
                rejects("payload swapped after signing", () -> {
                    String[] good = rs256(c -> { }).split("\\.");
                    String other = b64(claims(c -> c.setSubject("system:serviceaccount:kube-system:admin")).toJson());
                    return good[0] + "." + other + "." + good[2];
                }, "signature invalid"),
                rejects("no kid, signed by an unknown key",
                        () -> sign(impostor.getPrivateKey(), RSA_USING_SHA256, null, claims().toJson()), "signature invalid"),
                rejects("alg none", () -> raw("{\"alg\":\"none\"}", claims().toJson(), ""), "algorithm none not allowed"),
                rejects("alg none with a kid and a signature",
                        () -> raw("{\"alg\":\"none\",\"kid\":\"rsa-1\"}", claims().toJson(), "c2ln"),
                        "algorithm none not allowed"),
                rejects("HS256 with the RSA public key as the secret",
                        () -> sign(new HmacKey(rsa.getPublicKey().getEncoded()), HMAC_SHA256, "rsa-1", claims().toJson()),
                        "algorithm HS256 not allowed"),
                rejects("RS512 (not allowed)", () -> sign(rsa, RSA_USING_SHA512, claims()), "algorithm RS512 not allowed"),
                rejects("no alg", () -> raw("{\"kid\":\"rsa-1\"}", claims().toJson(), "c2ln"),
                        "malformed token: no alg header"),
                rejects("ES256 under the RSA key's id", () -> sign(ec.getPrivateKey(), ECDSA_USING_P256_CURVE_AND_SHA256,
                        "rsa-1", claims().toJson()), "signature invalid: no ES256 key with id rsa-1"),
                rejects("unknown kid", () -> sign(TestTokens.rsa("rsa-9"), RSA_USING_SHA256, claims()),
                        "unknown key id rsa-9"),
                rejects("garbage", () -> "garbage", "malformed token: 1 segment,"),
                rejects("two segments", () -> "eyJhbGciOiJSUzI1NiJ9.e30", "malformed token: 2 segments"),
                rejects("three dots", () -> "...", "malformed token: 4 segments"),
                rejects("empty segments", () -> "..", "malformed token: header is not a JSON object"),
                rejects("five segments (JWE)", () -> "a.b.c.d.e", "malformed token: 5 segments"),
                rejects("bad base64", () -> "eyJhbGciOiJSUzI1NiJ9.e30=.c2ln", "malformed token: not base64url"),
                rejects("non-ASCII", () -> "eyJhbGciOiJSUzI1NiJ9.é.c2ln", "malformed token: not base64url"),
                rejects("header not JSON", () -> b64("hello") + ".e30.c2ln", "malformed token: header is not a JSON object"),
                rejects("header a JSON array", () -> b64("[1]") + ".e30.c2ln", "malformed token: header is not a JSON object"),
                rejects("claims not a JSON object", () -> raw("{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "[1,2]", "c2ln"),
                        "malformed token: claims are not a JSON object"),
                rejects("deeply nested header", () -> b64("[".repeat(30_000)) + ".e30.c2ln",
                        "malformed token: header is not a JSON object"),
                rejects("deeply nested claims", () -> raw("{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "{\"a\":" + "[".repeat(30_000), "c2ln"),
                        "malformed token: claims are not a JSON object"),
                rejects("oversized", () -> "a".repeat(BearerToken.MAX_CHARS + 1), "token too large"),
                rejects("oversized, valid shape", () -> rs256(c -> c.setClaim("pad", "x".repeat(70_000))), "token too large"),
                rejects("no identity claims", () -> rs256(c -> c.setSubject("alice")), "no service account identity in token"),
                rejects("subject with an extra part", () -> rs256(c -> c.setSubject("system:serviceaccount:a:b:c")),
                        "invalid service account identity"),
                rejects("subject with an empty name", () -> rs256(c -> c.setSubject("system:serviceaccount:a:")),
                        "invalid service account identity"),
                rejects("namespace with a slash", () -> rs256(c -> {
                    c.unsetClaim("sub");
                    c.setClaim("kubernetes.io", kubernetesClaim("a/b", "api"));
                }), "invalid service account identity"),
                rejects("the two identity forms disagree",
                        () -> rs256(c -> c.setClaim("kubernetes.io", kubernetesClaim("kube-system", "admin"))),
                        "identity claims disagree"));
    }

    static Arguments rejects(String name, Supplier<String> token, String reason) {
        return Arguments.of(name, token, reason);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rejections")
    void rejected(String name, Supplier<String> token, String reason) {
        var e = assertThrows(AuthenticationException.class, () -> authenticate(authn, "Bearer " + token.get()));
        assertTrue(e.getMessage().startsWith(reason), () -> name + ": " + e.getMessage());
    }

    @Test
    void aRuleWithoutAudiencesAcceptsNoToken() {
        // istiod's checkAudience finds nothing in an empty list.
        var a = new JwtAuthenticator(List.of(new JwtRule(ISSUER, List.of(), "", jwks(rsa))), () -> "cluster.local",
                Clock.fixed(NOW, ZoneOffset.UTC));
        var e = assertThrows(AuthenticationException.class, () -> authenticate(a, "Bearer " + rs256(c -> { })));
        assertEquals("audience not allowed: the rule for this issuer lists no audiences", e.getMessage());
    }

    @Test
    void theRuleIsPickedByIssuer() throws Exception {
        PublicJsonWebKey other = TestTokens.rsa("other-1");
        var a = new JwtAuthenticator(List.of(
                new JwtRule(ISSUER, List.of(AUDIENCE), "", jwks(rsa)),
                new JwtRule("https://other.test", List.of("other-aud"), "", jwks(other))),
                () -> "cluster.local", Clock.fixed(NOW, ZoneOffset.UTC));
        String fromOther = sign(other, RSA_USING_SHA256, claims(c -> {
            c.setIssuer("https://other.test");
            c.setAudience("other-aud");
        }));
        assertEquals(List.of("spiffe://cluster.local/ns/default/sa/sleep"),
                authenticate(a, "Bearer " + fromOther).orElseThrow().identities());
        // The first issuer's key does not count for the second issuer, nor its audience.
        var e = assertThrows(AuthenticationException.class, () -> authenticate(a, "Bearer "
                + sign(rsa, RSA_USING_SHA256, claims(c -> c.setIssuer("https://other.test")))));
        assertEquals("unknown key id rsa-1", e.getMessage());
        e = assertThrows(AuthenticationException.class, () -> authenticate(a, "Bearer "
                + sign(other, RSA_USING_SHA256, claims(c -> c.setIssuer("https://other.test")))));
        assertEquals("audience not allowed", e.getMessage());
    }

    @Test
    void constructionRejectsBadRules() {
        Supplier<String> td = () -> "cluster.local";
        Clock clock = Clock.systemUTC();
        var e = assertThrows(IllegalArgumentException.class, () -> new JwtAuthenticator(List.of(), td, clock));
        assertEquals("JWT authenticator: no rules", e.getMessage());
        JwtRule rule = new JwtRule(ISSUER, List.of(AUDIENCE), "", jwks(rsa));
        e = assertThrows(IllegalArgumentException.class, () -> new JwtAuthenticator(List.of(rule, rule), td, clock));
        assertTrue(e.getMessage().startsWith("JWT_RULE: rule 1: issuer:"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new JwtAuthenticator(
                List.of(new JwtRule(ISSUER, List.of(AUDIENCE), "", "{\"keys\": 5}")), td, clock));
        assertTrue(e.getMessage().startsWith("JWT_RULE: rule 0: jwks: not a valid JWKS document"), e.getMessage());
    }

    @Test
    void fromJwtRuleEnvironmentValue() throws Exception {
        assertEquals(Optional.empty(), JwtAuthenticator.fromJwtRule("", () -> "cluster.local"));
        var e = assertThrows(IllegalArgumentException.class, () -> JwtAuthenticator.fromJwtRule("{", () -> "x"));
        assertTrue(e.getMessage().startsWith("JWT_RULE: not valid JSON"), e.getMessage());
        String env = "{\"issuer\": \"" + ISSUER + "\", \"audiences\": [\"" + AUDIENCE + "\"], \"jwks\": "
                + new Gson().toJson(jwks(rsa)) + "}";
        try (JwtAuthenticator a = JwtAuthenticator.fromJwtRule(env, () -> "cluster.local").orElseThrow()) {
            assertEquals(JwtAuthenticator.TYPE, a.type());
        }
    }
}
