package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.PeerAuthenticationPolicy;
import io.meshpilot.networking.ServiceMtlsMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PeerAuthentication composed as istiod's ComposePeerAuthentication (pilot/pkg/security/authn)
 * and, for clients, as its BestEffortInferServiceMTLSMode: each row is a set of policies (oldest
 * first, with creation times) and istiod's merged result for a workload {@code app: web} in
 * namespace {@code shop} ({@code Mode} and {@code PerPort}), root namespace {@code istio-system}.
 */
class PeerAuthenticationPolicyTest {
    static final String ROOT = "istio-system";
    static final Proxy WEB = proxy("shop", Map.of("app", "web"));

    static Proxy proxy(String namespace, Map<String, String> labels) {
        return new Proxy("sidecar~10.0.0.1~web-1." + namespace + "~" + namespace + ".svc.cluster.local",
                Proxy.Type.SIDECAR, List.of("10.0.0.1"), "web-1." + namespace, namespace + ".svc.cluster.local",
                namespace, labels, "Kubernetes", "1.24.0", "", "", "", Locality.NONE);
    }

    /** {@code ns/name@second: spec} documents, parsed and timestamped; returned oldest first. */
    static List<Config> policies(String... entries) {
        ConfigParser parser = new ConfigParser(Schemas.PILOT);
        List<Config> out = new ArrayList<>();
        for (String e : entries) {
            String[] head = e.substring(0, e.indexOf(':')).split("[/@]");
            String spec = e.substring(e.indexOf(':') + 1).trim();
            String yaml = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: " + head[1]
                    + ", namespace: " + head[0] + "}\nspec: " + spec + "\n";
            ConfigParser.Result r = parser.parse("pa.yaml", yaml);
            assertEquals(List.of(), r.errors(), e);
            out.add(r.configs().get(0).withMeta("1", 1, Instant.ofEpochSecond(Long.parseLong(head[2]))));
        }
        out.sort(Comparator.comparing(Config::creationTimestamp).thenComparing(Config::key));
        return out;
    }

    static Arguments row(String name, String expectedMode, Map<Integer, String> expectedPorts, String... entries) {
        return Arguments.of(name, entries, expectedMode, expectedPorts);
    }

    static Stream<Arguments> composed() {
        return Stream.of(
                row("no policy: PERMISSIVE", "PERMISSIVE", Map.of()),
                row("mesh STRICT", "STRICT", Map.of(), "istio-system/default@1: {mtls: {mode: STRICT}}"),
                row("mesh UNSET is PERMISSIVE", "PERMISSIVE", Map.of(), "istio-system/default@1: {mtls: {}}"),
                row("mesh DISABLE, namespace UNSET inherits", "DISABLE", Map.of(),
                        "istio-system/default@1: {mtls: {mode: DISABLE}}", "shop/default@2: {}"),
                row("namespace overrides mesh", "PERMISSIVE", Map.of(),
                        "istio-system/default@1: {mtls: {mode: STRICT}}", "shop/default@2: {mtls: {mode: PERMISSIVE}}"),
                row("another namespace's policy does not apply", "STRICT", Map.of(),
                        "istio-system/default@1: {mtls: {mode: STRICT}}", "other/default@2: {mtls: {mode: DISABLE}}"),
                row("workload overrides namespace", "STRICT", Map.of(),
                        "shop/default@1: {mtls: {mode: DISABLE}}",
                        "shop/web@2: {selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}}"),
                row("workload UNSET inherits namespace, port UNSET inherits workload", "DISABLE",
                        Map.of(8080, "DISABLE", 9000, "STRICT"),
                        "shop/default@1: {mtls: {mode: DISABLE}}",
                        "shop/web@2: {selector: {matchLabels: {app: web}}, portLevelMtls: {8080: {mode: UNSET}, 9000: {mode: STRICT}}}"),
                row("selector not matching: namespace applies", "DISABLE", Map.of(),
                        "shop/default@1: {mtls: {mode: DISABLE}}",
                        "shop/other@2: {selector: {matchLabels: {app: other}}, mtls: {mode: STRICT}, portLevelMtls: {8080: {mode: STRICT}}}"),
                row("oldest mesh policy wins", "DISABLE", Map.of(),
                        "istio-system/b-old@1: {mtls: {mode: DISABLE}}", "istio-system/a-new@2: {mtls: {mode: STRICT}}"),
                row("oldest namespace policy wins", "STRICT", Map.of(),
                        "shop/z-old@1: {mtls: {mode: STRICT}}", "shop/a-new@5: {mtls: {mode: DISABLE}}"),
                row("oldest workload policy wins, with its ports only", "PERMISSIVE", Map.of(8080, "STRICT"),
                        "shop/z-old@1: {selector: {matchLabels: {app: web}}, mtls: {mode: PERMISSIVE}, portLevelMtls: {8080: {mode: STRICT}}}",
                        "shop/a-new@2: {selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}, portLevelMtls: {9000: {mode: STRICT}}}"),
                row("same creation time: namespace/name order decides", "STRICT", Map.of(),
                        "shop/a@3: {mtls: {mode: STRICT}}", "shop/b@3: {mtls: {mode: DISABLE}}"),
                row("selector policy in the root namespace is no workload policy", "PERMISSIVE", Map.of(),
                        "istio-system/web@1: {selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("composed")
    void composedAsIstiod(String name, String[] entries, String expectedMode, Map<Integer, String> expectedPorts) {
        PeerAuthenticationPolicy p = PeerAuthenticationPolicy.forProxy(policies(entries), ROOT, WEB);
        assertEquals(Mode.valueOf(expectedMode), p.mode(), name);
        Map<Integer, Mode> ports = new TreeMap<>();
        expectedPorts.forEach((port, m) -> ports.put(port, Mode.valueOf(m)));
        assertEquals(ports, new TreeMap<>(p.ports()), name);
    }

    @Test
    void aRootNamespaceWorkloadIgnoresSelectorPoliciesOfTheRootNamespace() {
        // istiod: workload-level policies are never taken from the root namespace; its namespace policy is the mesh's
        Proxy gateway = proxy(ROOT, Map.of("app", "web"));
        List<Config> in = policies("istio-system/default@1: {mtls: {mode: DISABLE}}",
                "istio-system/web@2: {selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}, portLevelMtls: {80: {mode: STRICT}}}");
        PeerAuthenticationPolicy p = PeerAuthenticationPolicy.forProxy(in, ROOT, gateway);
        assertEquals(Mode.DISABLE, p.mode());
        assertEquals(Map.of(), p.ports());
    }

    static Stream<Arguments> inferred() {
        return Stream.of(
                Arguments.of(new String[] {}, "shop", "PERMISSIVE"),
                Arguments.of(new String[] {"istio-system/default@1: {mtls: {mode: DISABLE}}"}, "shop", "DISABLE"),
                Arguments.of(new String[] {"istio-system/default@1: {mtls: {mode: DISABLE}}", "shop/default@2: {}"},
                        "shop", "DISABLE"),
                Arguments.of(new String[] {"istio-system/default@1: {mtls: {mode: DISABLE}}",
                        "shop/default@2: {mtls: {mode: STRICT}}"}, "shop", "STRICT"),
                // workload policies are not looked at: a service cannot know its workloads' modes
                Arguments.of(new String[] {"shop/web@1: {selector: {matchLabels: {app: web}}, mtls: {mode: DISABLE}}"},
                        "shop", "PERMISSIVE"),
                Arguments.of(new String[] {"shop/default@1: {mtls: {mode: DISABLE}}"}, "other", "PERMISSIVE"));
    }

    @ParameterizedTest
    @MethodSource("inferred")
    void serviceModeAsIstiodsBestEffortInference(String[] entries, String namespace, String expected) {
        assertEquals(Mode.valueOf(expected), ServiceMtlsMode.of(policies(entries), ROOT, namespace));
    }

    /** istiod's buildAutoMtlsSettings: no auto mTLS to a service whose namespace DISABLEs it; a rule's TLS still applies. */
    @Test
    void autoMtlsFollowsTheServersNamespaceMode() throws Exception {
        try (MeshFixture f = new MeshFixture()) {
            f.applyResource("/meshes/shop.yaml");
            String web = "outbound|80||web.shop.svc.cluster.local";
            String db = "outbound|80||db.other.svc.cluster.local";
            PushContext before = f.push();
            assertEquals(List.of("tlsMode-istio", "tlsMode-disabled"), matchNames(cluster(before, web)));

            f.apply("""
                    apiVersion: security.istio.io/v1
                    kind: PeerAuthentication
                    metadata: {name: default, namespace: shop}
                    spec: {mtls: {mode: DISABLE}}
                    """);
            PushContext after = f.push();
            Cluster plain = cluster(after, web);
            assertEquals(List.of(), matchNames(plain), "no auto mTLS matches");
            assertEquals(false, plain.hasTransportSocket(), "no transport socket at all: plaintext");
            assertEquals(List.of("tlsMode-istio", "tlsMode-disabled"), matchNames(cluster(after, db)),
                    "another namespace keeps auto mTLS");

            f.apply("""
                    apiVersion: networking.istio.io/v1
                    kind: DestinationRule
                    metadata: {name: web, namespace: shop}
                    spec: {host: web.shop.svc.cluster.local, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}
                    """);
            Cluster ruled = cluster(f.push(), web);
            assertEquals("envoy.transport_sockets.tls", ruled.getTransportSocket().getName(),
                    "the rule's ISTIO_MUTUAL is the client's choice, whatever the server's mode");
        }
    }

    static Cluster cluster(PushContext push, String name) {
        return ClusterBuilder.build(name, push, push.scope(WEB)).orElseThrow();
    }

    static List<String> matchNames(Cluster c) {
        return c.getTransportSocketMatchesList().stream().map(Cluster.TransportSocketMatch::getName).toList();
    }
}
