package io.meshpilot.config.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istiod's validation of the networking kinds, table driven: each case is one YAML document
 * parsed as a config file would be. A valid case loads with no errors; an invalid one is
 * rejected with exactly the expected field path, and a word of the reason.
 */
public class NetworkingValidationTest {
    private static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    // ---- helpers ------------------------------------------------------------------------------

    static String doc(String kind, String spec) {
        return doc(kind, "test", spec);
    }

    static String doc(String kind, String name, String spec) {
        String api = switch (kind) {
            case "EnvoyFilter" -> "networking.istio.io/v1alpha3";
            case "ProxyConfig" -> "networking.istio.io/v1beta1";
            default -> "networking.istio.io/v1";
        };
        String body = spec.lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        return "apiVersion: " + api + "\nkind: " + kind + "\nmetadata:\n  name: " + name
                + "\n  namespace: default\nspec:\n" + body + "\n";
    }

    static Arguments ok(String name, String yaml) {
        return Arguments.of(name, yaml, null, null);
    }

    static Arguments bad(String name, String yaml, String path, String word) {
        return Arguments.of(name, yaml, path, word);
    }

    static String vs(String spec) {
        return doc("VirtualService", spec);
    }

    static String dr(String spec) {
        return doc("DestinationRule", spec);
    }

    static String gw(String spec) {
        return doc("Gateway", spec);
    }

    static String se(String spec) {
        return doc("ServiceEntry", spec);
    }

    static String sc(String spec) {
        return doc("Sidecar", spec);
    }

    static String we(String spec) {
        return doc("WorkloadEntry", spec);
    }

    static String wg(String spec) {
        return doc("WorkloadGroup", spec);
    }

    static String ef(String spec) {
        return doc("EnvoyFilter", spec);
    }

    static String pc(String spec) {
        return doc("ProxyConfig", spec);
    }

    /** A VirtualService for reviews with one HTTP route whose extra fields are {@code http}. */
    static String vsHttp(String http) {
        String route = http.lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        return vs("hosts: [reviews]\nhttp:\n- route:\n  - destination: {host: reviews}\n" + route);
    }

    /** A DestinationRule for reviews whose trafficPolicy is {@code policy}. */
    static String drPolicy(String policy) {
        String p = policy.lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        return dr("host: reviews\ntrafficPolicy:\n" + p);
    }

    /** A Gateway with one server whose fields are {@code server}. */
    static String gwServer(String server) {
        String s = server.lines().map(l -> "  " + l).collect(Collectors.joining("\n"));
        return gw("selector: {istio: ingressgateway}\nservers:\n-" + s.substring(1));
    }

    // ---- cases --------------------------------------------------------------------------------

    public static Stream<Arguments> cases() {
        List<Arguments> c = new ArrayList<>();
        virtualServices(c);
        destinationRules(c);
        gateways(c);
        serviceEntries(c);
        sidecars(c);
        workloadEntries(c);
        workloadGroups(c);
        envoyFilters(c);
        proxyConfigs(c);
        return c.stream();
    }

    static void virtualServices(List<Arguments> c) {
        c.add(ok("vs: subset route", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews, subset: v1}""")));
        c.add(ok("vs: * on a gateway", vs("""
                hosts: ["*"]
                gateways: [bookinfo-gateway]
                http:
                - match:
                  - uri: {exact: /productpage}
                  route:
                  - destination: {host: productpage, port: {number: 9080}}""")));
        c.add(ok("vs: trailing document separator", vs("""
                hosts: [ratings]
                http:
                - route:
                  - destination: {host: ratings}""") + "---\n"));
        c.add(ok("vs: delegate (no hosts)", vs("""
                http:
                - match:
                  - uri: {prefix: /a}
                  route:
                  - destination: {host: a.default.svc.cluster.local}""")));
        c.add(ok("vs: root route with delegate", vs("""
                hosts: [a.example.com]
                gateways: [istio-system/gw]
                http:
                - match:
                  - uri: {prefix: /a}
                  delegate: {name: sub, namespace: team}""")));
        c.add(ok("vs: tcp route on port", vs("""
                hosts: [mysql.db.svc.cluster.local]
                tcp:
                - match:
                  - port: 3306
                    destinationSubnets: [10.0.0.0/8]
                  route:
                  - destination: {host: mysql.db.svc.cluster.local, port: {number: 3306}}""")));
        c.add(ok("vs: tls route with SNI inside hosts", vs("""
                hosts: ["*.example.com"]
                gateways: [mesh]
                tls:
                - match:
                  - sniHosts: [a.example.com]
                    port: 443
                  route:
                  - destination: {host: a.example.com}""")));
        c.add(ok("vs: redirect", vs("""
                hosts: [reviews]
                http:
                - redirect: {uri: /v2, redirectCode: 301, scheme: https, port: 8443}""")));
        c.add(ok("vs: direct response", vs("""
                hosts: [reviews]
                http:
                - directResponse: {status: 503, body: {string: unavailable}}""")));
        c.add(ok("vs: fault abort grpc status", vsHttp("""
                fault:
                  abort: {grpcStatus: UNAVAILABLE, percentage: {value: 0.1}}
                  delay: {fixedDelay: 7s, percentage: {value: 50}}""")));
        c.add(ok("vs: retries", vsHttp("""
                timeout: 10s
                retries: {attempts: 3, perTryTimeout: 2s, retryOn: "5xx,503,reset,connect-failure"}""")));
        c.add(ok("vs: IP host", vs("""
                hosts: [10.0.0.1]
                tcp:
                - route:
                  - destination: {host: db.example.com}""")));
        c.add(ok("vs: withoutHeaders regex * means present", vs("""
                hosts: [reviews]
                http:
                - match:
                  - withoutHeaders: {x-canary: {regex: "*"}}
                  route:
                  - destination: {host: reviews}""")));
        c.add(ok("vs: cors policy", vsHttp("""
                corsPolicy:
                  allowOrigins: [{exact: "https://example.com"}, {regex: "https://.*\\\\.example\\\\.org"}]
                  allowMethods: [GET, POST, "*"]
                  allowHeaders: [x-custom, "*"]
                  maxAge: 24h""")));
        c.add(ok("vs: JWT claim routing on a gateway", vs("""
                hosts: [api.example.com]
                gateways: [istio-system/ingress]
                http:
                - match:
                  - headers:
                      "@request.auth.claims.group": {exact: admin}
                  route:
                  - destination: {host: api.default.svc.cluster.local}""")));
        c.add(ok("vs: header values with variables", vsHttp("""
                headers:
                  request:
                    set: {x-client: "%DOWNSTREAM_REMOTE_ADDRESS%", x-pct: "100%%"}
                  response:
                    add: {x-served-by: "%HOSTNAME%"}
                    remove: [x-internal]""")));
        c.add(ok("vs: regex rewrite", vsHttp("""
                rewrite:
                  uriRegexRewrite: {match: "^/service/([^/]+)(/.*)$", rewrite: "\\\\2/instance/\\\\1"}""")));
        c.add(ok("vs: named groups, lazy quantifiers and flags are RE2", vs("""
                hosts: [reviews]
                http:
                - match:
                  - uri: {regex: "(?i)/(?P<id>[0-9]{1,10})/.*?"}
                  route:
                  - destination: {host: reviews}""")));

        c.add(bad("vs: invalid host", vs("""
                hosts: [Invalid_Host]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.hosts[0]", "domain"));
        c.add(bad("vs: * for the mesh", vs("""
                hosts: ["*"]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.hosts[0]", "mesh"));
        c.add(bad("vs: * with gateway mesh", vs("""
                hosts: ["*"]
                gateways: [mesh, istio-system/gw]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.hosts[0]", "wildcard"));
        c.add(bad("vs: overlapping hosts", vs("""
                hosts: ["*.example.com", a.example.com]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.hosts[1]", "duplicate"));
        c.add(bad("vs: all-digit top-level label", vs("""
                hosts: [foo.123]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.hosts[0]", "digits"));
        c.add(bad("vs: no routes", vs("hosts: [reviews]"), "spec.http", "tcp"));
        c.add(bad("vs: bad gateway name", vs("""
                hosts: [reviews]
                gateways: [ns/Bad_Name]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.gateways[0]", "gateway name"));
        c.add(bad("vs: empty gateway namespace", vs("""
                hosts: [reviews]
                gateways: [/gw]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.gateways[0]", "empty"));
        c.add(bad("vs: http route without action", vs("""
                hosts: [reviews]
                http:
                - match:
                  - uri: {prefix: /}"""), "spec.http[0].route", "redirect"));
        c.add(bad("vs: route and redirect", vsHttp("redirect: {uri: /x}"), "spec.http[0].redirect", "both"));
        c.add(bad("vs: redirect code", vs("""
                hosts: [reviews]
                http:
                - redirect: {uri: /x, redirectCode: 200}"""), "spec.http[0].redirect.redirectCode", "3xx"));
        c.add(bad("vs: empty redirect", vs("""
                hosts: [reviews]
                http:
                - redirect: {}"""), "spec.http[0].redirect", "uri"));
        c.add(bad("vs: redirect scheme", vs("""
                hosts: [reviews]
                http:
                - redirect: {scheme: ftp}"""), "spec.http[0].redirect.scheme", "https"));
        c.add(bad("vs: redirect and directResponse", vs("""
                hosts: [reviews]
                http:
                - redirect: {uri: /x}
                  directResponse: {status: 200}"""), "spec.http[0].directResponse", "redirect"));
        c.add(bad("vs: route and directResponse", vsHttp("directResponse: {status: 200}"),
                "spec.http[0].directResponse", "both"));
        c.add(bad("vs: directResponse status", vs("""
                hosts: [reviews]
                http:
                - directResponse: {status: 100}"""), "spec.http[0].directResponse.status", "200..599"));
        c.add(bad("vs: rewrite uri and regex", vsHttp("""
                rewrite: {uri: /x, uriRegexRewrite: {match: "^/a", rewrite: /b}}"""),
                "spec.http[0].rewrite.uriRegexRewrite", "only one"));
        c.add(bad("vs: empty rewrite", vsHttp("rewrite: {}"), "spec.http[0].rewrite", "authority"));
        c.add(bad("vs: rewrite regex invalid", vsHttp("""
                rewrite: {uriRegexRewrite: {match: "a(b", rewrite: /b}}"""),
                "spec.http[0].rewrite.uriRegexRewrite.match", "regex"));
        c.add(bad("vs: rewrite regex needs rewrite", vsHttp("""
                rewrite: {uriRegexRewrite: {match: "^/a"}}"""), "spec.http[0].rewrite.uriRegexRewrite", "both"));
        c.add(bad("vs: destination host *", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: "*"}"""), "spec.http[0].route[0].destination.host", "cannot"));
        c.add(bad("vs: destination without host", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {subset: v1}"""), "spec.http[0].route[0].destination.host", "empty"));
        c.add(bad("vs: subset not a DNS label", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews, subset: V1}"""), "spec.http[0].route[0].destination.subset", "dns-1123"));
        c.add(bad("vs: destination port", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews, port: {number: 70000}}"""),
                "spec.http[0].route[0].destination.port.number", "range"));
        c.add(bad("vs: negative weight", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews}
                    weight: -1"""), "spec.http[0].route[0].weight", "negative"));
        c.add(bad("vs: total weight 0", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews, subset: v1}
                    weight: 0
                  - destination: {host: reviews, subset: v2}
                    weight: 0"""), "spec.http[0].route", "total"));
        c.add(bad("vs: route without destination", vs("""
                hosts: [reviews]
                http:
                - route:
                  - weight: 100"""), "spec.http[0].route[0].destination", "required"));
        c.add(bad("vs: tcp negative weight", vs("""
                hosts: [db.example.com]
                tcp:
                - route:
                  - destination: {host: db.example.com}
                    weight: -5"""), "spec.tcp[0].route[0].weight", "negative"));
        c.add(bad("vs: empty method prefix", vs("""
                hosts: [reviews]
                http:
                - match:
                  - method: {prefix: ""}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].method.prefix", "empty"));
        c.add(bad("vs: uri regex does not compile", vs("""
                hosts: [reviews]
                http:
                - match:
                  - uri: {regex: "a(b"}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].uri.regex", "regex"));
        c.add(bad("vs: uri regex lookahead", vs("""
                hosts: [reviews]
                http:
                - match:
                  - uri: {regex: "/(?=api)"}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].uri.regex", "lookaround"));
        c.add(bad("vs: header regex possessive", vs("""
                hosts: [reviews]
                http:
                - match:
                  - headers: {x-a: {regex: "a++"}}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].headers[x-a].regex", "possessive"));
        c.add(bad("vs: authority regex repeat count", vs("""
                hosts: [reviews]
                http:
                - match:
                  - authority: {regex: "a{1001}"}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].authority.regex", "1000"));
        c.add(bad("vs: header name", vs("""
                hosts: [reviews]
                http:
                - match:
                  - headers: {"x foo": {exact: a}}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].headers[x foo]", "header name"));
        c.add(bad("vs: empty query param regex", vs("""
                hosts: [reviews]
                http:
                - match:
                  - queryParams: {q: {regex: ""}}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].queryParams[q].regex", "empty"));
        c.add(bad("vs: JWT claim routing on the mesh", vs("""
                hosts: [reviews]
                http:
                - match:
                  - headers:
                      "@request.auth.claims.sub": {exact: alice}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].headers[@request.auth.claims.sub]", "gateway"));
        c.add(bad("vs: match port", vs("""
                hosts: [reviews]
                http:
                - match:
                  - port: 70000
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].port", "range"));
        c.add(bad("vs: sourceNamespace", vs("""
                hosts: [reviews]
                http:
                - match:
                  - sourceNamespace: Bad_NS
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].sourceNamespace", "namespace"));
        c.add(bad("vs: match sourceLabels", vs("""
                hosts: [reviews]
                http:
                - match:
                  - sourceLabels: {app: "not valid"}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].match[0].sourceLabels", "label"));
        c.add(bad("vs: timeout below 1ms", vsHttp("timeout: 500us"), "spec.http[0].timeout", "1ms"));
        c.add(bad("vs: negative attempts", vsHttp("retries: {attempts: -1}"), "spec.http[0].retries.attempts", "negative"));
        c.add(bad("vs: retryOn policy", vsHttp("retries: {attempts: 2, retryOn: \"5xx,sometimes\"}"),
                "spec.http[0].retries.retryOn", "retryon"));
        c.add(bad("vs: retry settings with 0 attempts", vsHttp("retries: {attempts: 0, perTryTimeout: 1s}"),
                "spec.http[0].retries.attempts", "disabled"));
        c.add(bad("vs: perTryTimeout precision", vsHttp("retries: {attempts: 2, perTryTimeout: 1.0005s}"),
                "spec.http[0].retries.perTryTimeout", "precision"));
        c.add(bad("vs: abort http status", vsHttp("fault: {abort: {httpStatus: 700}}"),
                "spec.http[0].fault.abort.httpStatus", "200..599"));
        c.add(bad("vs: abort grpc status", vsHttp("fault: {abort: {grpcStatus: NOPE}}"),
                "spec.http[0].fault.abort.grpcStatus", "grpc"));
        c.add(bad("vs: abort http2 error", vsHttp("fault: {abort: {http2Error: REFUSED_STREAM}}"),
                "spec.http[0].fault.abort.http2Error", "not supported"));
        c.add(bad("vs: empty fault", vsHttp("fault: {}"), "spec.http[0].fault", "abort"));
        c.add(bad("vs: delay percentage", vsHttp("fault: {delay: {fixedDelay: 1s, percentage: {value: 150}}}"),
                "spec.http[0].fault.delay.percentage.value", "percentage"));
        c.add(bad("vs: delay fixedDelay", vsHttp("fault: {delay: {fixedDelay: 0s}}"),
                "spec.http[0].fault.delay.fixedDelay", "1ms"));
        c.add(bad("vs: exponential delay", vsHttp("fault: {delay: {exponentialDelay: 1s}}"),
                "spec.http[0].fault.delay.exponentialDelay", "not supported"));
        c.add(bad("vs: fault with redirect", vs("""
                hosts: [reviews]
                http:
                - redirect: {uri: /x}
                  fault: {abort: {httpStatus: 500}}"""), "spec.http[0].fault", "redirect"));
        c.add(bad("vs: mirror percentage", vsHttp("""
                mirror: {host: shadow}
                mirrorPercentage: {value: 120}"""), "spec.http[0].mirrorPercentage", "100"));
        c.add(bad("vs: mirror and mirrors", vsHttp("""
                mirror: {host: shadow}
                mirrors:
                - destination: {host: shadow2}"""), "spec.http[0].mirrors", "both"));
        c.add(bad("vs: mirrors without destination", vsHttp("""
                mirrors:
                - percentage: {value: 10}"""), "spec.http[0].mirrors[0].destination", "required"));
        c.add(bad("vs: mirrors percentage", vsHttp("""
                mirrors:
                - destination: {host: shadow}
                  percentage: {value: -1}"""), "spec.http[0].mirrors[0].percentage", "negative"));
        c.add(bad("vs: mirror host *", vsHttp("mirror: {host: \"*\"}"), "spec.http[0].mirror.host", "cannot"));
        c.add(bad("vs: cors empty origin", vsHttp("corsPolicy: {allowOrigins: [{exact: \"\"}]}"),
                "spec.http[0].corsPolicy.allowOrigins[0]", "allowOrigins"));
        c.add(bad("vs: cors origin regex", vsHttp("corsPolicy: {allowOrigins: [{regex: \"(\"}]}"),
                "spec.http[0].corsPolicy.allowOrigins[0].regex", "regex"));
        c.add(bad("vs: cors method", vsHttp("corsPolicy: {allowMethods: [FETCH]}"),
                "spec.http[0].corsPolicy.allowMethods[0]", "method"));
        c.add(bad("vs: cors header", vsHttp("corsPolicy: {allowHeaders: [\"x y\"]}"),
                "spec.http[0].corsPolicy.allowHeaders[0]", "header name"));
        c.add(bad("vs: cors maxAge precision", vsHttp("corsPolicy: {maxAge: 1.5s}"),
                "spec.http[0].corsPolicy.maxAge", "seconds"));
        c.add(bad("vs: set pseudo header", vsHttp("headers: {request: {set: {\":path\": /x}}}"),
                "spec.http[0].headers.request.set[:path]", "pseudo"));
        c.add(bad("vs: remove Host", vsHttp("headers: {response: {remove: [Host]}}"),
                "spec.http[0].headers.response.remove[0]", "host"));
        c.add(bad("vs: header value with a lone %", vsHttp("headers: {request: {add: {x-a: \"50%\"}}}"),
                "spec.http[0].headers.request.add[x-a]", "escaped"));
        c.add(bad("vs: header value with control character", vsHttp("headers: {request: {add: {x-a: \"a\\u0001b\"}}}"),
                "spec.http[0].headers.request.add[x-a]", "control"));
        c.add(bad("vs: destination header manipulation", vs("""
                hosts: [reviews]
                http:
                - route:
                  - destination: {host: reviews}
                    headers: {response: {set: {host: x}}}"""), "spec.http[0].route[0].headers.response.set[host]", "host"));
        c.add(bad("vs: authority rewritten twice", vsHttp("""
                rewrite: {authority: a.example.com}
                headers: {request: {set: {host: b.example.com}}}"""),
                "spec.http[0].headers.request.set[host]", "authority"));
        c.add(bad("vs: delegate with gateways", vs("""
                gateways: [istio-system/gw]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.gateways", "delegate"));
        c.add(bad("vs: delegate with tcp", vs("""
                http:
                - route:
                  - destination: {host: reviews}
                tcp:
                - route:
                  - destination: {host: reviews}"""), "spec.tcp", "delegate"));
        c.add(bad("vs: root route with route", vs("""
                hosts: [a.example.com]
                http:
                - delegate: {name: sub}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].route", "delegate"));
        c.add(bad("vs: delegate delegating again", vs("""
                http:
                - delegate: {name: other}
                  route:
                  - destination: {host: reviews}"""), "spec.http[0].delegate", "again"));
        c.add(bad("vs: tls route without match", vs("""
                hosts: [a.example.com]
                tls:
                - route:
                  - destination: {host: a.example.com}"""), "spec.tls[0].match", "match"));
        c.add(bad("vs: tls match without SNI", vs("""
                hosts: [a.example.com]
                tls:
                - match:
                  - port: 443
                  route:
                  - destination: {host: a.example.com}"""), "spec.tls[0].match[0].sniHosts", "sni"));
        c.add(bad("vs: SNI outside the hosts", vs("""
                hosts: [a.example.com]
                tls:
                - match:
                  - sniHosts: [b.example.com]
                  route:
                  - destination: {host: a.example.com}"""), "spec.tls[0].match[0].sniHosts[0]", "not within"));
        c.add(bad("vs: tls route without route", vs("""
                hosts: [a.example.com]
                tls:
                - match:
                  - sniHosts: [a.example.com]"""), "spec.tls[0].route", "route"));
        c.add(bad("vs: tcp destination subnet", vs("""
                hosts: [db.example.com]
                tcp:
                - match:
                  - destinationSubnets: [10.0.0.0/33]
                  route:
                  - destination: {host: db.example.com}"""), "spec.tcp[0].match[0].destinationSubnets[0]", "prefix"));
        c.add(bad("vs: tcp match port", vs("""
                hosts: [db.example.com]
                tcp:
                - match:
                  - port: 99999
                  route:
                  - destination: {host: db.example.com}"""), "spec.tcp[0].match[0].port", "range"));
        c.add(bad("vs: tcp route without route", vs("""
                hosts: [db.example.com]
                tcp:
                - match:
                  - port: 3306"""), "spec.tcp[0].route", "route"));
        c.add(bad("vs: exportTo ~", vs("""
                hosts: [reviews]
                exportTo: ["~"]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.exportTo[0]", "serviceentry"));
        c.add(bad("vs: exportTo . and own namespace", vs("""
                hosts: [reviews]
                exportTo: [".", default]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.exportTo[1]", "duplicate"));
        c.add(bad("vs: exportTo * with others", vs("""
                hosts: [reviews]
                exportTo: ["*", ns1]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.exportTo", "public"));
        c.add(bad("vs: exportTo invalid namespace", vs("""
                hosts: [reviews]
                exportTo: [Bad_NS]
                http:
                - route:
                  - destination: {host: reviews}"""), "spec.exportTo[0]", "namespace"));
        c.add(bad("vs: dry-run annotation", """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata:
                  name: test
                  annotations: {istio.io/dry-run: "true"}
                spec:
                  hosts: [reviews]
                  http:
                  - route:
                    - destination: {host: reviews}
                """, "metadata.annotations", "dry-run"));
    }

    static void destinationRules(List<Arguments> c) {
        c.add(ok("dr: subsets with ISTIO_MUTUAL", dr("""
                host: reviews
                trafficPolicy:
                  tls: {mode: ISTIO_MUTUAL}
                subsets:
                - name: v1
                  labels: {version: v1}
                - name: v2
                  labels: {version: v2}
                  trafficPolicy:
                    loadBalancer: {simple: LEAST_REQUEST}""")));
        c.add(ok("dr: consistent hash cookie and maglev", drPolicy("""
                loadBalancer:
                  consistentHash:
                    httpCookie: {name: user, ttl: 0s}
                    maglev: {tableSize: 65537}""")));
        c.add(ok("dr: locality distribute", drPolicy("""
                outlierDetection: {consecutive5xxErrors: 5, interval: 10s, baseEjectionTime: 30s, maxEjectionPercent: 50}
                loadBalancer:
                  localityLbSetting:
                    enabled: true
                    distribute:
                    - from: us-west/zone1/*
                      to: {"us-west/zone1/*": 80, "us-west/zone2/*": 20}""")));
        c.add(ok("dr: port level settings", drPolicy("""
                connectionPool:
                  tcp: {maxConnections: 100, connectTimeout: 30ms, tcpKeepalive: {time: 7200s, interval: 75s}}
                  http: {http1MaxPendingRequests: 10, http2MaxRequests: 1000, maxRequestsPerConnection: 10}
                portLevelSettings:
                - port: {number: 443}
                  tls: {mode: SIMPLE, sni: reviews.example.com}""")));
        c.add(ok("dr: workload selector exported to own namespace", dr("""
                host: reviews
                workloadSelector:
                  matchLabels: {app: ratings}
                exportTo: ["."]
                trafficPolicy:
                  tls: {mode: ISTIO_MUTUAL}""")));
        c.add(ok("dr: MUTUAL with credentialName", drPolicy("""
                tls: {mode: MUTUAL, credentialName: client-credential, sni: api.example.com}""")));
        c.add(ok("dr: tcp idle timeout 0s disables it", drPolicy("""
                connectionPool:
                  tcp: {idleTimeout: 0s}""")));
        c.add(ok("dr: locality failover with outlier detection", drPolicy("""
                outlierDetection: {consecutive5xxErrors: 3}
                loadBalancer:
                  localityLbSetting:
                    failover:
                    - {from: us-east, to: eu-west}""")));

        c.add(bad("dr: no host", dr("""
                trafficPolicy:
                  tls: {mode: ISTIO_MUTUAL}"""), "spec.host", "empty"));
        c.add(bad("dr: invalid host", dr("host: bad_host"), "spec.host", "domain"));
        c.add(bad("dr: duplicate subsets", dr("""
                host: reviews
                subsets:
                - {name: v1, labels: {version: v1}}
                - {name: v1, labels: {version: v2}}"""), "spec.subsets[1].name", "duplicate"));
        c.add(bad("dr: subset name", dr("""
                host: reviews
                subsets:
                - {name: V1, labels: {version: v1}}"""), "spec.subsets[0].name", "dns-1123"));
        c.add(bad("dr: subset without name", dr("""
                host: reviews
                subsets:
                - {labels: {version: v1}}"""), "spec.subsets[0].name", "empty"));
        c.add(bad("dr: subset labels", dr("""
                host: reviews
                subsets:
                - {name: v1, labels: {version: "has space"}}"""), "spec.subsets[0].labels", "label"));
        c.add(bad("dr: empty traffic policy", dr("""
                host: reviews
                trafficPolicy: {}"""), "spec.trafficPolicy", "at least one"));
        c.add(bad("dr: subset traffic policy", dr("""
                host: reviews
                subsets:
                - name: v1
                  trafficPolicy:
                    connectionPool: {tcp: {maxConnections: -1}}"""),
                "spec.subsets[0].trafficPolicy.connectionPool.tcp.maxConnections", "negative"));
        c.add(bad("dr: cookie without name", drPolicy("""
                loadBalancer:
                  consistentHash: {httpCookie: {ttl: 10s}}"""),
                "spec.trafficPolicy.loadBalancer.consistentHash.httpCookie.name", "required"));
        c.add(bad("dr: maglev table size not prime", drPolicy("""
                loadBalancer:
                  consistentHash: {useSourceIp: true, maglev: {tableSize: 65536}}"""),
                "spec.trafficPolicy.loadBalancer.consistentHash.maglev.tableSize", "prime"));
        c.add(bad("dr: minimumRingSize with ringHash", drPolicy("""
                loadBalancer:
                  consistentHash: {httpHeaderName: x-user, minimumRingSize: 1024, ringHash: {minimumRingSize: 1024}}"""),
                "spec.trafficPolicy.loadBalancer.consistentHash.minimumRingSize", "only one"));
        c.add(bad("dr: distribute and failover", drPolicy("""
                outlierDetection: {consecutive5xxErrors: 3}
                loadBalancer:
                  localityLbSetting:
                    distribute:
                    - {from: "us-west/*", to: {"us-west/*": 100}}
                    failover:
                    - {from: us-east, to: eu-west}"""),
                "spec.trafficPolicy.loadBalancer.localityLbSetting.failover", "together"));
        c.add(bad("dr: distribute weights", drPolicy("""
                loadBalancer:
                  localityLbSetting:
                    distribute:
                    - {from: "us-west/*", to: {"us-west/*": 60, "us-east/*": 30}}"""),
                "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute[0].to", "100"));
        c.add(bad("dr: distribute wildcard not last", drPolicy("""
                loadBalancer:
                  localityLbSetting:
                    distribute:
                    - {from: "us-west/*/a", to: {"us-west/*": 100}}"""),
                "spec.trafficPolicy.loadBalancer.localityLbSetting.distribute", "wildcard"));
        c.add(bad("dr: failover to itself", drPolicy("""
                outlierDetection: {consecutive5xxErrors: 3}
                loadBalancer:
                  localityLbSetting:
                    failover:
                    - {from: us-east, to: us-east}"""),
                "spec.trafficPolicy.loadBalancer.localityLbSetting.failover[0]", "different"));
        c.add(bad("dr: failover with topology priority", drPolicy("""
                outlierDetection: {consecutive5xxErrors: 3}
                loadBalancer:
                  localityLbSetting:
                    failover:
                    - {from: us-east, to: eu-west}
                    failoverPriority: [topology.kubernetes.io/region]"""),
                "spec.trafficPolicy.loadBalancer.localityLbSetting.failoverPriority[0]", "topology"));
        c.add(bad("dr: negative pending requests", drPolicy("""
                connectionPool: {http: {http1MaxPendingRequests: -1}}"""),
                "spec.trafficPolicy.connectionPool.http.http1MaxPendingRequests", "negative"));
        c.add(bad("dr: connect timeout below 1ms", drPolicy("""
                connectionPool: {tcp: {connectTimeout: 500us}}"""),
                "spec.trafficPolicy.connectionPool.tcp.connectTimeout", "1ms"));
        c.add(bad("dr: empty connection pool", drPolicy("connectionPool: {}"),
                "spec.trafficPolicy.connectionPool", "at least one"));
        c.add(bad("dr: h2 upgrade with client protocol", drPolicy("""
                connectionPool: {http: {h2UpgradePolicy: UPGRADE, useClientProtocol: true}}"""),
                "spec.trafficPolicy.connectionPool.http.useClientProtocol", "upgrade"));
        c.add(bad("dr: max ejection percent", drPolicy("""
                outlierDetection: {maxEjectionPercent: 120}"""),
                "spec.trafficPolicy.outlierDetection.maxEjectionPercent", "range"));
        c.add(bad("dr: outlier interval", drPolicy("""
                outlierDetection: {interval: 0s}"""), "spec.trafficPolicy.outlierDetection.interval", "1ms"));
        c.add(bad("dr: local origin failures need split", drPolicy("""
                outlierDetection: {consecutiveLocalOriginFailures: 3}"""),
                "spec.trafficPolicy.outlierDetection.consecutiveLocalOriginFailures", "split"));
        c.add(bad("dr: MUTUAL without client certificate", drPolicy("""
                tls: {mode: MUTUAL, privateKey: /etc/certs/key.pem}"""),
                "spec.trafficPolicy.tls.clientCertificate", "required"));
        c.add(bad("dr: credentialName with certificates", drPolicy("""
                tls: {mode: SIMPLE, credentialName: cred, caCertificates: /etc/certs/ca.pem}"""),
                "spec.trafficPolicy.tls.credentialName", "credentialname"));
        c.add(bad("dr: insecureSkipVerify with CA", drPolicy("""
                tls: {mode: SIMPLE, insecureSkipVerify: true, caCertificates: /etc/certs/ca.pem}"""),
                "spec.trafficPolicy.tls.insecureSkipVerify", "insecureskipverify"));
        c.add(bad("dr: configmap credential in another namespace", drPolicy("""
                tls: {mode: SIMPLE, credentialName: "configmap://other/ca"}"""),
                "spec.trafficPolicy.tls.credentialName", "namespace"));
        c.add(bad("dr: port level setting without port", drPolicy("""
                portLevelSettings:
                - tls: {mode: SIMPLE}"""), "spec.trafficPolicy.portLevelSettings[0].port", "port"));
        c.add(bad("dr: port level setting without settings", drPolicy("""
                portLevelSettings:
                - port: {number: 80}"""), "spec.trafficPolicy.portLevelSettings[0]", "at least one"));
        c.add(bad("dr: workload selector exported everywhere", dr("""
                host: reviews
                workloadSelector: {matchLabels: {app: ratings}}
                exportTo: ["*"]"""), "spec.exportTo", "workloadselector"));
        c.add(bad("dr: workload selector wildcard", dr("""
                host: reviews
                workloadSelector: {matchLabels: {app: "rat*"}}"""), "spec.workloadSelector.matchLabels", "wildcard"));
        c.add(bad("dr: tunnel with proxy protocol", drPolicy("""
                tunnel: {protocol: CONNECT, targetHost: proxy.example.com, targetPort: 3128}
                proxyProtocol: {version: V2}"""), "spec.trafficPolicy.proxyProtocol", "together"));
        c.add(bad("dr: tunnel protocol", drPolicy("""
                tunnel: {protocol: GET, targetHost: proxy.example.com, targetPort: 3128}"""),
                "spec.trafficPolicy.tunnel.protocol", "connect"));
        c.add(bad("dr: warmup aggression", drPolicy("""
                loadBalancer:
                  simple: ROUND_ROBIN
                  warmup: {duration: 60s, aggression: 0.5}"""),
                "spec.trafficPolicy.loadBalancer.warmup.aggression", "at least 1"));
        c.add(bad("dr: exportTo duplicate", dr("""
                host: reviews
                exportTo: [ns1, ns1]"""), "spec.exportTo[1]", "duplicate"));
    }

    static void gateways(List<Arguments> c) {
        c.add(ok("gw: http on *", gwServer("""
                port: {number: 8080, name: http, protocol: HTTP}
                hosts: ["*"]""")));
        c.add(ok("gw: https with credentialName", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: [ns1/*.example.com, ./api.example.com]
                tls: {mode: SIMPLE, credentialName: example-cert, minProtocolVersion: TLSV1_2}""")));
        c.add(ok("gw: http with httpsRedirect", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: [a.example.com]
                tls: {httpsRedirect: true}""")));
        c.add(ok("gw: tls passthrough", gwServer("""
                port: {number: 443, name: tls, protocol: TLS}
                hosts: ["*.example.com"]
                tls: {mode: PASSTHROUGH}""")));
        c.add(ok("gw: mutual with files", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: [a.example.com]
                tls:
                  mode: MUTUAL
                  serverCertificate: /etc/certs/cert.pem
                  privateKey: /etc/certs/key.pem
                  caCertificates: /etc/certs/ca.pem""")));
        c.add(ok("gw: IP host and AUTO_PASSTHROUGH", gwServer("""
                port: {number: 15443, name: tls, protocol: TLS}
                hosts: [10.1.2.3, "*.local"]
                tls: {mode: AUTO_PASSTHROUGH}""")));

        c.add(bad("gw: no servers", gw("selector: {istio: ingressgateway}"), "spec.servers", "at least one"));
        c.add(bad("gw: server without hosts", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}"""), "spec.servers[0].hosts", "host"));
        c.add(bad("gw: short host name", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: [reviews]"""), "spec.servers[0].hosts[0]", "short"));
        c.add(bad("gw: partial wildcard", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: ["ns1/*foo.com"]"""), "spec.servers[0].hosts[0]", "partial"));
        c.add(bad("gw: host namespace", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: [Bad_NS/foo.com]"""), "spec.servers[0].hosts[0]", "namespace"));
        c.add(bad("gw: ~ namespace", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: [~/foo.com]"""), "spec.servers[0].hosts[0]", "namespace"));
        c.add(bad("gw: no port", gwServer("hosts: [\"*\"]"), "spec.servers[0].port", "required"));
        c.add(bad("gw: unknown protocol", gwServer("""
                port: {number: 80, name: http, protocol: FOO}
                hosts: ["*"]"""), "spec.servers[0].port.protocol", "protocol"));
        c.add(bad("gw: port number 0", gwServer("""
                port: {name: http, protocol: HTTP}
                hosts: ["*"]"""), "spec.servers[0].port.number", "range"));
        c.add(bad("gw: port without name", gwServer("""
                port: {number: 80, protocol: HTTP}
                hosts: ["*"]"""), "spec.servers[0].port.name", "name"));
        c.add(bad("gw: targetPort", gwServer("""
                port: {number: 80, name: http, protocol: HTTP, targetPort: 8080}
                hosts: ["*"]"""), "spec.servers[0].port.targetPort", "targetport"));
        c.add(bad("gw: duplicate port names", gw("""
                servers:
                - port: {number: 80, name: http, protocol: HTTP}
                  hosts: [a.example.com]
                - port: {number: 8080, name: http, protocol: HTTP}
                  hosts: [b.example.com]"""), "spec.servers[1].port.name", "unique"));
        c.add(bad("gw: https without tls", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]"""), "spec.servers[0].tls", "tls settings"));
        c.add(bad("gw: tcp with tls", gwServer("""
                port: {number: 31400, name: tcp, protocol: TCP}
                hosts: ["*"]
                tls: {mode: PASSTHROUGH}"""), "spec.servers[0].tls", "only https"));
        c.add(bad("gw: http with terminating tls", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                hosts: ["*"]
                tls: {mode: SIMPLE, credentialName: cert}"""), "spec.servers[0].tls", "plain text"));
        c.add(bad("gw: SIMPLE without certificate", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: SIMPLE, privateKey: /etc/certs/key.pem}"""), "spec.servers[0].tls.serverCertificate",
                "server certificate"));
        c.add(bad("gw: MUTUAL without CA", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: MUTUAL, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}"""),
                "spec.servers[0].tls.caCertificates", "ca bundle"));
        c.add(bad("gw: tlsCertificates without key", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls:
                  mode: SIMPLE
                  tlsCertificates:
                  - {serverCertificate: /etc/rsa.pem, privateKey: /etc/rsa.key}
                  - {serverCertificate: /etc/ec.pem}"""), "spec.servers[0].tls.tlsCertificates[1].privateKey", "private key"));
        c.add(bad("gw: ISTIO_MUTUAL with credentialName", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: ISTIO_MUTUAL, credentialName: cert}"""), "spec.servers[0].tls.credentialName", "istio_mutual"));
        c.add(bad("gw: two certificate sources", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: SIMPLE, credentialName: cert, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}"""),
                "spec.servers[0].tls", "only one"));
        c.add(bad("gw: CRL with SIMPLE", gwServer("""
                port: {number: 443, name: https, protocol: HTTPS}
                hosts: ["*"]
                tls: {mode: SIMPLE, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem, caCrl: /etc/crl.pem}"""),
                "spec.servers[0].tls.caCrl", "simple"));
        c.add(bad("gw: name with a dot", doc("Gateway", "my.gateway", """
                servers:
                - port: {number: 80, name: http, protocol: HTTP}
                  hosts: ["*"]"""), "metadata.name", "dns-1123"));
        c.add(bad("gw: bind not an IP", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                bind: localhost
                hosts: ["*"]"""), "spec.servers[0].bind", "ip"));
        c.add(bad("gw: unix bind with a port number", gwServer("""
                port: {number: 80, name: http, protocol: HTTP}
                bind: unix:///var/run/gw.sock
                hosts: ["*"]"""), "spec.servers[0].port.number", "unix"));
    }

    static void serviceEntries(List<Arguments> c) {
        c.add(ok("se: external DNS", se("""
                hosts: [www.googleapis.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                - {number: 443, name: https, protocol: HTTPS}
                resolution: DNS""")));
        c.add(ok("se: static endpoints", se("""
                hosts: [mymongodb.somedomain]
                addresses: [192.192.192.192/24]
                ports:
                - {number: 27018, name: mongodb, protocol: MONGO}
                location: MESH_INTERNAL
                resolution: STATIC
                endpoints:
                - address: 2.2.2.2
                - address: 3.3.3.3
                  ports: {mongodb: 27019}
                  labels: {version: v2}""")));
        c.add(ok("se: NONE with CIDR", se("""
                hosts: ["*.internal.example.com"]
                addresses: [10.0.0.0/16]
                ports:
                - {number: 443, name: tls, protocol: TLS}
                resolution: NONE""")));
        // Go's netip.ParsePrefix: no leading zero in an octet, no sign or leading zero in the length
        c.add(bad("se: CIDR with a leading-zero octet", se("""
                hosts: ["*.internal.example.com"]
                addresses: [010.0.0.0/8]
                ports:
                - {number: 443, name: tls, protocol: TLS}
                resolution: NONE"""), "spec.addresses[0]", "leading zero"));
        c.add(bad("se: CIDR with a signed length", se("""
                hosts: ["*.internal.example.com"]
                addresses: [10.0.0.0/+8]
                ports:
                - {number: 443, name: tls, protocol: TLS}
                resolution: NONE"""), "spec.addresses[0]", "bad bits"));
        c.add(bad("se: CIDR with a zero-padded length", se("""
                hosts: ["*.internal.example.com"]
                addresses: [10.0.0.0/08]
                ports:
                - {number: 443, name: tls, protocol: TLS}
                resolution: NONE"""), "spec.addresses[0]", "bad bits"));
        c.add(ok("se: STATIC with workloadSelector", se("""
                hosts: [details.default.svc.cluster.local]
                ports:
                - {number: 9080, name: http, protocol: HTTP, targetPort: 19080}
                location: MESH_INTERNAL
                resolution: STATIC
                workloadSelector:
                  labels: {app: details}""")));
        c.add(ok("se: DNS endpoint by name", se("""
                hosts: [foo.bar.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS
                endpoints:
                - address: us.foo.bar.com
                  ports: {http: 8080}""")));
        c.add(ok("se: exported to no one", se("""
                hosts: [api.example.com]
                ports:
                - {number: 443, name: https, protocol: HTTPS}
                resolution: DNS
                exportTo: ["~"]""")));
        c.add(ok("se: unix endpoint", se("""
                hosts: [unix.local]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                endpoints:
                - address: unix:///var/run/example/socket""")));

        c.add(bad("se: no hosts", se("""
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS"""), "spec.hosts", "at least one"));
        c.add(bad("se: host *", se("""
                hosts: ["*"]
                resolution: NONE"""), "spec.hosts[0]", "not allowed"));
        c.add(bad("se: invalid host", se("""
                hosts: [foo_bar.com]
                resolution: NONE"""), "spec.hosts[0]", "domain"));
        c.add(bad("se: bad address", se("""
                hosts: [a.example.com]
                addresses: [300.1.1.1]
                resolution: NONE"""), "spec.addresses[0]", "ip"));
        c.add(bad("se: CIDR with DNS", se("""
                hosts: [a.example.com]
                addresses: [10.0.0.0/8]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS"""), "spec.addresses", "cidr"));
        c.add(bad("se: duplicate port number", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                - {number: 80, name: http2, protocol: HTTP2}
                resolution: DNS"""), "spec.ports[1].number", "already"));
        c.add(bad("se: duplicate port name", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                - {number: 81, name: http, protocol: HTTP}
                resolution: DNS"""), "spec.ports[1].name", "already"));
        c.add(bad("se: unknown protocol", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: SPDY}
                resolution: DNS"""), "spec.ports[0].protocol", "protocol"));
        // istiod's protocol.Parse knows Thrift (any case) and "grpc-web"; both name valid ports
        c.add(ok("se: thrift protocol", se("""
                hosts: [a.example.com]
                ports:
                - {number: 9090, name: thrift-rpc, protocol: THRIFT}
                - {number: 9091, name: thrift-lower, protocol: thrift}
                - {number: 9092, name: web, protocol: grpc-web}
                resolution: DNS""")));
        c.add(ok("gw: thrift protocol", gwServer("""
                port: {number: 9090, name: thrift, protocol: Thrift}
                hosts: ["*"]""")));
        c.add(bad("se: port name", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: HTTP_WEB, protocol: HTTP}
                resolution: DNS"""), "spec.ports[0].name", "port name"));
        c.add(bad("se: port number", se("""
                hosts: [a.example.com]
                ports:
                - {number: 0, name: http, protocol: HTTP}
                resolution: DNS"""), "spec.ports[0].number", "range"));
        c.add(bad("se: target port", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP, targetPort: 70000}
                resolution: DNS"""), "spec.ports[0].targetPort", "range"));
        c.add(bad("se: NONE with endpoints", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: NONE
                endpoints:
                - address: 1.1.1.1"""), "spec.endpoints", "none"));
        c.add(bad("se: STATIC endpoint by name", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                endpoints:
                - address: backend.example.com"""), "spec.endpoints[0].address", "ip address"));
        c.add(bad("se: endpoint port not of the entry", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                endpoints:
                - address: 1.1.1.1
                  ports: {grpc: 8080}"""), "spec.endpoints[0].ports[grpc]", "port name of the service entry"));
        c.add(bad("se: DNS without endpoints needs FQDN", se("""
                hosts: ["*.example.com"]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS"""), "spec.hosts[0]", "fqdn"));
        c.add(bad("se: DNS_ROUND_ROBIN two endpoints", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS_ROUND_ROBIN
                endpoints:
                - address: a1.example.com
                - address: a2.example.com"""), "spec.endpoints", "at most one"));
        c.add(bad("se: DNS endpoint address", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: DNS
                endpoints:
                - address: "bad_host!" """), "spec.endpoints[0].address", "fqdn"));
        c.add(bad("se: workloadSelector and endpoints", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                workloadSelector: {labels: {app: a}}
                endpoints:
                - address: 1.1.1.1"""), "spec.endpoints", "only one"));
        c.add(bad("se: several hosts on a TCP port", se("""
                hosts: [a.example.com, b.example.com]
                addresses: [240.0.0.1]
                ports:
                - {number: 5432, name: postgres, protocol: TCP}
                resolution: DNS"""), "spec.ports[0].protocol", "several hosts"));
        c.add(bad("se: unix endpoint with ports", se("""
                hosts: [unix.local]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                endpoints:
                - address: unix:///var/run/sock
                  ports: {http: 80}"""), "spec.endpoints[0].ports", "unix"));
        c.add(bad("se: exportTo ~ with others", se("""
                hosts: [a.example.com]
                resolution: NONE
                exportTo: ["~", ns1]"""), "spec.exportTo", "no one"));
        c.add(bad("se: workload selector wildcard", se("""
                hosts: [a.example.com]
                ports:
                - {number: 80, name: http, protocol: HTTP}
                resolution: STATIC
                workloadSelector: {labels: {"app*": a}}"""), "spec.workloadSelector.labels", "wildcard"));
    }

    static void sidecars(List<Arguments> c) {
        c.add(ok("sc: egress hosts", sc("""
                egress:
                - hosts: ["./*", istio-system/*, "*/*.example.com"]""")));
        c.add(ok("sc: ingress and catch-all egress", sc("""
                workloadSelector:
                  labels: {app: ratings}
                ingress:
                - port: {number: 9080, protocol: HTTP, name: somename}
                  defaultEndpoint: 127.0.0.1:8080
                  captureMode: NONE
                - port: {number: 9443, protocol: HTTPS, name: tls}
                  defaultEndpoint: "[::1]:8443"
                  tls: {mode: SIMPLE, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}
                egress:
                - port: {number: 3306, protocol: MYSQL, name: egressmysql}
                  bind: 127.0.0.1
                  hosts: ["*/mysql.foo.com"]
                - hosts: [istio-system/*]""")));
        c.add(ok("sc: egress proxy with ALLOW_ANY", sc("""
                outboundTrafficPolicy:
                  mode: ALLOW_ANY
                  egressProxy: {host: egress.example.com, subset: v1, port: {number: 3128}}""")));
        c.add(ok("sc: unix socket egress", sc("""
                egress:
                - port: {protocol: HTTP, name: uds}
                  bind: unix:///var/run/app.sock
                  captureMode: NONE
                  hosts: ["*/*"]""")));
        c.add(ok("sc: inbound connection pool only", sc("""
                inboundConnectionPool:
                  http: {http1MaxPendingRequests: 1024, idleTimeout: 30s}""")));

        c.add(bad("sc: empty", sc("workloadSelector: {labels: {app: a}}"), "spec.egress", "empty"));
        c.add(bad("sc: egress host without namespace", sc("""
                egress:
                - hosts: [foo.example.com]"""), "spec.egress[0].hosts[0]", "namespace/dnsname"));
        c.add(bad("sc: egress short host", sc("""
                egress:
                - hosts: [ns1/reviews]"""), "spec.egress[0].hosts[0]", "short"));
        c.add(bad("sc: egress host namespace", sc("""
                egress:
                - hosts: [Bad_NS/foo.com]"""), "spec.egress[0].hosts[0]", "namespace"));
        c.add(bad("sc: egress without hosts", sc("""
                egress:
                - port: {number: 80, protocol: HTTP, name: http}"""), "spec.egress[0].hosts", "at least one"));
        c.add(bad("sc: catch-all egress not last", sc("""
                egress:
                - hosts: ["./*"]
                - port: {number: 80, protocol: HTTP, name: http}
                  hosts: ["./*"]"""), "spec.egress[0].port", "last"));
        c.add(bad("sc: duplicate egress ports", sc("""
                egress:
                - port: {number: 80, protocol: HTTP, name: a}
                  hosts: ["./*"]
                - port: {number: 80, protocol: HTTP, name: b}
                  hosts: [istio-system/*]"""), "spec.egress[1].port.number", "already"));
        c.add(bad("sc: egress protocol", sc("""
                egress:
                - port: {number: 80, protocol: WEB, name: a}
                  hosts: ["./*"]"""), "spec.egress[0].port.protocol", "protocol"));
        c.add(bad("sc: egress bind", sc("""
                egress:
                - port: {number: 80, protocol: HTTP, name: a}
                  bind: local
                  hosts: ["./*"]"""), "spec.egress[0].bind", "ip"));
        c.add(bad("sc: port 0 without unix bind", sc("""
                egress:
                - port: {protocol: HTTP, name: a}
                  hosts: ["./*"]"""), "spec.egress[0].bind", "unix"));
        c.add(bad("sc: unix listener capture mode", sc("""
                egress:
                - port: {protocol: HTTP, name: a}
                  bind: unix:///var/run/a.sock
                  captureMode: IPTABLES
                  hosts: ["./*"]"""), "spec.egress[0].captureMode", "default"));
        c.add(bad("sc: ingress without port", sc("""
                ingress:
                - defaultEndpoint: 127.0.0.1:8080"""), "spec.ingress[0].port", "required"));
        c.add(bad("sc: ingress default endpoint host", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: http}
                  defaultEndpoint: 10.0.0.1:8080"""), "spec.ingress[0].defaultEndpoint", "127.0.0.1"));
        c.add(bad("sc: ingress default endpoint port", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: http}
                  defaultEndpoint: 127.0.0.1:http"""), "spec.ingress[0].defaultEndpoint", "number"));
        c.add(bad("sc: ingress default endpoint unix path", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: http}
                  defaultEndpoint: unix://relative.sock"""), "spec.ingress[0].defaultEndpoint", "absolute"));
        c.add(bad("sc: duplicate ingress ports", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: a}
                - port: {number: 9080, protocol: HTTP, name: b}"""), "spec.ingress[1].port.number", "unique"));
        c.add(bad("sc: ingress port number", sc("""
                ingress:
                - port: {number: 0, protocol: HTTP, name: a}"""), "spec.ingress[0].port.number", "range"));
        c.add(bad("sc: ingress ISTIO_MUTUAL", sc("""
                ingress:
                - port: {number: 9443, protocol: HTTPS, name: a}
                  tls: {mode: ISTIO_MUTUAL}"""), "spec.ingress[0].tls.mode", "istio_mutual"));
        c.add(bad("sc: ingress tls on http port", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: a}
                  tls: {mode: SIMPLE, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}"""),
                "spec.ingress[0].tls", "https"));
        c.add(bad("sc: ingress credentialName", sc("""
                ingress:
                - port: {number: 9443, protocol: HTTPS, name: a}
                  tls: {mode: SIMPLE, credentialName: cert}"""), "spec.ingress[0].tls.credentialName", "not supported"));
        c.add(bad("sc: ingress connection pool", sc("""
                ingress:
                - port: {number: 9080, protocol: HTTP, name: a}
                  connectionPool: {http: {maxRetries: -1}}"""),
                "spec.ingress[0].connectionPool.http.maxRetries", "negative"));
        c.add(bad("sc: egress proxy with REGISTRY_ONLY", sc("""
                outboundTrafficPolicy:
                  mode: REGISTRY_ONLY
                  egressProxy: {host: egress.example.com, port: {number: 3128}}"""),
                "spec.outboundTrafficPolicy.egressProxy", "allow_any"));
        c.add(bad("sc: egress proxy without port", sc("""
                outboundTrafficPolicy:
                  mode: ALLOW_ANY
                  egressProxy: {host: egress.example.com}"""),
                "spec.outboundTrafficPolicy.egressProxy.port", "port"));
        c.add(bad("sc: workload selector wildcard", sc("""
                workloadSelector: {labels: {app: "*"}}
                egress:
                - hosts: ["./*"]"""), "spec.workloadSelector.labels", "wildcard"));
    }

    static void workloadEntries(List<Arguments> c) {
        c.add(ok("we: IP with ports", we("""
                address: 10.0.0.5
                ports: {http: 8080, grpc: 9090}
                labels: {app: details, version: v1}
                serviceAccount: details
                locality: us-east1/us-east1-b
                weight: 10""")));
        c.add(ok("we: DNS address", we("address: vm1.example.com")));
        c.add(ok("we: unix socket", we("address: unix:///var/run/app.sock")));
        c.add(ok("we: network without address", we("network: remote-net")));
        c.add(ok("we: IPv6", we("address: \"2001:db8::1\"")));

        c.add(bad("we: no address", we("labels: {app: a}"), "spec.address", "required"));
        c.add(bad("we: IPv4 with leading zeros", we("address: 010.0.0.1"), "spec.address", "fqdn or ip"));
        c.add(bad("we: invalid address", we("address: \"not valid!\""), "spec.address", "fqdn"));
        c.add(bad("we: relative unix path", we("address: unix://relative/sock"), "spec.address", "absolute"));
        c.add(bad("we: unix with ports", we("""
                address: unix:///var/run/app.sock
                ports: {http: 80}"""), "spec.ports", "unix"));
        c.add(bad("we: port number", we("""
                address: 10.0.0.5
                ports: {http: 0}"""), "spec.ports[http]", "range"));
        c.add(bad("we: port name", we("""
                address: 10.0.0.5
                ports: {HTTP_1: 80}"""), "spec.ports[HTTP_1]", "port name"));
        c.add(bad("we: labels", we("""
                address: 10.0.0.5
                labels: {"-bad": a}"""), "spec.labels", "label"));
    }

    static void workloadGroups(List<Arguments> c) {
        c.add(ok("wg: template and http probe", wg("""
                metadata:
                  labels: {app: reviews}
                template:
                  ports: {http: 9080}
                  serviceAccount: reviews
                probe:
                  initialDelaySeconds: 5
                  periodSeconds: 4
                  httpGet: {path: /ready, port: 9080, scheme: HTTPS, httpHeaders: [{name: x-probe, value: "1"}]}""")));
        c.add(ok("wg: exec probe", wg("""
                template: {serviceAccount: reviews}
                probe:
                  exec: {command: [cat, /tmp/ready]}""")));

        c.add(bad("wg: no template", wg("metadata: {labels: {app: a}}"), "spec.template", "required"));
        c.add(bad("wg: probe without check", wg("""
                template: {}
                probe: {periodSeconds: 5}"""), "spec.probe", "one of"));
        c.add(bad("wg: probe port", wg("""
                template: {}
                probe: {httpGet: {path: /ready}}"""), "spec.probe.httpGet.port", "range"));
        c.add(bad("wg: probe scheme", wg("""
                template: {}
                probe: {httpGet: {port: 80, scheme: FTP}}"""), "spec.probe.httpGet.scheme", "http"));
        c.add(bad("wg: probe header name", wg("""
                template: {}
                probe: {httpGet: {port: 80, httpHeaders: [{name: "x y", value: a}]}}"""),
                "spec.probe.httpGet.httpHeaders[0].name", "header name"));
        c.add(bad("wg: negative period", wg("""
                template: {}
                probe: {periodSeconds: -1, tcpSocket: {port: 80}}"""), "spec.probe.periodSeconds", "negative"));
        c.add(bad("wg: exec without command", wg("""
                template: {}
                probe: {exec: {}}"""), "spec.probe.exec.command", "required"));
        c.add(bad("wg: metadata labels", wg("""
                metadata: {labels: {app: "a b"}}
                template: {}"""), "spec.metadata.labels", "label"));
    }

    static void envoyFilters(List<Arguments> c) {
        c.add(ok("ef: lua filter before router", ef("""
                workloadSelector:
                  labels: {app: reviews}
                configPatches:
                - applyTo: HTTP_FILTER
                  match:
                    context: SIDECAR_INBOUND
                    listener:
                      portNumber: 8080
                      filterChain:
                        filter:
                          name: envoy.filters.network.http_connection_manager
                          subFilter: {name: envoy.filters.http.router}
                  patch:
                    operation: INSERT_BEFORE
                    value:
                      name: envoy.lua
                      typed_config:
                        "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
                        inlineCode: "function envoy_on_request(h) end\"""")));
        c.add(ok("ef: cluster merge and remove", ef("""
                configPatches:
                - applyTo: CLUSTER
                  match:
                    context: SIDECAR_OUTBOUND
                    cluster: {service: reviews.default.svc.cluster.local}
                  patch:
                    operation: MERGE
                    value: {connect_timeout: 5s}
                - applyTo: NETWORK_FILTER
                  match:
                    listener:
                      filterChain:
                        filter: {name: envoy.filters.network.tcp_proxy}
                  patch: {operation: REMOVE}""")));
        c.add(ok("ef: targetRefs to a gateway", ef("""
                targetRefs:
                - {group: gateway.networking.k8s.io, kind: Gateway, name: ingress}
                configPatches:
                - applyTo: LISTENER
                  patch:
                    operation: MERGE
                    value: {per_connection_buffer_limit_bytes: 1024}""")));
        // istiod leaves WAYPOINT patches unvalidated (a TODO in its envoyfilter validation)
        c.add(ok("ef: waypoint patch with a waypoint match (Istio 1.30)", ef("""
                configPatches:
                - applyTo: HTTP_FILTER
                  match:
                    context: WAYPOINT
                    waypoint:
                      portNumber: 8080
                      filter: {name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}
                  patch:
                    operation: INSERT_BEFORE
                    value: {name: envoy.filters.http.buffer}""")));
        c.add(ok("ef: virtual host matched by domain name", ef("""
                configPatches:
                - applyTo: VIRTUAL_HOST
                  match:
                    routeConfiguration:
                      vhost: {domainName: reviews.default.svc.cluster.local}
                  patch: {operation: MERGE, value: {include_request_attempt_count: true}}""")));

        c.add(bad("ef: missing applyTo", ef("""
                configPatches:
                - patch: {operation: MERGE, value: {a: b}}"""), "spec.configPatches[0].applyTo", "applyto"));
        c.add(bad("ef: missing patch", ef("""
                configPatches:
                - applyTo: CLUSTER"""), "spec.configPatches[0].patch", "required"));
        c.add(bad("ef: missing operation", ef("""
                configPatches:
                - applyTo: CLUSTER
                  patch: {value: {a: b}}"""), "spec.configPatches[0].patch.operation", "operation"));
        c.add(bad("ef: missing value", ef("""
                configPatches:
                - applyTo: CLUSTER
                  patch: {operation: MERGE}"""), "spec.configPatches[0].patch.value", "value"));
        c.add(bad("ef: cluster patch with listener match", ef("""
                configPatches:
                - applyTo: CLUSTER
                  match:
                    listener: {portNumber: 80}
                  patch: {operation: MERGE, value: {a: b}}"""), "spec.configPatches[0].match", "cluster"));
        c.add(bad("ef: route patch with cluster match", ef("""
                configPatches:
                - applyTo: ROUTE_CONFIGURATION
                  match:
                    cluster: {service: a.example.com}
                  patch: {operation: MERGE, value: {a: b}}"""), "spec.configPatches[0].match", "routeconfiguration"));
        c.add(bad("ef: listener patch with route match", ef("""
                configPatches:
                - applyTo: HTTP_FILTER
                  match:
                    routeConfiguration: {portNumber: 80}
                  patch: {operation: MERGE, value: {a: b}}"""), "spec.configPatches[0].match", "listener"));
        c.add(bad("ef: subFilter with NETWORK_FILTER", ef("""
                configPatches:
                - applyTo: NETWORK_FILTER
                  match:
                    listener:
                      filterChain:
                        filter:
                          name: envoy.filters.network.http_connection_manager
                          subFilter: {name: envoy.filters.http.router}
                  patch: {operation: MERGE, value: {a: b}}"""),
                "spec.configPatches[0].match.listener.filterChain.filter.subFilter", "http_filter"));
        c.add(bad("ef: subFilter of a non-HCM filter", ef("""
                configPatches:
                - applyTo: HTTP_FILTER
                  match:
                    listener:
                      filterChain:
                        filter:
                          name: envoy.filters.network.tcp_proxy
                          subFilter: {name: envoy.filters.http.router}
                  patch: {operation: INSERT_BEFORE, value: {name: x}}"""),
                "spec.configPatches[0].match.listener.filterChain.filter.subFilter", "filter match"));
        c.add(bad("ef: filter match without name", ef("""
                configPatches:
                - applyTo: NETWORK_FILTER
                  match:
                    listener:
                      filterChain:
                        filter: {subFilter: {name: a}}
                  patch: {operation: REMOVE}"""), "spec.configPatches[0].match.listener.filterChain.filter.name", "name"));
        c.add(bad("ef: proxyVersion regex", ef("""
                configPatches:
                - applyTo: CLUSTER
                  match:
                    proxy: {proxyVersion: "^1\\\\.2("}
                  patch: {operation: MERGE, value: {a: b}}"""), "spec.configPatches[0].match.proxy.proxyVersion", "regex"));
        c.add(bad("ef: workloadSelector and targetRefs", ef("""
                workloadSelector: {labels: {app: a}}
                targetRefs:
                - {kind: Service, name: a}
                configPatches:
                - applyTo: CLUSTER
                  patch: {operation: REMOVE}"""), "spec.targetRefs", "only one"));
        c.add(bad("ef: targetRef kind", ef("""
                targetRefs:
                - {group: apps, kind: Deployment, name: a}
                configPatches:
                - applyTo: CLUSTER
                  patch: {operation: REMOVE}"""), "spec.targetRefs[0].kind", "targetref"));
        c.add(bad("ef: targetRef namespace", ef("""
                targetRefs:
                - {kind: Service, name: a, namespace: other}
                configPatches:
                - applyTo: CLUSTER
                  patch: {operation: REMOVE}"""), "spec.targetRefs[0].namespace", "namespace"));
    }

    static void proxyConfigs(List<Arguments> c) {
        c.add(ok("pc: concurrency and selector", pc("""
                selector:
                  matchLabels: {app: ratings}
                concurrency: 2
                environmentVariables: {ISTIO_META_DNS_CAPTURE: "true"}
                image: {imageType: distroless}""")));

        c.add(bad("pc: negative concurrency", pc("concurrency: -1"), "spec.concurrency", "concurrency"));
        c.add(bad("pc: selector wildcard", pc("selector: {matchLabels: {app: \"rat*\"}}"),
                "spec.selector.matchLabels", "wildcard"));
        c.add(bad("pc: selector empty key", pc("selector: {matchLabels: {\"\": a}}"),
                "spec.selector.matchLabels", "empty"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void validation(String name, String yaml, String path, String word) {
        ConfigParser.Result r = PARSER.parse("test.yaml", yaml);
        assertFalse(r.unreadable(), name);
        if (path == null) {
            assertEquals(List.of(), r.errors(), name);
            assertEquals(1, r.configs().size(), name);
            return;
        }
        assertEquals(List.of(), r.configs(), name + ": should be rejected");
        assertFalse(r.errors().isEmpty(), name);
        for (DocumentError e : r.errors()) {
            assertEquals(path, e.path(), name + ": unexpected error " + e);
        }
        assertTrue(r.errors().stream().anyMatch(e -> e.reason().toLowerCase(Locale.ROOT).contains(word.toLowerCase(Locale.ROOT))),
                name + ": no reason mentions \"" + word + "\" in " + r.errors());
        assertTrue(r.errors().get(0).line() > 0, name + ": error without a line");
    }

    // ---- warnings: accepted, but istiod would warn ------------------------------------------------

    public static Stream<Arguments> warnings() {
        return Stream.of(
                Arguments.of("gw: httpsRedirect on https", gwServer("""
                        port: {number: 443, name: https, protocol: HTTPS}
                        hosts: ["*"]
                        tls: {mode: SIMPLE, credentialName: cert, httpsRedirect: true}"""),
                        "spec.servers[0].tls.httpsRedirect", "http servers"),
                Arguments.of("gw: certificates with PASSTHROUGH", gwServer("""
                        port: {number: 443, name: tls, protocol: TLS}
                        hosts: ["*"]
                        tls: {mode: PASSTHROUGH, credentialName: cert}"""), "spec.servers[0].tls.mode", "ignored"),
                Arguments.of("gw: selector label", gw("""
                        selector: {"bad key!": x}
                        servers:
                        - port: {number: 80, name: http, protocol: HTTP}
                          hosts: ["*"]"""), "spec.selector", "label"),
                Arguments.of("vs: duplicate match", vs("""
                        hosts: [reviews]
                        http:
                        - match:
                          - uri: {prefix: /a}
                          route:
                          - destination: {host: reviews, subset: v1}
                        - match:
                          - uri: {prefix: /a}
                            name: again
                          route:
                          - destination: {host: reviews, subset: v2}"""), "spec.http[1].match[0]", "rule 0"),
                Arguments.of("vs: rule after a catch-all", vs("""
                        hosts: [reviews]
                        http:
                        - route:
                          - destination: {host: reviews, subset: v1}
                        - route:
                          - destination: {host: reviews, subset: v2}"""), "spec.http[1]", "not used"),
                Arguments.of("vs: abort without error type", vsHttp("fault: {abort: {percentage: {value: 1}}}"),
                        "spec.http[0].fault.abort", "error type"),
                Arguments.of("vs: delay without fixedDelay", vsHttp("fault: {delay: {percentage: {value: 1}}}"),
                        "spec.http[0].fault.delay.fixedDelay", "no delay"),
                Arguments.of("vs: legacy gateway name", vs("""
                        hosts: [a.example.com]
                        gateways: [gw.istio-system]
                        http:
                        - route:
                          - destination: {host: a}"""), "spec.gateways[0]", "istio-system/gw"),
                Arguments.of("vs: IP as SNI", vs("""
                        hosts: ["*.example.com"]
                        tls:
                        - match:
                          - sniHosts: [10.0.0.1]
                          route:
                          - destination: {host: a.example.com}"""), "spec.tls[0].match[0].sniHosts[0]", "sni"),
                Arguments.of("dr: duplicate port level settings", drPolicy("""
                        portLevelSettings:
                        - port: {number: 80}
                          tls: {mode: SIMPLE}
                        - port: {number: 80}
                          tls: {mode: DISABLE}"""), "spec.trafficPolicy.portLevelSettings[1].port.number", "first"),
                Arguments.of("dr: consistent hash without key", drPolicy("""
                        loadBalancer: {consistentHash: {ringHash: {minimumRingSize: 1024}}}"""),
                        "spec.trafficPolicy.loadBalancer.consistentHash", "hash key"),
                Arguments.of("dr: failover without outlier detection", drPolicy("""
                        loadBalancer:
                          localityLbSetting:
                            failover:
                            - {from: us-east, to: eu-west}"""), "spec.trafficPolicy.loadBalancer.localityLbSetting",
                        "outlier"),
                Arguments.of("se: TCP port without addresses", se("""
                        hosts: [db.example.com]
                        ports:
                        - {number: 5432, name: pg, protocol: TCP}
                        resolution: DNS"""), "spec.ports[0].protocol", "addresses"),
                Arguments.of("se: partial wildcard", se("""
                        hosts: ["*foo.example.com"]
                        resolution: NONE"""), "spec.hosts[0]", "partial"),
                Arguments.of("sc: duplicated egress host", sc("""
                        egress:
                        - hosts: ["ns1/*", ns1/a.example.com]"""), "spec.egress[0].hosts[1]", "duplicated"),
                Arguments.of("sc: empty workload selector", sc("""
                        workloadSelector: {labels: {}}
                        egress:
                        - hosts: ["./*"]"""), "spec.workloadSelector.labels", "every workload"),
                Arguments.of("we: locality", we("""
                        address: 10.0.0.1
                        locality: us-east1//b"""), "spec.locality", "region"),
                Arguments.of("we: network without address", we("network: net1"), "spec.address", "network"),
                Arguments.of("wg: template address", wg("template: {address: 10.0.0.1}"), "spec.template.address", "ignored"),
                Arguments.of("ef: REPLACE on a cluster", ef("""
                        configPatches:
                        - applyTo: CLUSTER
                          patch: {operation: REPLACE, value: {name: a}}"""), "spec.configPatches[0].patch.operation",
                        "no effect"),
                Arguments.of("ef: ADD on a route configuration", ef("""
                        configPatches:
                        - applyTo: ROUTE_CONFIGURATION
                          patch: {operation: ADD, value: {name: a}}"""), "spec.configPatches[0].patch.operation",
                        "no effect"),
                Arguments.of("ef: deprecated filter name", ef("""
                        configPatches:
                        - applyTo: HTTP_FILTER
                          match:
                            listener:
                              filterChain:
                                filter:
                                  name: envoy.http_connection_manager
                                  subFilter: {name: envoy.router}
                          patch: {operation: INSERT_BEFORE, value: {name: a}}"""),
                        "spec.configPatches[0].match.listener.filterChain.filter.subFilter.name", "deprecated"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("warnings")
    void warning(String name, String yaml, String path, String word) {
        ConfigParser.Result r = PARSER.parse("test.yaml", yaml);
        assertEquals(List.of(), r.errors(), name + ": a warning must not reject the document");
        assertEquals(1, r.configs().size(), name);
        Config config = r.configs().get(0);
        Validation v = new Validation();
        Schemas.PILOT.forKind(config.gvk().kind()).orElseThrow().validator().validate(config, v);
        List<ValidationResult.Issue> warnings = v.result().warnings();
        assertTrue(warnings.stream().anyMatch(w -> w.path().equals(path)
                        && w.message().toLowerCase(Locale.ROOT).contains(word.toLowerCase(Locale.ROOT))),
                name + ": no warning at " + path + " mentioning \"" + word + "\" in " + warnings);
    }

    // ---- real Istio config must be accepted -------------------------------------------------------

    @Test
    void bookinfoSamplesAreValid() throws IOException {
        Path dir = Path.of(System.getProperty("meshpilot.home", "."), "src", "test", "resources", "golden", "samples");
        assertAllValid(dir, false);
    }

    @Test
    void embeddedConfigIsValid() throws IOException {
        assertAllValid(Path.of(System.getProperty("meshpilot.home", "."), "etc", "config"), true);
    }

    private static void assertAllValid(Path dir, boolean recursive) throws IOException {
        List<Path> files;
        try (Stream<Path> s = recursive ? Files.walk(dir) : Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "no YAML in " + dir);
        int loaded = 0;
        for (Path f : files) {
            ConfigParser.Result r = PARSER.parse(f.toString(), Files.readString(f));
            assertFalse(r.unreadable(), f.toString());
            assertEquals(List.of(), r.errors(), f.toString());
            loaded += r.configs().size();
        }
        assertTrue(loaded > 0, "no Istio config in " + dir);
    }

    @Test
    void enoughCases() {
        long invalid = cases().filter(a -> a.get()[2] != null).count();
        long valid = cases().filter(a -> a.get()[2] == null).count();
        assertTrue(invalid + valid >= 110, "cases: " + (invalid + valid));
        assertTrue(valid >= 30 && invalid >= 80, "valid " + valid + ", invalid " + invalid);
    }
}
