package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedMesh;
import io.meshpilot.networking.validation.EnvoyConfigCheck;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Acceptance 2 at scale: a generated mesh of 1,000 services (VirtualServices and
 * DestinationRules on 20% of them) plus a gateway with HTTP, HTTPS and AUTO_PASSTHROUGH
 * servers; a sidecar's and the gateway's complete config from the server's generators passes
 * Envoy's proto constraints and cross-reference checks, with no dangling route.
 */
class GeneratedMeshValidationTest {
    static final Proxy GATEWAY = new Proxy("router~10.200.0.1~ingress-1.istio-system~istio-system.svc.cluster.local",
            Proxy.Type.ROUTER, List.of("10.200.0.1"), "ingress-1.istio-system", "istio-system.svc.cluster.local",
            "istio-system", Map.of("istio", "ingressgateway"), "Kubernetes", "1.24.0", "", "", "", Locality.NONE);

    @Test
    void aThousandServicesGiveValidConfigForASidecarAndAGateway() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(1000)) {
            mesh.fixture().apply("""
                    apiVersion: networking.istio.io/v1
                    kind: Gateway
                    metadata: {name: edge, namespace: istio-system}
                    spec:
                      selector: {istio: ingressgateway}
                      servers:
                      - port: {number: 80, name: http, protocol: HTTP}
                        hosts: ["*"]
                      - port: {number: 443, name: https, protocol: HTTPS}
                        hosts: ["*.example.com"]
                        tls: {mode: SIMPLE, credentialName: edge-cert}
                      - port: {number: 15443, name: tls, protocol: TLS}
                        hosts: ["*.local"]
                        tls: {mode: AUTO_PASSTHROUGH}
                    ---
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: edge, namespace: istio-system}
                    spec:
                      hosts: ["*"]
                      gateways: [edge]
                      http:
                      - match: [{uri: {prefix: /svc-1}}]
                        route: [{destination: {host: %s, port: {number: %d}}}]
                      - route: [{destination: {host: %s, port: {number: %d}}}]
                    """.formatted(GeneratedMesh.hostname(1), GeneratedMesh.HTTP_PORT, GeneratedMesh.hostname(2),
                    GeneratedMesh.HTTP_PORT));
            PushContext push = PushContext.build(mesh.fixture().registry, mesh.fixture().store,
                    mesh.fixture().updates.index, new MeshConfigLoader().defaults(), "cluster.local",
                    GoldenConfigTest.VERSIONS.incrementAndGet());

            var sidecar = GoldenConfigTest.ProxyConfig.of(GeneratedMesh.sidecar(7, 1), push).typed();
            assertTrue(sidecar.clusters().size() > 2000, "the whole mesh is in the sidecar's CDS: " + sidecar.clusters().size());
            var report = EnvoyConfigCheck.check(sidecar);
            assertEquals(List.of(), report.unexpected(Set.of()), "sidecar");

            var gateway = GoldenConfigTest.ProxyConfig.of(GATEWAY, push).typed();
            assertEquals(List.of("0.0.0.0_80", "0.0.0.0_443", "0.0.0.0_15443"),
                    gateway.listeners().stream().map(l -> l.getName()).toList());
            assertTrue(gateway.listeners().get(2).getFilterChainsCount() > 1000,
                    "a filter chain per service port and subset for AUTO_PASSTHROUGH");
            assertEquals(List.of(), EnvoyConfigCheck.check(gateway).unexpected(Set.of()), "gateway");
        }
    }
}
