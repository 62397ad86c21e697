package io.meshpilot.config.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istiod's validation of the policy kinds (PeerAuthentication, RequestAuthentication,
 * AuthorizationPolicy, Telemetry, WasmPlugin), one YAML document per case through the config
 * parser. Invalid cases name the exact field path of the error and a word of the reason;
 * valid cases have no errors and no warnings unless they name the warning they expect.
 */
public class PolicyValidationTest {
    private static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    /** One document and what validating it must give. */
    public record Case(String name, String yaml, String errorPath, String warningPath, String word) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case ok(String name, String yaml) {
        return new Case(name, yaml, null, null, null);
    }

    static Case bad(String name, String yaml, String path, String word) {
        return new Case(name, yaml, path, null, word);
    }

    static Case warn(String name, String yaml, String path, String word) {
        return new Case(name, yaml, null, path, word);
    }

    private static String doc(String apiVersion, String kind, String annotations, String spec) {
        String indented = spec.strip().lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: test\n  namespace: foo\n"
                + (annotations == null ? "" : "  annotations:\n    istio.io/dry-run: \"" + annotations + "\"\n")
                + "spec:\n" + indented + "\n";
    }

    static String pa(String spec) {
        return doc("security.istio.io/v1", "PeerAuthentication", null, spec);
    }

    static String ra(String spec) {
        return doc("security.istio.io/v1", "RequestAuthentication", null, spec);
    }

    static String ap(String spec) {
        return doc("security.istio.io/v1", "AuthorizationPolicy", null, spec);
    }

    static String apDryRun(String value, String spec) {
        return doc("security.istio.io/v1beta1", "AuthorizationPolicy", value, spec);
    }

    static String tel(String spec) {
        return doc("telemetry.istio.io/v1", "Telemetry", null, spec);
    }

    static String wasm(String spec) {
        return doc("extensions.istio.io/v1alpha1", "WasmPlugin", null, spec);
    }

    static final String RSA_JWKS = "{\"keys\": [{\"kty\": \"RSA\", \"kid\": \"k1\", \"e\": \"AQAB\", "
            + "\"n\": \"xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ\"}]}";

    public static Stream<Case> cases() {
        return Stream.of(
                // ---- PeerAuthentication ----
                ok("pa: mesh-wide STRICT", pa("""
                        mtls:
                          mode: STRICT
                        """)),
                ok("pa: workload policy with a port-level exception", pa("""
                        selector:
                          matchLabels:
                            app: finance
                        mtls:
                          mode: STRICT
                        portLevelMtls:
                          8080:
                            mode: DISABLE
                        """)),
                bad("pa: port-level mTLS on a namespace-wide policy", pa("""
                        mtls:
                          mode: STRICT
                        portLevelMtls:
                          8080:
                            mode: DISABLE
                        """), "spec.portLevelMtls", "selector"),
                bad("pa: port-level mTLS with a selector without labels", pa("""
                        selector: {}
                        portLevelMtls:
                          8080:
                            mode: DISABLE
                        """), "spec.portLevelMtls", "selector"),
                bad("pa: port 0", pa("""
                        selector:
                          matchLabels:
                            app: finance
                        portLevelMtls:
                          0:
                            mode: STRICT
                        """), "spec.portLevelMtls[0]", "range"),
                bad("pa: port above 65535", pa("""
                        selector:
                          matchLabels:
                            app: finance
                        portLevelMtls:
                          "70000":
                            mode: STRICT
                        """), "spec.portLevelMtls[70000]", "range"),
                bad("pa: numeric mode the API does not define", pa("""
                        mtls:
                          mode: 7
                        """), "spec.mtls.mode", "unknown"),
                bad("pa: wildcard in a selector label value", pa("""
                        selector:
                          matchLabels:
                            app: "fin*"
                        mtls:
                          mode: STRICT
                        """), "spec.selector.matchLabels[app]", "wildcard"),
                warn("pa: selector without labels is only a warning", pa("""
                        selector: {}
                        mtls:
                          mode: PERMISSIVE
                        """), "spec.selector", "labels"),
                bad("pa: dry-run annotation is for AuthorizationPolicy only",
                        doc("security.istio.io/v1beta1", "PeerAuthentication", "true", "mtls: {mode: STRICT}"),
                        "metadata.annotations[istio.io/dry-run]", "AuthorizationPolicy"),

                // ---- RequestAuthentication ----
                ok("ra: JWT for httpbin (istio.io example)", ra("""
                        selector:
                          matchLabels:
                            app: httpbin
                        jwtRules:
                        - issuer: "issuer-foo"
                          jwksUri: https://example.com/.well-known/jwks.json
                        """)),
                ok("ra: every token location and output option", ra("""
                        selector:
                          matchLabels:
                            app: httpbin
                        jwtRules:
                        - issuer: testing@secure.istio.io
                          audiences: [app.example.com, api.example.com]
                          jwksUri: "https://raw.githubusercontent.com/istio/istio/release-1.24/security/tools/jwt/samples/jwks.json"
                          fromHeaders:
                          - name: x-jwt-assertion
                            prefix: "Bearer "
                          fromParams: [my_token]
                          fromCookies: [session]
                          outputPayloadToHeader: x-jwt-payload
                          outputClaimToHeaders:
                          - header: x-jwt-sub
                            claim: sub
                          forwardOriginalToken: true
                          timeout: 5s
                        """)),
                ok("ra: jwksUri without issuer is accepted", ra("""
                        jwtRules:
                        - jwksUri: http://keycloak.auth:8080/realms/mesh/protocol/openid-connect/certs
                        """)),
                ok("ra: inline RSA jwks", ra("jwtRules:\n- issuer: issuer-foo\n  jwks: '" + RSA_JWKS + "'\n")),
                ok("ra: two rules with the same issuer are accepted", ra("""
                        jwtRules:
                        - issuer: issuer-foo
                          jwksUri: https://example.com/jwks.json
                          fromHeaders: [{name: x-token-a}]
                        - issuer: issuer-foo
                          jwksUri: https://example.com/jwks.json
                          fromHeaders: [{name: x-token-b}]
                        """)),
                ok("ra: targetRefs to a Gateway", ra("""
                        targetRefs:
                        - kind: Gateway
                          group: gateway.networking.k8s.io
                          name: bookinfo-gateway
                        jwtRules:
                        - issuer: issuer-foo
                        """)),
                bad("ra: neither issuer nor jwksUri", ra("""
                        jwtRules:
                        - audiences: [bookinfo]
                        """), "spec.jwtRules[0].issuer", "issuer"),
                bad("ra: jwksUri with an ftp scheme", ra("""
                        jwtRules:
                        - issuer: issuer-foo
                          jwksUri: ftp://example.com/jwks.json
                        """), "spec.jwtRules[0].jwksUri", "scheme"),
                bad("ra: jwksUri without a scheme", ra("""
                        jwtRules:
                        - issuer: example
                          jwksUri: "hTPp\\\\blah"
                        """), "spec.jwtRules[0].jwksUri", "scheme"),
                bad("ra: jwksUri with a non-numeric port", ra("""
                        jwtRules:
                        - issuer: example
                          jwksUri: https://example.com:abc/jwks.json
                        """), "spec.jwtRules[0].jwksUri", "port"),
                bad("ra: empty audience", ra("""
                        jwtRules:
                        - issuer: example
                          audiences: [bookinfo, ""]
                        """), "spec.jwtRules[0].audiences[1]", "empty"),
                bad("ra: fromHeaders entry without a name", ra("""
                        jwtRules:
                        - issuer: example
                          fromHeaders:
                          - prefix: baz
                        """), "spec.jwtRules[0].fromHeaders[0].name", "required"),
                bad("ra: empty fromParams entry", ra("""
                        jwtRules:
                        - issuer: example
                          fromParams: [""]
                        """), "spec.jwtRules[0].fromParams[0]", "empty"),
                bad("ra: empty fromCookies entry", ra("""
                        jwtRules:
                        - issuer: example
                          fromCookies: [session, ""]
                        """), "spec.jwtRules[0].fromCookies[1]", "empty"),
                bad("ra: empty spaceDelimitedClaims entry", ra("""
                        jwtRules:
                        - issuer: example
                          spaceDelimitedClaims: [roles, ""]
                        """), "spec.jwtRules[0].spaceDelimitedClaims[1]", "empty"),
                bad("ra: claim-to-header output to a pseudo header", ra("""
                        jwtRules:
                        - issuer: example
                          outputClaimToHeaders:
                          - header: ":authority"
                            claim: sub
                        """), "spec.jwtRules[0].outputClaimToHeaders[0].header", "header name"),
                bad("ra: claim-to-header with an empty claim", ra("""
                        jwtRules:
                        - issuer: example
                          outputClaimToHeaders:
                          - header: x-sub
                            claim: ""
                        """), "spec.jwtRules[0].outputClaimToHeaders[0].claim", "required"),
                bad("ra: payload output header with a space", ra("""
                        jwtRules:
                        - issuer: example
                          outputPayloadToHeader: "x jwt payload"
                        """), "spec.jwtRules[0].outputPayloadToHeader", "header name"),
                bad("ra: jwks that is not JSON", ra("""
                        jwtRules:
                        - issuer: example
                          jwks: "not json"
                        """), "spec.jwtRules[0].jwks", "JSON"),
                bad("ra: jwks RSA key without a modulus", ra("""
                        jwtRules:
                        - issuer: example
                          jwks: '{"keys": [{"kty": "RSA", "e": "AQAB"}]}'
                        """), "spec.jwtRules[0].jwks", "missing"),
                warn("ra: jwks and jwksUri together", ra("jwtRules:\n- issuer: issuer-foo\n  jwks: '" + RSA_JWKS
                        + "'\n  jwksUri: https://example.com/jwks.json\n"), "spec.jwtRules[0].jwksUri", "ignored"),
                bad("ra: timeout of zero", ra("""
                        jwtRules:
                        - issuer: example
                          timeout: 0s
                        """), "spec.jwtRules[0].timeout", "1ms"),
                bad("ra: selector and targetRef together", ra("""
                        selector:
                          matchLabels:
                            app: httpbin
                        targetRef:
                          kind: Service
                          name: httpbin
                        """), "spec.targetRef", "only one"),
                bad("ra: targetRef to a Deployment", ra("""
                        targetRef:
                          group: apps
                          kind: Deployment
                          name: httpbin
                        """), "spec.targetRef.kind", "unsupported"),
                bad("ra: targetRef across namespaces", ra("""
                        targetRef:
                          kind: Service
                          name: httpbin
                          namespace: bar
                        """), "spec.targetRef.namespace", "cross-namespace"),
                bad("ra: targetRefs entry without a name", ra("""
                        targetRefs:
                        - kind: Service
                          name: httpbin
                        - kind: Service
                        """), "spec.targetRefs[1].name", "required"),

                // ---- AuthorizationPolicy ----
                ok("ap: httpbin ALLOW with from, to and when (istio.io example)", ap("""
                        selector:
                          matchLabels:
                            app: httpbin
                            version: v1
                        action: ALLOW
                        rules:
                        - from:
                          - source:
                              principals: ["cluster.local/ns/default/sa/curl"]
                          - source:
                              namespaces: ["dev"]
                          to:
                          - operation:
                              methods: ["GET"]
                              paths: ["/info*"]
                          when:
                          - key: request.auth.claims[iss]
                            values: ["https://accounts.google.com"]
                        """)),
                ok("ap: allow-nothing", ap("{}")),
                ok("ap: deny everything with an empty rule", ap("""
                        action: DENY
                        rules:
                        - {}
                        """)),
                ok("ap: AUDIT of GET /headers", ap("""
                        selector:
                          matchLabels:
                            app: httpbin
                        action: AUDIT
                        rules:
                        - to:
                          - operation:
                              methods: ["GET"]
                              paths: ["/headers"]
                        """)),
                ok("ap: CUSTOM ext-authz on /admin/ (istio.io example)", ap("""
                        selector:
                          matchLabels:
                            app: istio-ingressgateway
                        action: CUSTOM
                        provider:
                          name: "my-custom-authz"
                        rules:
                        - to:
                          - operation:
                              paths: ["/admin/*"]
                        """)),
                ok("ap: IPv4 and IPv6 addresses and blocks", ap("""
                        action: ALLOW
                        rules:
                        - from:
                          - source:
                              ipBlocks: ["203.0.113.4", "10.0.0.0/8", "2001:db8::/32", "::1", "::ffff:192.0.2.1"]
                              remoteIpBlocks: ["198.51.100.0/24", "fe80::1"]
                              notIpBlocks: ["0.0.0.0/0"]
                        """)),
                ok("ap: supported path templates and globs", ap("""
                        rules:
                        - to:
                          - operation:
                              paths: ["/api/{*}/reviews", "/static/{**}", "/info*", "*/admin", "/v1/{*}/{**}"]
                              notPaths: ["/healthz"]
                        """)),
                ok("ap: every supported condition key", ap("""
                        rules:
                        - when:
                          - key: request.headers[version]
                            values: ["v1", "v2"]
                          - key: source.namespace
                            notValues: ["untrusted"]
                          - key: source.principal
                            values: ["cluster.local/ns/default/sa/productpage"]
                          - key: source.ip
                            values: ["10.1.2.3", "10.2.0.0/16"]
                          - key: remote.ip
                            values: ["203.0.113.0/24"]
                          - key: request.auth.principal
                            values: ["issuer.example.com/subject"]
                          - key: request.auth.audiences
                            values: ["bookinfo"]
                          - key: request.auth.presenter
                            values: ["app123.example.com"]
                          - key: request.auth.claims[groups]
                            values: ["admins"]
                          - key: destination.ip
                            values: ["10.1.2.3"]
                          - key: destination.port
                            values: ["80", "443"]
                          - key: connection.sni
                            values: ["*.example.com"]
                          - key: experimental.envoy.filters.network.mysql_proxy[db.table]
                            values: ["[update]"]
                          - key: source.serviceAccount
                            values: ["default/productpage"]
                        """)),
                ok("ap: service accounts", ap("""
                        rules:
                        - from:
                          - source:
                              serviceAccounts: ["default/bookinfo-productpage", "curl"]
                        """)),
                ok("ap: trust domains, exact and with one wildcard at either end (istiod 1.31)", ap("""
                        rules:
                        - from:
                          - source:
                              trustDomains: ["cluster.local", "*.example.com", "partner-*", "*"]
                              notTrustDomains: ["legacy.local"]
                        - when:
                          - key: source.trustDomain
                            values: ["*.example.com"]
                        """)),
                bad("ap: trust domain with a path", ap("""
                        rules:
                        - from:
                          - source:
                              trustDomains: ["cluster.local/ns/default"]
                        """), "spec.rules[0].from[0].source.trustDomains[0]", "/"),
                bad("ap: trust domain with a wildcard inside", ap("""
                        rules:
                        - from:
                          - source:
                              notTrustDomains: ["a.*.example.com"]
                        """), "spec.rules[0].from[0].source.notTrustDomains[0]", "start or end"),
                bad("ap: trust domain with two wildcards", ap("""
                        rules:
                        - from:
                          - source:
                              trustDomains: ["*example*"]
                        """), "spec.rules[0].from[0].source.trustDomains[0]", "one wildcard"),
                bad("ap: empty trust domain", ap("""
                        rules:
                        - from:
                          - source:
                              trustDomains: [""]
                        """), "spec.rules[0].from[0].source.trustDomains[0]", "empty"),
                bad("ap: source.trustDomain condition with a wildcard inside", ap("""
                        rules:
                        - when:
                          - key: source.trustDomain
                            notValues: ["a*b"]
                        """), "spec.rules[0].when[0].notValues[0]", "start or end"),
                bad("ap: CUSTOM matching on trust domains", ap("""
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        rules:
                        - from:
                          - source:
                              trustDomains: ["cluster.local"]
                        """), "spec.rules[0].from[0].source.trustDomains", "CUSTOM"),
                bad("ap: CUSTOM matching on the source.trustDomain condition", ap("""
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        rules:
                        - when:
                          - key: source.trustDomain
                            values: ["cluster.local"]
                        """), "spec.rules[0].when[0].key", "CUSTOM"),
                ok("ap: dry-run DENY on TCP attributes", apDryRun("true", """
                        action: DENY
                        rules:
                        - from:
                          - source:
                              notNamespaces: ["foo"]
                        """)),
                warn("ap: DENY on HTTP attributes only warns about TCP ports", ap("""
                        selector:
                          matchLabels:
                            app: httpbin
                        action: DENY
                        rules:
                        - to:
                          - operation:
                              paths: ["/status/*"]
                        """), "spec.rules[0]", "TCP"),
                // istiod's validation counts no trust domain as a TCP rule (validation.go, tcpRulesInFrom)
                warn("ap: DENY on trustDomains only warns about TCP ports as istiod", ap("""
                        action: DENY
                        rules:
                        - from:
                          - source:
                              trustDomains: ["other.example"]
                        """), "spec.rules[0]", "TCP"),
                warn("ap: DENY on notTrustDomains only warns about TCP ports as istiod", ap("""
                        action: DENY
                        rules:
                        - from:
                          - source:
                              notTrustDomains: ["cluster.local"]
                        """), "spec.rules[0]", "TCP"),
                ok("ap: DENY on HTTP attributes with ports does not warn", ap("""
                        action: DENY
                        rules:
                        - to:
                          - operation:
                              paths: ["/admin"]
                              ports: ["8080"]
                        """)),
                bad("ap: DENY without rules", ap("""
                        action: DENY
                        """), "spec.rules", "DENY"),
                bad("ap: CUSTOM without a provider", ap("""
                        action: CUSTOM
                        rules:
                        - to:
                          - operation:
                              paths: ["/admin/*"]
                        """), "spec.provider", "provider"),
                bad("ap: CUSTOM with an empty provider name", ap("""
                        action: CUSTOM
                        provider:
                          name: ""
                        rules:
                        - {}
                        """), "spec.provider.name", "empty"),
                bad("ap: CUSTOM without rules", ap("""
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        """), "spec.rules", "CUSTOM"),
                bad("ap: provider on an ALLOW policy", ap("""
                        action: ALLOW
                        provider:
                          name: my-custom-authz
                        rules:
                        - {}
                        """), "spec.provider", "CUSTOM"),
                bad("ap: CUSTOM matching on principals", ap("""
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        rules:
                        - from:
                          - source:
                              principals: ["cluster.local/ns/default/sa/curl"]
                        """), "spec.rules[0].from[0].source.principals", "CUSTOM"),
                bad("ap: CUSTOM matching on a JWT claim", ap("""
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        rules:
                        - when:
                          - key: request.auth.claims[group]
                            values: ["admin"]
                        """), "spec.rules[0].when[0].key", "CUSTOM"),
                bad("ap: unknown numeric action", ap("""
                        action: 9
                        rules:
                        - {}
                        """), "spec.action", "unknown"),
                bad("ap: from entry without a source", ap("""
                        rules:
                        - from:
                          - {}
                        """), "spec.rules[0].from[0].source", "required"),
                bad("ap: empty source", ap("""
                        rules:
                        - from:
                          - source: {}
                        """), "spec.rules[0].from[0].source", "empty"),
                bad("ap: empty operation", ap("""
                        rules:
                        - to:
                          - operation: {}
                        """), "spec.rules[0].to[0].operation", "empty"),
                bad("ap: empty principal", ap("""
                        rules:
                        - from:
                          - source:
                              principals: ["cluster.local/ns/default/sa/curl", ""]
                        """), "spec.rules[0].from[0].source.principals[1]", "empty"),
                bad("ap: empty namespace in the second rule", ap("""
                        rules:
                        - from:
                          - source:
                              namespaces: ["dev"]
                        - from:
                          - source:
                              notNamespaces: [""]
                        """), "spec.rules[1].from[0].source.notNamespaces[0]", "empty"),
                bad("ap: CIDR with a signed length (Go's netip.ParsePrefix)", ap("""
                        rules:
                        - from:
                          - source:
                              ipBlocks: ["10.0.0.0/+8"]
                        """), "spec.rules[0].from[0].source.ipBlocks[0]", "bad bits"),
                bad("ap: CIDR prefix too long", ap("""
                        rules:
                        - from:
                          - source:
                              ipBlocks: ["10.0.0.0/33"]
                        """), "spec.rules[0].from[0].source.ipBlocks[0]", "CIDR"),
                bad("ap: remote IP octet out of range", ap("""
                        rules:
                        - from:
                          - source:
                              remoteIpBlocks: ["1.2.3.256"]
                        """), "spec.rules[0].from[0].source.remoteIpBlocks[0]", "IP address"),
                bad("ap: IPv4 with a leading zero", ap("""
                        rules:
                        - from:
                          - source:
                              notIpBlocks: ["10.0.0.1", "010.1.1.1"]
                        """), "spec.rules[0].from[0].source.notIpBlocks[1]", "IP address"),
                bad("ap: IPv6 with two ellipses", ap("""
                        rules:
                        - from:
                          - source:
                              ipBlocks: ["2001::db8::1"]
                        """), "spec.rules[0].from[0].source.ipBlocks[0]", "IP address"),
                bad("ap: port name instead of a number", ap("""
                        rules:
                        - to:
                          - operation:
                              ports: ["http"]
                        """), "spec.rules[0].to[0].operation.ports[0]", "port"),
                bad("ap: notPorts out of range", ap("""
                        rules:
                        - to:
                          - operation:
                              notPorts: ["8080", "70000"]
                        """), "spec.rules[0].to[0].operation.notPorts[1]", "port"),
                bad("ap: named variable in a path template", ap("""
                        rules:
                        - to:
                          - operation:
                              paths: ["/{*}/foo/{bar}"]
                        """), "spec.rules[0].to[0].operation.paths[0]", "braces"),
                bad("ap: {**} before another template", ap("""
                        rules:
                        - to:
                          - operation:
                              notPaths: ["/foo/{**}/bar/{*}"]
                        """), "spec.rules[0].to[0].operation.notPaths[0]", "last"),
                bad("ap: glob segment in a templated path", ap("""
                        rules:
                        - to:
                          - operation:
                              paths: ["/api/{*}/*.json"]
                        """), "spec.rules[0].to[0].operation.paths[0]", "literal"),
                bad("ap: empty method", ap("""
                        rules:
                        - to:
                          - operation:
                              methods: ["GET", ""]
                        """), "spec.rules[0].to[0].operation.methods[1]", "empty"),
                bad("ap: empty host", ap("""
                        rules:
                        - to:
                          - operation:
                              hosts: [""]
                        """), "spec.rules[0].to[0].operation.hosts[0]", "empty"),
                bad("ap: unknown condition key", ap("""
                        rules:
                        - when:
                          - key: request.header[foo]
                            values: ["bar"]
                        """), "spec.rules[0].when[0].key", "unknown"),
                bad("ap: header condition without a header name", ap("""
                        rules:
                        - when:
                          - key: request.headers[]
                            values: ["bar"]
                        """), "spec.rules[0].when[0].key", "entry"),
                bad("ap: condition without values", ap("""
                        rules:
                        - when:
                          - key: source.namespace
                        """), "spec.rules[0].when[0]", "values"),
                bad("ap: condition with an empty key", ap("""
                        rules:
                        - when:
                          - key: ""
                            values: ["x"]
                        """), "spec.rules[0].when[0].key", "required"),
                bad("ap: source.ip condition with a bad address", ap("""
                        rules:
                        - when:
                          - key: source.ip
                            values: ["10.0.0.300"]
                        """), "spec.rules[0].when[0].values[0]", "IP address"),
                bad("ap: destination.port condition with a bad notValue", ap("""
                        rules:
                        - when:
                          - key: destination.port
                            notValues: ["80", "abc"]
                        """), "spec.rules[0].when[0].notValues[1]", "port"),
                bad("ap: destination.labels is replaced by the selector", ap("""
                        rules:
                        - when:
                          - key: destination.labels[app]
                            values: ["productpage"]
                        """), "spec.rules[0].when[0].key", "selector"),
                bad("ap: empty condition value", ap("""
                        rules:
                        - when:
                          - key: request.auth.audiences
                            values: [""]
                        """), "spec.rules[0].when[0].values[0]", "empty"),
                bad("ap: wildcard service account in a condition", ap("""
                        rules:
                        - when:
                          - key: source.serviceAccount
                            values: ["default/*"]
                        """), "spec.rules[0].when[0].values[0]", "wildcard"),
                bad("ap: service accounts together with namespaces", ap("""
                        rules:
                        - from:
                          - source:
                              serviceAccounts: ["bar/sa"]
                              namespaces: ["bar"]
                        """), "spec.rules[0].from[0].source.serviceAccounts", "combined"),
                bad("ap: service account with two slashes", ap("""
                        rules:
                        - from:
                          - source:
                              notServiceAccounts: ["ns/sa/extra"]
                        """), "spec.rules[0].from[0].source.notServiceAccounts[0]", "namespace/serviceAccount"),
                bad("ap: dry-run with a non-boolean value", apDryRun("yes", """
                        action: ALLOW
                        rules:
                        - {}
                        """), "metadata.annotations[istio.io/dry-run]", "true or false"),
                bad("ap: dry-run on a CUSTOM policy", apDryRun("true", """
                        action: CUSTOM
                        provider:
                          name: my-custom-authz
                        rules:
                        - {}
                        """), "metadata.annotations[istio.io/dry-run]", "ALLOW and DENY"),
                bad("ap: selector and targetRefs together", ap("""
                        selector:
                          matchLabels:
                            app: httpbin
                        targetRefs:
                        - kind: Service
                          group: ""
                          name: httpbin
                        """), "spec.targetRefs", "only one"),
                bad("ap: targetRefs to an HTTPRoute", ap("""
                        targetRefs:
                        - kind: HTTPRoute
                          group: gateway.networking.k8s.io
                          name: reviews
                        """), "spec.targetRefs[0].kind", "unsupported"),
                ok("ap: targetRefs to a ServiceEntry and a GatewayClass", ap("""
                        targetRefs:
                        - kind: ServiceEntry
                          group: networking.istio.io
                          name: external-api
                        - kind: GatewayClass
                          group: gateway.networking.k8s.io
                          name: istio-waypoint
                        rules:
                        - from:
                          - source:
                              namespaces: ["bookinfo"]
                        """)),

                // ---- Telemetry ----
                ok("tel: tracing with every custom tag kind", tel("""
                        tracing:
                        - providers:
                          - name: zipkin
                          randomSamplingPercentage: 10.5
                          customTags:
                            my_tag_header:
                              header:
                                name: host
                            my_tag_env:
                              environment:
                                name: HOSTNAME
                                defaultValue: unknown
                            my_tag_literal:
                              literal:
                                value: foo
                        """)),
                ok("tel: metrics overrides (istio.io example)", tel("""
                        selector:
                          matchLabels:
                            app: reviews
                        metrics:
                        - providers:
                          - name: prometheus
                          reportingInterval: 15s
                          overrides:
                          - match:
                              metric: REQUEST_COUNT
                              mode: CLIENT
                            tagOverrides:
                              request_host:
                                value: "request.host"
                              response_flags:
                                operation: REMOVE
                          - match:
                              customMetric: my_custom_count
                            disabled: true
                        """)),
                ok("tel: access logging with a CEL filter", tel("""
                        accessLogging:
                        - providers:
                          - name: envoy
                          filter:
                            expression: response.code >= 400
                        """)),
                ok("tel: access log filter using functions, lists and macros", tel("""
                        accessLogging:
                        - filter:
                            expression: >-
                              response.code >= 500 && !(request.url_path in ['/healthz', "/ready"])
                              || connection.mtls == false && request.headers.exists(h, h.startsWith('x-'))
                              || has(request.headers.authorization) ? true : size(xds.cluster_name) > 0u
                        """)),
                bad("tel: sampling above 100", tel("""
                        tracing:
                        - randomSamplingPercentage: 101
                        """), "spec.tracing[0].randomSamplingPercentage", "range"),
                bad("tel: tracing provider without a name", tel("""
                        tracing:
                        - providers:
                          - name: ""
                        """), "spec.tracing[0].providers[0].name", "empty"),
                warn("tel: two tracing configurations", tel("""
                        tracing:
                        - randomSamplingPercentage: 10
                        - randomSamplingPercentage: 20
                        """), "spec.tracing", "only one"),
                warn("tel: two tracing providers", tel("""
                        tracing:
                        - providers:
                          - name: zipkin
                          - name: otel
                        """), "spec.tracing[0].providers", "only one"),
                bad("tel: literal tag without a value", tel("""
                        tracing:
                        - customTags:
                            team:
                              literal:
                                value: ""
                        """), "spec.tracing[0].customTags[team].literal.value", "empty"),
                bad("tel: custom tag of no kind", tel("""
                        tracing:
                        - customTags:
                            team: {}
                        """), "spec.tracing[0].customTags[team]", "one of"),
                bad("tel: header tag without a name", tel("""
                        tracing:
                        - customTags:
                            ua:
                              header:
                                defaultValue: none
                        """), "spec.tracing[0].customTags[ua].header.name", "empty"),
                bad("tel: UPSERT tag override without a value", tel("""
                        metrics:
                        - overrides:
                          - tagOverrides:
                              foo:
                                operation: UPSERT
                        """), "spec.metrics[0].overrides[0].tagOverrides[foo].value", "UPSERT"),
                bad("tel: REMOVE tag override with a value", tel("""
                        metrics:
                        - overrides:
                          - tagOverrides:
                              foo:
                                operation: REMOVE
                                value: oops
                        """), "spec.metrics[0].overrides[0].tagOverrides[foo].value", "REMOVE"),
                bad("tel: empty custom metric", tel("""
                        metrics:
                        - overrides:
                          - match:
                              customMetric: ""
                        """), "spec.metrics[0].overrides[0].match.customMetric", "empty"),
                bad("tel: metrics provider without a name", tel("""
                        metrics:
                        - providers:
                          - name: prometheus
                          - name: ""
                        """), "spec.metrics[0].providers[1].name", "empty"),
                bad("tel: reporting interval of zero", tel("""
                        metrics:
                        - reportingInterval: 0s
                        """), "spec.metrics[0].reportingInterval", "1ms"),
                bad("tel: access log filter that does not parse", tel("""
                        accessLogging:
                        - filter:
                            expression: "response.code >="
                        """), "spec.accessLogging[0].filter.expression", "CEL"),
                bad("tel: empty access log filter", tel("""
                        accessLogging:
                        - filter:
                            expression: ""
                        """), "spec.accessLogging[0].filter.expression", "empty"),
                bad("tel: has() on a plain identifier", tel("""
                        accessLogging:
                        - filter:
                            expression: "has(request)"
                        """), "spec.accessLogging[0].filter.expression", "has()"),
                bad("tel: unterminated string in a filter", tel("""
                        accessLogging:
                        - filter:
                            expression: "request.host == 'example.com"
                        """), "spec.accessLogging[0].filter.expression", "token recognition error"),
                bad("tel: access log provider without a name", tel("""
                        accessLogging:
                        - providers:
                          - name: ""
                        """), "spec.accessLogging[0].providers[0].name", "empty"),
                bad("tel: selector and targetRef together", tel("""
                        selector:
                          matchLabels:
                            app: reviews
                        targetRef:
                          kind: Gateway
                          group: gateway.networking.k8s.io
                          name: waypoint
                        """), "spec.targetRef", "only one"),

                // ---- WasmPlugin ----
                ok("wasm: openid-connect on the ingress gateway (istio.io example)", wasm("""
                        selector:
                          matchLabels:
                            istio: ingressgateway
                        url: oci://private-registry:5000/openid-connect/openid:latest
                        imagePullPolicy: IfNotPresent
                        imagePullSecret: private-registry-pull-secret
                        phase: AUTHN
                        pluginConfig:
                          openid_server: authn
                          openid_realm: ingress
                        """)),
                ok("wasm: bare image reference with a digest check", wasm("""
                        selector:
                          matchLabels:
                            app: productpage
                        url: ghcr.io/istio-ecosystem/wasm-extensions/basic_auth:1.12.0
                        sha256: 1a9bd25e1ac4fcbf8a3d0b0c8fd8b2a35e2f0a49e2e9e8b2c1b1a4f0d7b6c5e4
                        phase: AUTHZ
                        priority: 10
                        """)),
                ok("wasm: local file with env from host and inline", wasm("""
                        url: file:///opt/filters/my-plugin.wasm
                        failStrategy: FAIL_OPEN
                        type: HTTP
                        vmConfig:
                          env:
                          - name: POD_NAME
                            valueFrom: HOST
                          - name: TRUST_DOMAIN
                            value: cluster.local
                        match:
                        - mode: SERVER
                          ports:
                          - number: 9080
                        """)),
                ok("wasm: https url on a Gateway target", wasm("""
                        targetRefs:
                        - kind: Gateway
                          group: gateway.networking.k8s.io
                          name: bookinfo-gateway
                        url: https://storage.example.com/plugins/auth.wasm
                        """)),
                bad("wasm: url missing", wasm("""
                        pluginName: basic_auth
                        """), "spec.url", "required"),
                bad("wasm: url with an unsupported scheme", wasm("""
                        url: fake://example.com/plugin.wasm
                        """), "spec.url", "scheme"),
                bad("wasm: url that does not parse", wasm("""
                        url: "#%blah$#@"
                        """), "spec.url", "valid URL"),
                bad("wasm: sha256 in upper case", wasm("""
                        url: oci://ghcr.io/example/plugin:1.0
                        sha256: 1A9BD25E1AC4FCBF8A3D0B0C8FD8B2A35E2F0A49E2E9E8B2C1B1A4F0D7B6C5E4
                        """), "spec.sha256", "64"),
                bad("wasm: sha256 too short", wasm("""
                        url: oci://ghcr.io/example/plugin:1.0
                        sha256: deadbeef
                        """), "spec.sha256", "64"),
                bad("wasm: duplicate env names", wasm("""
                        url: http://test
                        vmConfig:
                          env:
                          - name: a
                          - name: a
                        """), "spec.vmConfig.env[1].name", "duplicate"),
                bad("wasm: env without a name", wasm("""
                        url: http://test
                        vmConfig:
                          env:
                          - value: x
                        """), "spec.vmConfig.env[0].name", "required"),
                bad("wasm: value with valueFrom HOST", wasm("""
                        url: http://test
                        vmConfig:
                          env:
                          - name: test
                            valueFrom: HOST
                            value: value
                        """), "spec.vmConfig.env[0].value", "INLINE"),
                bad("wasm: match port 0", wasm("""
                        url: http://test
                        match:
                        - ports:
                          - number: 8080
                          - {}
                        """), "spec.match[0].ports[1].number", "range"),
                bad("wasm: unknown numeric fail strategy", wasm("""
                        url: http://test
                        failStrategy: 5
                        """), "spec.failStrategy", "unknown"),
                bad("wasm: unknown numeric phase", wasm("""
                        url: http://test
                        phase: 9
                        """), "spec.phase", "unknown"),
                bad("wasm: targetRef to a GRPCRoute", wasm("""
                        url: http://test
                        targetRef:
                          kind: GRPCRoute
                          group: gateway.networking.k8s.io
                          name: reviews
                        """), "spec.targetRef.kind", "unsupported"),
                bad("wasm: wildcard in a selector label key", wasm("""
                        url: http://test
                        selector:
                          matchLabels:
                            "istio*": bar
                        """), "spec.selector.matchLabels[istio*]", "wildcard"),
                bad("wasm: image pull secret name too long", wasm("url: http://test\nimagePullSecret: "
                        + "s".repeat(254) + "\n"), "spec.imagePullSecret", "253"),
                bad("wasm: dry-run annotation",
                        doc("extensions.istio.io/v1alpha1", "WasmPlugin", "false", "url: http://test"),
                        "metadata.annotations[istio.io/dry-run]", "AuthorizationPolicy"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void validates(Case c) {
        ConfigParser.Result r = PARSER.parse("test.yaml", c.yaml());
        assertFalse(r.unreadable(), "unreadable YAML");
        if (c.errorPath() != null) {
            assertTrue(r.configs().isEmpty(), "expected a rejection, got " + r.configs());
            assertFalse(r.errors().isEmpty(), "no errors reported");
            for (DocumentError e : r.errors()) {
                assertEquals(c.errorPath(), e.path(), "unexpected error " + e);
            }
            assertTrue(r.errors().stream().anyMatch(e -> contains(e.reason(), c.word())),
                    "no error mentions \"" + c.word() + "\": " + r.errors());
            return;
        }
        assertEquals(List.of(), r.errors(), "expected no errors");
        assertEquals(1, r.configs().size());
        Config config = r.configs().get(0);
        Validation v = new Validation();
        Schemas.PILOT.forKind(config.gvk().kind()).orElseThrow().validator().validate(config, v);
        List<ValidationResult.Issue> warnings = v.result().warnings();
        if (c.warningPath() == null) {
            assertEquals(List.of(), warnings, "expected no warnings");
        } else {
            assertFalse(warnings.isEmpty(), "expected a warning at " + c.warningPath());
            for (ValidationResult.Issue w : warnings) {
                assertEquals(c.warningPath(), w.path(), "unexpected warning " + w);
            }
            assertTrue(warnings.stream().anyMatch(w -> contains(w.message(), c.word())),
                    "no warning mentions \"" + c.word() + "\": " + warnings);
        }
    }

    private static boolean contains(String text, String word) {
        return text.toLowerCase(Locale.ROOT).contains(word.toLowerCase(Locale.ROOT));
    }
}
