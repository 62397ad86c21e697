package io.meshpilot.networking.authn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.config.Config;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Which RequestAuthentications attach to which proxy (istiod's getConfigsForWorkload and
 * ShouldAttachPolicy), from YAML in the real validating store: namespace-wide, selector,
 * root namespace, targetRef to a Kubernetes Gateway API gateway.
 */
class RequestAuthenticationSelectionTest {
    static final String JWT = "jwtRules: [{issuer: i, jwks: '{\"keys\": []}'}]";

    MeshFixture fixture;

    static Proxy proxy(Proxy.Type type, String namespace, Map<String, String> labels) {
        String kind = type == Proxy.Type.SIDECAR ? "sidecar" : "router";
        return new Proxy(kind + "~10.0.0.7~w-1." + namespace + "~" + namespace + ".svc.cluster.local", type,
                List.of("10.0.0.7"), "w-1." + namespace, namespace + ".svc.cluster.local", namespace, labels,
                "Kubernetes", "1.24.0", "", "", "", Locality.NONE);
    }

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.apply(String.join("---\n",
                policy("mesh-wide", "istio-system", ""),
                policy("mesh-selector", "istio-system", "selector: {matchLabels: {app: web}}"),
                policy("ns-wide", "shop", ""),
                policy("web", "shop", "selector: {matchLabels: {app: web}}"),
                policy("db", "shop", "selector: {matchLabels: {app: db}}"),
                policy("to-gw", "shop", "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}"),
                policy("to-other-gw", "shop",
                        "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: other}]"),
                policy("elsewhere", "other", "")));
    }

    static String policy(String name, String namespace, String targeting) {
        return """
                apiVersion: security.istio.io/v1
                kind: RequestAuthentication
                metadata: {name: %s, namespace: %s}
                spec:
                  %s
                  %s
                """.formatted(name, namespace, targeting, JWT);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    List<String> selected(Proxy proxy) {
        PushContext push = fixture.push();
        return RequestAuthenticationSelection.forProxy(push.requestAuthentications(), push.rootNamespace(), proxy)
                .stream().map(Config::name).sorted().toList();
    }

    @Test
    void sidecarGetsNamespaceSelectorAndRootPoliciesNeverTargetRefOnes() {
        assertEquals(List.of("mesh-selector", "mesh-wide", "ns-wide", "web"),
                selected(proxy(Proxy.Type.SIDECAR, "shop", Map.of("app", "web"))));
        assertEquals(List.of("db", "mesh-wide", "ns-wide"),
                selected(proxy(Proxy.Type.SIDECAR, "shop", Map.of("app", "db"))));
        assertEquals(List.of("mesh-wide"), selected(proxy(Proxy.Type.SIDECAR, "empty", Map.of())));
    }

    @Test
    void gatewayApiGatewayGetsItsTargetRefAndSelectorPolicies() {
        assertEquals(List.of("mesh-wide", "ns-wide", "to-gw"), selected(proxy(Proxy.Type.ROUTER, "shop",
                Map.of(RequestAuthenticationSelection.GATEWAY_NAME_LABEL, "gw"))));
        // an Istio gateway (no gateway-name label) is selected like a workload
        assertEquals(List.of("mesh-selector", "mesh-wide", "ns-wide", "web"),
                selected(proxy(Proxy.Type.ROUTER, "shop", Map.of("app", "web"))));
    }
}
