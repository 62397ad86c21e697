package io.meshpilot.security.jwt;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import java.util.List;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JwtRuleParserTest {

    @Test
    void istiodsSingleObjectWithSnakeCaseJwksUri() {
        List<JwtRule> rules = JwtRuleParser.parse(
                "{\"issuer\": \"https://issuer.test\", \"jwks_uri\": \"https://issuer.test/keys\","
                        + " \"audiences\": [\"aud1\", \"aud2\"]}");
        assertEquals(List.of(new JwtRule("https://issuer.test", List.of("aud1", "aud2"), "https://issuer.test/keys", "")),
                rules);
    }

    @Test
    void arrayOfRulesWithCamelCaseNames() {
        List<JwtRule> rules = JwtRuleParser.parse("""
                [{"issuer": "a", "jwksUri": "file:/etc/jwks/a.json", "audiences": ["istio-ca"]},
                 {"issuer": "https://b.test", "audiences": null, "jwks": null}]""");
        assertEquals(2, rules.size());
        assertEquals(new JwtRule("a", List.of("istio-ca"), "file:/etc/jwks/a.json", ""), rules.get(0));
        // No key source: the keys come from OIDC discovery of the https issuer.
        assertEquals(new JwtRule("https://b.test", List.of(), "", ""), rules.get(1));
    }

    @Test
    void inlineJwksAndEnvoyOnlyFieldsAreAccepted() throws Exception {
        JsonWebKey key = RsaJwkGenerator.generateJwk(2048);
        key.setKeyId("k1");
        String jwks = new JsonWebKeySet(key).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
        String json = "{\"issuer\": \"x\", \"jwks\": " + new Gson().toJson(jwks)
                + ", \"fromHeaders\": [{\"name\": \"x-jwt\"}], \"forward_original_token\": true, \"timeout\": \"5s\"}";
        JwtRule rule = JwtRuleParser.parse(json).get(0);
        assertEquals(jwks, rule.jwks());
        assertEquals("", rule.jwksUri());
    }

    @Test
    void blankMeansNoRules() {
        assertEquals(List.of(), JwtRuleParser.parse(""));
        assertEquals(List.of(), JwtRuleParser.parse("  "));
        assertEquals(List.of(), JwtRuleParser.parse(null));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            {"issuer": "a", jwks_uri: "file:/x"}                        | JWT_RULE: not valid JSON
            {"issuer": "a", "jwks_uri": "file:/x"} x                    | JWT_RULE: not valid JSON
            {"issuer": "a", "jwks_uri": "file:/x"                       | JWT_RULE: not valid JSON
            "just a string"                                              | JWT_RULE: must be a JSON object (one JWTRule) or an array of them
            []                                                           | JWT_RULE: the array holds no rule
            [{"issuer": "a", "jwksUri": "file:/x"}, 7]                   | JWT_RULE: rule 1: must be a JSON object
            {"jwks_uri": "file:/x", "audiences": ["a"]}                  | JWT_RULE: rule 0: issuer: required
            {"issuer": "", "jwks_uri": "file:/x"}                        | JWT_RULE: rule 0: issuer: required
            {"issuer": 5, "jwks_uri": "file:/x"}                         | JWT_RULE: rule 0: issuer: must be a string
            {"issuer": "a", "jwks_uri": "file:/x", "audiences": "aud"}   | JWT_RULE: rule 0: audiences: must be an array of strings
            {"issuer": "a", "jwks_uri": "file:/x", "audiences": ["x", 1]} | JWT_RULE: rule 0: audiences[1]: must be a string
            {"issuer": "a", "jwks_uri": "file:/x", "audiences": [""]}    | JWT_RULE: rule 0: audiences[0]: must not be empty
            {"issuer": "a", "jwksuri": "file:/x"}                        | JWT_RULE: rule 0: jwksuri: unknown field
            {"issuer": "a", "jwksUri": "file:/x", "jwks_uri": "file:/y"} | JWT_RULE: rule 0: jwks_uri: set twice
            {"issuer": "a", "jwks_uri": "ftp://h/keys"}                  | JWT_RULE: rule 0: jwksUri: "ftp://h/keys" must be an https:, http: or file: URI
            {"issuer": "a", "jwks_uri": "file:keys.json"}                | JWT_RULE: rule 0: jwksUri: "file:keys.json" must name an absolute path
            {"issuer": "a", "jwks_uri": "https:///keys"}                 | JWT_RULE: rule 0: jwksUri: "https:///keys" has no host
            {"issuer": "a", "jwks_uri": "http://h/a b"}                  | JWT_RULE: rule 0: jwksUri: not a valid URI
            {"issuer": "a", "jwks": "{not json"}                         | JWT_RULE: rule 0: jwks: not a valid JWKS document
            {"issuer": "a"}                                              | JWT_RULE: rule 0: jwksUri: required when jwks is not set
            [{"issuer": "a", "jwksUri": "file:/x"}, {"issuer": "a", "jwksUri": "file:/y"}] | JWT_RULE: rule 1: issuer: "a" is already the issuer of rule 0
            """)
    void invalidRulesNameTheRuleAndField(String json, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JwtRuleParser.parse(json));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
