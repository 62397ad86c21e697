package io.meshpilot.config.validation.policy;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.validation.Checks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The value syntaxes behind the policy validators, checked on their own. */
class PolicyValueSyntaxTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "response.code >= 400",
        "response.code >= 400 && request.url_path.startsWith('/api')",
        "request.headers['x-debug'] == 'true' || !(connection.mtls)",
        "a ? b : c ? d : e",
        "[1, 2, 3,].exists(x, x > 2)",
        "{'a': 1, 'b': 2.5e3}.size() == 2u",
        "google.protobuf.Duration{seconds: 5} < duration('10s')",
        "-1 < -(-2) && !!true",
        "r'raw \\d' + b\"bytes\" + '''multi\nline''' + \"\\u00e9\\x41\\101\"",
        ".top.level in ['x'] // trailing comment",
        "request.headers.map(k, k + '!').filter(s, s != '') == []",
        "0x1F + 9223372036854775807 + 18446744073709551615u",
        "has(request.headers.authorization)",
    })
    void validCel(String expression) {
        assertNull(CelSyntax.check(expression), expression);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", "   ", "response.code >=", "(a", "a)", "a b", "a = b", "a & b", "[1, 2", "{1: }",
        "'unterminated", "\"bad \\q escape\"", "b'\\u00e9'", "if", "while(x)", "x + var", "foo.(bar)", "1 +* 2",
        "has(a)", "has(a[0])", "x.all(1, true)", "18446744073709551616u", "9223372036854775809", "a ? b",
        "a.b{c: 1", "Msg{1: 2}", "`a`", "'line\nbreak'",
    })
    void invalidCel(String expression) {
        assertNotNull(CelSyntax.check(expression), expression);
    }

    @Test
    void celErrorNamesLineAndColumn() {
        String why = CelSyntax.check("response.code >= 400 &&\n  (request.url_path");
        assertNotNull(why);
        assertTrue(why.contains("missing ')'") && why.endsWith(" at 2:20"), why);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.0/8", "10.1.2.3/32", "0.0.0.0/0",
        "::", "::1", "1::", "2001:db8::/32", "2001:db8:0:0:0:0:0:1", "::ffff:192.0.2.1", "1:2:3:4:5:6:1.2.3.4",
        "fe80::1%eth0", "FE80::ABCD", "2001:db8::/128"})
    void validIp(String ip) {
        assertNull(Checks.ipOrCidrProblem(ip), ip);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4/33", "1.2.3.4/08", "1.2.3.4/",
        "1.2.3.4/-1", "a.b.c.d", "1.2.3.4%eth0", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1::2::3",
        "12345::1", "1:2:3:4:5:6:7:8::", "fe80::1%eth0/64", "010.0.0.0/8", "10.0.0.0/+8", "1.2.3.4/24/8", "fe80::1%", "2001:db8::/129", "1.2.3.4:80", "::1.2.3"})
    void invalidIp(String ip) {
        assertNotNull(Checks.ipOrCidrProblem(ip), ip);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/api/{*}/reviews", "/{**}", "/a/{*}/{*}/{**}", "/info*", "*", "/v1/items;id=3",
        "/foo/bar", "{*}"})
    void validPath(String path) {
        assertNull(AuthzValues.path(path), path);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/{**}/{*}", "/{**}/{**}", "/{bar}", "/{*}x", "/a/{}", "/{id=*}", "/{*}/a b", "/x{"})
    void invalidPath(String path) {
        assertNotNull(AuthzValues.path(path), path);
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://example.com/jwks.json", "http://keycloak:8080/certs", "https://[::1]:8443/keys",
        "HTTPS://Example.com/a%20b", "https://user:pw@example.com/x?y=1#frag"})
    void validJwksUrl(String url) throws UrlSyntax.Invalid {
        assertTrue(UrlSyntax.parse(url).scheme().matches("https?"), url);
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://exa mple.com/", "https://example.com:8o/", "https://[::1/", "https://a/%zz",
        "http://a\tb/", "https://[1.2.3.4]/", ":foo"})
    void invalidUrl(String url) {
        assertThrows(UrlSyntax.Invalid.class, () -> UrlSyntax.parse(url), url);
    }
}
