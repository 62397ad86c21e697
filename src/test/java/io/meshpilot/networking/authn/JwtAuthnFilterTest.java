package io.meshpilot.networking.authn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.security.v1beta1.ClaimToHeader;
import io.meshpilot.api.security.v1beta1.JWTHeader;
import io.meshpilot.api.security.v1beta1.JWTRule;
import io.meshpilot.model.JwksResolver;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The jwt_authn filter for each JWTRule field, compared as protobuf JSON with what istiod emits
 * for the same rules. The cases named "istiod: ..." are the inputs and expected outputs of
 * istiod's TestJwtFilter / TestConvertToEnvoyJwtConfig (pilot/pkg/security/authn
 * policy_applier_test.go), with the key set istiod's mock server returns for jwksUri standing
 * in as {@code FETCHED_KEYS} and {@code PublicOnlyJwks} for a key set that could not be fetched.
 */
class JwtAuthnFilterTest {
    static final String FOO = "https://secret.foo.com";
    static final String BAR = "https://secret.bar.com";
    static final String JWKS_URI = "http://127.0.0.1:9/oauth2/v3/certs";
    static final String FETCHED_KEYS = "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"fetched\",\"e\":\"AQAB\",\"n\":\"AQAB\"}]}";
    /** The key sets the push holds: the one jwksUri that answered; every other remote key set failed. */
    static final Function<JWTRule, String> PUSH_KEYS = r -> r.getJwksUri().equals(JWKS_URI) ? FETCHED_KEYS
            : JwksResolver.PUBLIC_ONLY_JWKS;

    /** What every provider istiod writes carries besides issuer and keys. */
    static String providerCommon(String issuer, String keys) {
        return "\"issuer\": " + q(issuer) + ", \"localJwks\": {\"inlineString\": " + q(keys) + "},"
                + " \"payloadInMetadata\": \"payload\","
                + " \"normalizePayloadInMetadata\": {\"spaceDelimitedClaims\": [\"permission\", \"scope\"]}";
    }

    static String oneProvider(String provider) {
        return """
                {"providers": {"origins-0": {%s}},
                 "rules": [{"match": {"prefix": "/"},
                            "requires": {"requiresAny": {"requirements": [{"providerName": "origins-0"}, {"allowMissing": {}}]}}}],
                 "bypassCorsPreflight": true}""".formatted(provider);
    }

    static JWTRule.Builder rule(String issuer) {
        return JWTRule.newBuilder().setIssuer(issuer);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("istiod: No rule", List.of(), false, null),
                Arguments.of("istiod: Single JWT rule", List.of(rule(FOO).setJwksUri(JWKS_URI).build()), false,
                        oneProvider(providerCommon(FOO, FETCHED_KEYS))),
                Arguments.of("istiod: Multi JWTs policy (sorted by issuer; any provider, or each provider or missing)",
                        List.of(rule(FOO).setJwksUri(JWKS_URI).build(), rule(BAR).setJwks("jwks-inline-data").build()),
                        false, """
                        {"providers": {"origins-0": {%s}, "origins-1": {%s}},
                         "rules": [{"match": {"prefix": "/"}, "requires": {"requiresAny": {"requirements": [
                           {"providerName": "origins-0"},
                           {"providerName": "origins-1"},
                           {"requiresAll": {"requirements": [
                             {"requiresAny": {"requirements": [{"providerName": "origins-0"}, {"allowMissing": {}}]}},
                             {"requiresAny": {"requirements": [{"providerName": "origins-1"}, {"allowMissing": {}}]}}]}}]}}}],
                         "bypassCorsPreflight": true}""".formatted(providerCommon(BAR, "jwks-inline-data"),
                                providerCommon(FOO, FETCHED_KEYS))),
                Arguments.of("istiod: JWT policy with inline Jwks", List.of(rule(FOO).setJwks("inline-jwks-data").build()),
                        false, oneProvider(providerCommon(FOO, "inline-jwks-data"))),
                Arguments.of("istiod: JWT policy with bad Jwks URI (fail closed)",
                        List.of(rule(FOO).setJwksUri("http://site.not.exist").build()), false,
                        oneProvider(providerCommon(FOO, JwksResolver.PUBLIC_ONLY_JWKS))),
                Arguments.of("istiod: Empty Jwks URI, OIDC discovery failed (fail closed)", List.of(rule(FOO).build()),
                        false, oneProvider(providerCommon(FOO, JwksResolver.PUBLIC_ONLY_JWKS))),
                Arguments.of("istiod: Forward original token",
                        List.of(rule(FOO).setJwksUri(JWKS_URI).setForwardOriginalToken(true).build()), false,
                        oneProvider(providerCommon(FOO, FETCHED_KEYS) + ", \"forward\": true")),
                Arguments.of("istiod: Output payload",
                        List.of(rule(FOO).setJwksUri(JWKS_URI).setForwardOriginalToken(true)
                                .setOutputPayloadToHeader("x-foo").build()), false,
                        oneProvider(providerCommon(FOO, FETCHED_KEYS)
                                + ", \"forward\": true, \"forwardPayloadHeader\": \"x-foo\"")),
                Arguments.of("istiod: Output claim to header",
                        List.of(rule(FOO).setJwksUri(JWKS_URI).setForwardOriginalToken(true)
                                .addOutputClaimToHeaders(ClaimToHeader.newBuilder().setHeader("x-jwt-key1").setClaim("value1"))
                                .addOutputClaimToHeaders(ClaimToHeader.newBuilder().setHeader("x-jwt-key2").setClaim("value2"))
                                .build()), false,
                        oneProvider(providerCommon(FOO, FETCHED_KEYS) + ", \"forward\": true, \"claimToHeaders\": ["
                                + "{\"headerName\": \"x-jwt-key1\", \"claimName\": \"value1\"},"
                                + "{\"headerName\": \"x-jwt-key2\", \"claimName\": \"value2\"}]")),
                Arguments.of("audiences, fromHeaders (name, prefix), fromParams, fromCookies",
                        List.of(rule(FOO).setJwks("k").addAudiences("a1").addAudiences("a2")
                                .addFromHeaders(JWTHeader.newBuilder().setName("x-jwt").setPrefix("Bearer "))
                                .addFromHeaders(JWTHeader.newBuilder().setName("x-other"))
                                .addFromParams("token").addFromCookies("session").build()), false,
                        oneProvider(providerCommon(FOO, "k") + ", \"audiences\": [\"a1\", \"a2\"],"
                                + " \"fromHeaders\": [{\"name\": \"x-jwt\", \"valuePrefix\": \"Bearer \"}, {\"name\": \"x-other\"}],"
                                + " \"fromParams\": [\"token\"], \"fromCookies\": [\"session\"]")),
                Arguments.of("istiod: Single JWT policy with custom space delimited claims (merged, sorted)",
                        List.of(rule(FOO).setJwksUri(JWKS_URI).addSpaceDelimitedClaims("custom_scope")
                                .addSpaceDelimitedClaims("roles").build()), false,
                        oneProvider(providerCommon(FOO, FETCHED_KEYS).replace(
                                "[\"permission\", \"scope\"]",
                                "[\"custom_scope\", \"permission\", \"roles\", \"scope\"]"))),
                Arguments.of("istiod: gateways clear the route cache (JwtFilter(proxy.Type != SidecarProxy))",
                        List.of(rule(FOO).setJwks("k").build()), true,
                        oneProvider(providerCommon(FOO, "k") + ", \"clearRouteCache\": true")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void generatedFilterIsIstiods(String name, List<JWTRule> rules, boolean clearRouteCache, String expectedJson)
            throws Exception {
        Optional<HttpFilter> filter = JwtAuthnFilter.build(rules, PUSH_KEYS, clearRouteCache);
        if (expectedJson == null) {
            assertTrue(filter.isEmpty(), "no rule, no filter");
            return;
        }
        assertEquals("envoy.filters.http.jwt_authn", filter.orElseThrow().getName());
        JwtAuthentication.Builder expected = JwtAuthentication.newBuilder();
        JsonFormat.parser().merge(expectedJson, expected);
        JwtAuthentication actual = filter.get().getTypedConfig().unpack(JwtAuthentication.class);
        assertEquals(json(expected.build()), json(actual));
    }

    static String json(JwtAuthentication a) throws Exception {
        return JsonFormat.printer().sortingMapKeys().print(a);
    }

    static String q(String s) {
        return new Gson().toJson(s);
    }

}
