package io.meshpilot.networking.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.rbac.v3.Principal;
import io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushMetric;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.MeshFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * AuthorizationPolicy -> RBAC, one row per field and action: the policies of each row are
 * applied through the real validating store, and the filters built for the workload
 * {@code httpbin} (labels app=httpbin, version=v1) in namespace {@code foo} are compared, as
 * protobuf JSON trees, with {@code src/test/resources/authz/<row>.json}. The expectations
 * follow istiod's builder (pilot/pkg/security/authz/builder, whose testdata the generator was
 * checked against: same policy names, matcher shapes, filter order and stat prefixes).
 * <p>
 * After an intended change: {@code -Dauthz.update=true}, then review the JSON diff.
 */
class AuthorizationFiltersTest {
    static final Path EXPECTED = Path.of(System.getProperty("meshpilot.home", "."), "src/test/resources/authz");
    static final boolean UPDATE = Boolean.getBoolean("authz.update");
    static final Proxy HTTPBIN = proxy("foo", Map.of("app", "httpbin", "version", "v1"));

    /** Which filter list of the workload a row checks. */
    enum Output { HTTP, TCP, CUSTOM_HTTP, CUSTOM_TCP, GRPC }

    record Row(String name, Output output, String mesh, String policies) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final String EXT_AUTHZ_SERVICE = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: ext-authz, namespace: foo}
            spec:
              hosts: [ext-authz.foo.svc.cluster.local]
              ports: [{number: 9000, name: grpc, protocol: GRPC}, {number: 8000, name: http, protocol: HTTP}]
              resolution: DNS
            """;

    static Stream<Row> rows() {
        return Stream.of(
                new Row("allow-sources", Output.HTTP, "", policy("ALLOW", """
                          - from:
                            - source:
                                principals: [cluster.local/ns/foo/sa/sleep, "cluster.local/ns/bar/*", "*/sa/admin", "*"]
                                notPrincipals: [cluster.local/ns/foo/sa/blocked]
                                requestPrincipals: ["https://issuer.example.com/alice", "issuer-a/*", "*/bob"]
                                notRequestPrincipals: ["*"]
                                namespaces: [foo, "team-*", "*-prod"]
                                notNamespaces: [kube-system]
                                ipBlocks: [10.0.0.1, 10.1.0.0/16, "2001:db8::/32"]
                                notIpBlocks: [10.1.2.0/24]
                                remoteIpBlocks: [192.0.2.7, "::ffff:198.51.100.1"]
                                notRemoteIpBlocks: [192.0.2.0/28]
                            - source:
                                serviceAccounts: [sleep, other/client]
                                notServiceAccounts: [foo/legacy]
                        """)),
                new Row("allow-operations", Output.HTTP, "", policy("ALLOW", """
                          - to:
                            - operation:
                                hosts: [httpbin.example.com, "*.example.org", "internal.*", "*"]
                                notHosts: [admin.example.com]
                                ports: ["8000"]
                                notPorts: ["9090"]
                                methods: [GET, "P*", "*"]
                                notMethods: [DELETE]
                                paths: [/headers, "/status/*", "*.png", "*", "/api/{*}/items", "/files/{**}"]
                                notPaths: [/admin, "/internal/{**}"]
                            - operation:
                                methods: [HEAD]
                        """)),
                new Row("allow-conditions", Output.HTTP, "", policy("ALLOW", """
                          - when:
                            - key: request.headers[x-user]
                              values: [alice, "adm-*", "*-svc", "*"]
                              notValues: [mallory]
                            - key: source.ip
                              values: [10.0.0.0/8]
                              notValues: [10.9.9.9]
                            - key: remote.ip
                              values: [203.0.113.9]
                            - key: source.namespace
                              values: ["foo", "t*m"]
                            - key: source.principal
                              values: [cluster.local/ns/foo/sa/sleep]
                            - key: request.auth.principal
                              values: ["https://accounts.example.com/u1"]
                            - key: request.auth.audiences
                              values: [httpbin, "api-*"]
                            - key: request.auth.presenter
                              values: [client-1]
                            - key: request.auth.claims[groups]
                              values: [admins]
                              notValues: [guests]
                            - key: request.auth.claims[realm][role]
                              values: [owner]
                            - key: destination.ip
                              values: [10.10.0.5]
                            - key: destination.port
                              values: ["8000", "8443"]
                            - key: connection.sni
                              values: ["*.example.com"]
                            - key: experimental.envoy.filters.network.mysql_proxy[db.table]
                              values: ["[update]", "select"]
                        """)),
                new Row("audit-deny-allow-order", Output.HTTP, "",
                        policy("AUDIT", "  - to: [{operation: {paths: [/audited]}}]\n", "audit")
                                + policy("DENY", "  - when: [{key: \"request.headers[x-block]\", values: [\"true\"]}]\n",
                                        "deny")
                                + policy("ALLOW", "  - to: [{operation: {methods: [GET]}}]\n", "allow")),
                new Row("allow-without-rules-denies-all", Output.HTTP, "", """
                        apiVersion: security.istio.io/v1
                        kind: AuthorizationPolicy
                        metadata: {name: allow-nothing, namespace: foo}
                        spec: {}
                        """),
                new Row("dry-run", Output.HTTP, "", dryRun(policy("DENY", "  - to: [{operation: {methods: [POST]}}]\n",
                        "deny-post")) + dryRun(policy("ALLOW", "  - to: [{operation: {paths: [/ip]}}]\n",
                        "allow-ip")) + policy("ALLOW", "  - to: [{operation: {paths: [/headers]}}]\n", "allow-headers")),
                new Row("tcp-http-only-fields", Output.TCP, "",
                        policy("ALLOW", """
                                  - to: [{operation: {ports: ["3306"]}}]
                                  - to: [{operation: {ports: ["3307"], paths: [/x]}}]
                                  - from: [{source: {requestPrincipals: ["*"]}}]
                                """, "allow")
                                + policy("DENY", """
                                  - to: [{operation: {ports: ["9000"], methods: [GET]}}]
                                  - when: [{key: "request.headers[x]", values: ["y"]}]
                                """, "deny")),
                new Row("trust-domain-aliases", Output.HTTP, "trustDomain: new-td\ntrustDomainAliases: [old-td]\n",
                        policy("ALLOW", """
                                  - from:
                                    - source:
                                        principals: [cluster.local/ns/foo/sa/sleep, old-td/ns/foo/sa/web, other-td/ns/foo/sa/x, "*/ns/foo/sa/any"]
                                """)),
                new Row("custom-http-provider", Output.CUSTOM_HTTP, """
                        extensionProviders:
                        - name: ext-http
                          envoyExtAuthzHttp:
                            service: ext-authz.foo.svc.cluster.local
                            port: 8000
                            timeout: 2s
                            pathPrefix: /check
                            statusOnError: "503"
                            includeRequestHeadersInCheck: [authorization, "x-ext-*"]
                            headersToUpstreamOnAllow: [x-user]
                            headersToDownstreamOnDeny: ["*-reason"]
                        """, EXT_AUTHZ_SERVICE + custom("ext-http", "  - to: [{operation: {paths: [\"/private/*\"]}}]\n")),
                new Row("custom-grpc-provider-tcp", Output.CUSTOM_TCP, """
                        extensionProviders:
                        - name: ext-grpc
                          envoyExtAuthzGrpc: {service: foo/ext-authz.foo.svc.cluster.local, port: 9000, failOpen: true}
                        """, EXT_AUTHZ_SERVICE + custom("ext-grpc", "  - to: [{operation: {ports: [\"5432\"]}}]\n")),
                new Row("custom-unknown-provider-denies", Output.CUSTOM_HTTP, "",
                        custom("missing", "  - to: [{operation: {paths: [/x]}}]\n")),
                new Row("grpc-server", Output.GRPC, "",
                        policy("DENY", "  - to: [{operation: {paths: [/echo.Echo/Forbidden]}}]\n", "deny")
                                + policy("ALLOW", """
                                  - to: [{operation: {paths: ["/echo.Echo/*"]}}]
                                  - to: [{operation: {paths: ["/api/{*}/x"]}}]
                                  - when: [{key: "request.headers[grpc-timeout]", values: ["1S"]}]
                                """, "allow")),
                // gRPC servers: a rule-less ALLOW policy and an ALLOW whose only rule gRPC cannot take both deny all
                new Row("grpc-server-allow-nothing", Output.GRPC, "", """
                        apiVersion: security.istio.io/v1
                        kind: AuthorizationPolicy
                        metadata: {name: allow-nothing, namespace: foo}
                        spec: {}
                        ---
                        """ + policy("ALLOW", "  - to: [{operation: {paths: [\"/{**}/x\"]}}]\n", "template-only")));
    }

    static String policy(String action, String rules) {
        return policy(action, rules, action.toLowerCase());
    }

    static String policy(String action, String rules, String name) {
        return """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: %s, namespace: foo}
                spec:
                  selector: {matchLabels: {app: httpbin}}
                  action: %s
                  rules:
                %s---
                """.formatted(name, action, rules);
    }

    static String custom(String provider, String rules) {
        return """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: custom, namespace: foo}
                spec:
                  action: CUSTOM
                  provider: {name: %s}
                  rules:
                %s---
                """.formatted(provider, rules);
    }

    static String dryRun(String policy) {
        return policy.replaceFirst("metadata: \\{name: ([^,]+), namespace: foo}",
                "metadata: {name: $1, namespace: foo, annotations: {istio.io/dry-run: \"true\"}}");
    }

    static Proxy proxy(String namespace, Map<String, String> labels) {
        return new Proxy("sidecar~10.0.0.9~w." + namespace + "~" + namespace + ".svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.0.0.9"), "w." + namespace, namespace + ".svc.cluster.local", namespace, labels,
                "Kubernetes", "1.24.0", "", "", "", Locality.NONE);
    }

    static AuthorizationFilters filters(String meshYaml, String yaml, Proxy proxy) throws Exception {
        try (MeshFixture f = new MeshFixture()) {
            f.apply(yaml);
            MeshConfig mesh = new MeshConfigLoader().parseMesh("mesh", meshYaml);
            return AuthorizationFilters.forProxy(proxy, f.push(mesh));
        }
    }

    static JsonArray json(List<? extends Message> filters) throws InvalidProtocolBufferException {
        JsonFormat.Printer printer = JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY);
        JsonArray out = new JsonArray();
        for (Message m : filters) {
            out.add(JsonParser.parseString(printer.print(m)));
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void generatesIstiodsRbac(Row row) throws Exception {
        AuthorizationFilters f = filters(row.mesh(), row.policies(), HTTPBIN);
        List<? extends Message> got = switch (row.output()) {
            case HTTP -> f.http();
            case TCP -> f.tcp();
            case CUSTOM_HTTP -> f.customHttp();
            case CUSTOM_TCP -> f.customTcp();
            case GRPC -> f.grpcServer();
        };
        JsonElement actual = json(got);
        Path file = EXPECTED.resolve(row.name() + ".json");
        if (UPDATE) {
            Files.writeString(file, new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create()
                    .toJson(actual) + "\n");
        }
        JsonElement expected = JsonParser.parseString(Files.readString(file));
        assertEquals(expected, actual, row.name() + ": generated RBAC differs from " + file);
    }

    /** Names of the RBAC policies (across rules and shadow rules) of the HTTP filters for {@code proxy}. */
    static List<String> policyNames(String yaml, Proxy proxy) throws Exception {
        List<String> names = new ArrayList<>();
        for (HttpFilter h : filters("", yaml, proxy).http()) {
            var rbac = h.getTypedConfig().unpack(RBAC.class);
            names.addAll(new TreeSet<>(rbac.getRules().getPoliciesMap().keySet()));
        }
        return names;
    }

    @Test
    void selectsPoliciesAsIstiod() throws Exception {
        String yaml = """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: mesh-wide, namespace: istio-system}
                spec: {action: DENY, rules: [{to: [{operation: {paths: [/m]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: root-selector, namespace: istio-system}
                spec: {action: DENY, selector: {matchLabels: {app: httpbin}}, rules: [{to: [{operation: {paths: [/r]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: ns-wide, namespace: foo}
                spec: {action: DENY, rules: [{to: [{operation: {paths: [/n]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: other-app, namespace: foo}
                spec: {action: DENY, selector: {matchLabels: {app: other}}, rules: [{to: [{operation: {paths: [/o]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: other-ns, namespace: bar}
                spec: {action: DENY, rules: [{to: [{operation: {paths: [/b]}}]}]}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: gateway-ref, namespace: foo}
                spec:
                  action: DENY
                  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: web}]
                  rules: [{to: [{operation: {paths: [/g]}}]}]
                """;
        // the root namespace's and the workload's; a selector must match; targetRefs never apply to sidecars
        assertEquals(List.of("ns[foo]-policy[ns-wide]-rule[0]", "ns[istio-system]-policy[mesh-wide]-rule[0]",
                        "ns[istio-system]-policy[root-selector]-rule[0]"), policyNames(yaml, HTTPBIN));
        // a Kubernetes Gateway deployment takes the policies whose targetRefs name it; policies without
        // references still apply by selector (root-selector does not select it)
        Proxy gateway = proxy("foo", Map.of("gateway.networking.k8s.io/gateway-name", "web"));
        assertEquals(List.of("ns[foo]-policy[gateway-ref]-rule[0]", "ns[foo]-policy[ns-wide]-rule[0]",
                "ns[istio-system]-policy[mesh-wide]-rule[0]"), policyNames(yaml, gateway));
        assertTrue(filters("", yaml, proxy("baz", Map.of())).http().size() == 1, "only the mesh-wide policy in baz");
        assertTrue(filters("", "", HTTPBIN).isEmpty());
    }

    /**
     * istiod's ExpandTrustDomainAliases: a trust domain naming the mesh's trust domain or one of
     * its aliases stands for all of them; any other is matched as written.
     */
    @Test
    void trustDomainsOfTheMeshMatchEveryAlias() throws Exception {
        AuthorizationFilters f = filters("trustDomain: new-td\ntrustDomainAliases: [old-td]\n", policy("ALLOW", """
                  - from:
                    - source:
                        trustDomains: [old-td, partner.example]
                        notTrustDomains: [new-td]
                """), HTTPBIN);
        RBAC rbac = f.http().get(0).getTypedConfig().unpack(RBAC.class);
        Principal source = rbac.getRules().getPoliciesMap().get("ns[foo]-policy[allow]-rule[0]").getPrincipals(0);
        assertEquals(List.of("spiffe://new-td/", "spiffe://old-td/", "spiffe://partner.example/"),
                prefixes(source.getAndIds().getIds(0)));
        assertEquals(List.of("spiffe://new-td/", "spiffe://old-td/"), prefixes(source.getAndIds().getIds(1).getNotId()));
    }

    /** The peer identity prefixes an OR of authenticated principals matches. */
    static List<String> prefixes(Principal or) {
        return or.getOrIds().getIdsList().stream().map(p -> p.getAuthenticated().getPrincipalName().getPrefix()).toList();
    }

    @Test
    void whatCannotApplyIsListedInPushStatus() throws Exception {
        try (MeshFixture f = new MeshFixture()) {
            f.apply(custom("missing", "  - to: [{operation: {paths: [/x]}}]\n") + """
                    apiVersion: security.istio.io/v1
                    kind: AuthorizationPolicy
                    metadata: {name: for-waypoint, namespace: foo}
                    spec:
                      targetRefs: [{kind: Service, group: "", name: httpbin}]
                      rules: [{to: [{operation: {methods: [GET]}}]}]
                    """);
            var diagnostics = f.push().diagnostics();
            assertEquals(List.of("foo/custom"), List.copyOf(diagnostics.entries(
                    PushMetric.AUTHZ_CUSTOM_PROVIDER_UNKNOWN).keySet()));
            assertEquals(List.of("foo/for-waypoint|Service/httpbin"), List.copyOf(diagnostics.entries(
                    PushMetric.AUTHZ_TARGET_UNSUPPORTED).keySet()), "without ambient no waypoint takes it");
            assertEquals(List.of(), List.copyOf(f.pushWithWaypoints().diagnostics().entries(
                    PushMetric.AUTHZ_TARGET_UNSUPPORTED).keySet()), "with waypoints served, a Service attaches to its waypoint");
        }
    }
}
