package io.meshpilot.networking.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.Gson;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.networking.EnvoyTypes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

/**
 * istiod's own expectations: every case of Istio's authorization builder tables
 * (TestGenerator_GenerateHTTP and _GenerateTCP, pilot/pkg/security/authz/builder) whose
 * output plain Envoy reads - the policies of the case's input applied through the real
 * validating store to the workload httpbin (app=httpbin, version=v1) in foo, with the case's
 * mesh config (trust domain bundle, extension providers), and the filters built compared as
 * protos with istiod's golden files (src/test/resources/authz/istio-builder, see ORIGIN there).
 */
class IstioAuthzBuilderGoldenTest {
    static final Path DATA = Path.of(System.getProperty("meshpilot.home", "."), "src/test/resources/authz/istio-builder");

    /** Which filter list a case checks: the HTTP filters, or the network filters of a TCP chain. */
    enum Chain { HTTP, TCP }

    record Case(String name, Chain chain, String mesh, String input, List<String> want) {
        @Override
        public String toString() {
            return chain.name().toLowerCase() + "/" + name;
        }
    }

    /** The ext_authz service the builder test's push context registers. */
    static final String EXT_AUTHZ_SERVICE = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: my-custom-ext-authz, namespace: foo}
            spec:
              hosts: [my-custom-ext-authz.foo.svc.cluster.local]
              ports: [{number: 9000, name: grpc, protocol: GRPC}]
              resolution: DNS
            ---
            """;
    static final String GRPC_NO_NAMESPACE = """
            extensionProviders:
            - name: default
              envoyExtAuthzGrpc: {service: my-custom-ext-authz.foo.svc.cluster.local, port: 9000, failOpen: true,
                                  statusOnError: "403"}
            """;
    static final String GRPC = """
            extensionProviders:
            - name: default
              envoyExtAuthzGrpc: {service: foo/my-custom-ext-authz.foo.svc.cluster.local, port: 9000, timeout: 0.002s,
                                  failOpen: true, statusOnError: "403",
                                  includeRequestBodyInCheck: {maxRequestBytes: 4096, allowPartialMessage: true}}
            """;
    static final String HTTP = """
            extensionProviders:
            - name: default
              envoyExtAuthzHttp:
                service: foo/my-custom-ext-authz.foo.svc.cluster.local
                port: 9000
                timeout: 10s
                failOpen: true
                statusOnError: "403"
                pathPrefix: /check
                includeRequestHeadersInCheck: [x-custom-id, "x-prefix-*", "*-suffix"]
                includeHeadersInCheck: [should-not-include-when-IncludeRequestHeadersInCheck-is-set]
                includeAdditionalHeadersInCheck: {x-header-1: value-1, x-header-2: value-2}
                includeRequestBodyInCheck: {maxRequestBytes: 2048, allowPartialMessage: true, packAsBytes: true}
                headersToUpstreamOnAllow: [Authorization, "x-prefix-*", "*-suffix"]
                headersToDownstreamOnDeny: [Set-cookie, "x-prefix-*", "*-suffix"]
                headersToDownstreamOnAllow: [Set-cookie, "x-prefix-*", "*-suffix"]
            """;
    static final String INVALID = """
            extensionProviders:
            - name: default
              envoyExtAuthzHttp: {service: foo/my-custom-ext-authz, port: 999999, pathPrefix: check, statusOnError: "999"}
            """;

    static Stream<Case> cases() {
        return Stream.of(
                http("allow-empty-rule", ""),
                http("allow-full-rule", ""),
                http("allow-nil-rule", ""),
                http("allow-path", ""),
                http("audit-full-rule", ""),
                new Case("custom-grpc-provider-no-namespace", Chain.HTTP, GRPC_NO_NAMESPACE, "custom-simple-http-in.yaml",
                        List.of("custom-grpc-provider-no-namespace-out1.yaml", "custom-grpc-provider-no-namespace-out2.yaml")),
                new Case("custom-grpc-provider", Chain.HTTP, GRPC, "custom-simple-http-in.yaml",
                        List.of("custom-grpc-provider-out1.yaml", "custom-grpc-provider-out2.yaml")),
                new Case("custom-http-provider", Chain.HTTP, HTTP, "custom-simple-http-in.yaml",
                        List.of("custom-http-provider-out1.yaml", "custom-http-provider-out2.yaml")),
                http("custom-bad-multiple-providers", HTTP, 2),
                new Case("custom-bad-invalid-config", Chain.HTTP, INVALID, "custom-simple-http-in.yaml",
                        List.of("custom-bad-out.yaml")),
                http("deny-and-allow", "", 2),
                http("deny-empty-rule", ""),
                http("dry-run-allow-and-deny", "", 2),
                http("dry-run-allow", ""),
                http("dry-run-mix", ""),
                http("multiple-policies", ""),
                http("single-policy", ""),
                http("simple-policy-td-aliases", "trustDomain: td1\ntrustDomainAliases: [cluster.local]\n"),
                http("simple-policy-multiple-td-aliases", "trustDomain: td1\ntrustDomainAliases: [cluster.local, some-td]\n"),
                http("simple-policy-principal-with-wildcard", "trustDomain: td1\ntrustDomainAliases: [foobar]\n"),
                http("td-aliases-source-principal", "trustDomain: new-td\ntrustDomainAliases: [old-td, some-trustdomain]\n"),
                http("trust-domains", ""),
                tcp("allow-both-http-tcp", "", 1),
                tcp("allow-only-http", "", 1),
                tcp("audit-both-http-tcp", "", 1),
                tcp("custom-both-http-tcp", GRPC, 2),
                tcp("custom-only-http", HTTP, 0),
                tcp("deny-both-http-tcp", "", 1),
                tcp("dry-run-mix", "", 1));
    }

    static Case http(String name, String mesh) {
        return new Case(name, Chain.HTTP, mesh, name + "-in.yaml", List.of(name + "-out.yaml"));
    }

    static Case http(String name, String mesh, int outputs) {
        return new Case(name, Chain.HTTP, mesh, name + "-in.yaml", numbered(name, outputs));
    }

    static Case tcp(String name, String mesh, int outputs) {
        return new Case(name, Chain.TCP, mesh, name + "-in.yaml",
                outputs == 1 ? List.of(name + "-out.yaml") : numbered(name, outputs));
    }

    static List<String> numbered(String name, int outputs) {
        List<String> files = new ArrayList<>();
        for (int i = 1; i <= outputs; i++) {
            files.add(name + "-out" + i + ".yaml");
        }
        return files;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void buildsWhatIstiodBuilds(Case c) throws Exception {
        Path dir = DATA.resolve(c.chain().name().toLowerCase());
        String policies = Files.readString(dir.resolve(c.input()));
        if (c.mesh().contains("extensionProviders")) {
            policies = EXT_AUTHZ_SERVICE + policies;
        }
        AuthorizationFilters f = AuthorizationFiltersTest.filters(c.mesh(), policies, AuthorizationFiltersTest.HTTPBIN);
        // CUSTOM first, then AUDIT, DENY and ALLOW: istiod's order on a chain
        List<Message> got = new ArrayList<>(c.chain() == Chain.HTTP ? f.customHttp() : f.customTcp());
        got.addAll(c.chain() == Chain.HTTP ? f.http() : f.tcp());
        List<Message> want = new ArrayList<>();
        for (String file : c.want()) {
            Message.Builder b = c.chain() == Chain.HTTP ? HttpFilter.newBuilder() : Filter.newBuilder();
            Object yaml = new Yaml().load(Files.readString(dir.resolve(file)));
            JsonFormat.parser().usingTypeRegistry(EnvoyTypes.REGISTRY).merge(new Gson().toJson(yaml), b);
            want.add(b.build());
        }
        assertEquals(print(want), print(got), c + ": differs from istiod's " + c.want());
    }

    /** Protobuf JSON of each, so a difference shows field by field. */
    static List<String> print(List<Message> filters) throws Exception {
        List<String> out = new ArrayList<>();
        for (Message m : filters) {
            out.add(JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY).print(m));
        }
        return out;
    }
}
