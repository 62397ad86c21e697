package io.meshpilot.config.kube.gateway.convert;

import static io.meshpilot.config.kube.gateway.convert.HttpRouteConversionTest.vs;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.condition;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.convert;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.parentStatus;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.virtualService;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.config.Config;
import io.meshpilot.config.kube.gateway.RouteParents;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GAMMA: routes whose parent is a Service apply to the mesh (istiod's mesh parent; testdata
 * mesh.yaml): one VirtualService for {@code gateways: [mesh]} per route namespace, parentRef
 * port and Service host, the port added to every match, no ReferenceGrant check, and the
 * Service must exist.
 */
class MeshRouteConversionTest {
    static final List<String> SERVICES = List.of("echo.default", "echo-v1.default", "echo-v2.default");

    static String yaml(String kind, String name, String parentRef, String rules) {
        return """
                apiVersion: gateway.networking.k8s.io/v1
                kind: %s
                metadata:
                  name: %s
                  namespace: default
                spec:
                  parentRefs:
                  - %s
                  rules:
                %s""".formatted(kind, name, parentRef, rules.indent(2));
    }

    @Test
    void serviceParentWithAPortIsAMeshVirtualServiceMatchingThatPort() throws Exception {
        RouteConversion.Output out = convert(yaml("GRPCRoute", "split", "{group: \"\", kind: Service, name: echo, port: 8080}", """
                - backendRefs:
                  - {name: echo-v1, port: 8080, weight: 80}
                  - {name: echo-v2, namespace: other, port: 8080, weight: 20}
                """) + "---\n" + yaml("HTTPRoute", "any-port", "{group: \"\", kind: Service, name: echo}", """
                - matches:
                  - path: {value: /v2}
                  backendRefs:
                  - {name: echo-v2, port: 80}
                """), SERVICES, RouteParents.NONE);

        Config withPort = virtualService(out, "default", "default~8080~echo.default.svc.domain.suffix");
        // the mesh form checks no ReferenceGrant: the backend in "other" is routed (and reported missing)
        assertEquals(vs("""
                hosts: "echo.default.svc.domain.suffix" gateways: "mesh"
                http {
                  name: "default.split.0" match { port: 8080 }
                  route { destination { host: "echo-v1.default.svc.domain.suffix" port { number: 8080 } } weight: 80 }
                  route { destination { host: "echo-v2.other.svc.domain.suffix" port { number: 8080 } } weight: 20 }
                }"""), withPort.spec());
        assertEquals("GRPCRoute/split.default", withPort.annotations().get("internal.istio.io/parents"));
        assertEquals("gateway", withPort.annotations().get("internal.istio.io/route-semantics"));
        assertEquals("False/BackendNotFound/backend(echo-v2.other.svc.domain.suffix) not found",
                condition(parentStatus(out, "GRPCRoute", "default", "split", 0), "ResolvedRefs"));
        assertEquals(vs("""
                hosts: "echo.default.svc.domain.suffix" gateways: "mesh"
                http {
                  name: "default.any-port.0" match { uri { prefix: "/v2" } }
                  route { destination { host: "echo-v2.default.svc.domain.suffix" port { number: 80 } } }
                }"""), virtualService(out, "default", "default~echo.default.svc.domain.suffix").spec());
        assertEquals(List.of(), out.attachments());
    }

    @Test
    void aMissingParentServiceIsNotAccepted() {
        RouteConversion.Output out = convert(yaml("HTTPRoute", "r", "{group: \"\", kind: Service, name: random}", """
                - backendRefs:
                  - {name: echo, port: 80}
                """), SERVICES, RouteParents.NONE);
        assertEquals("False/NoMatchingParent/parent service: \"random\" not found",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 0), "Accepted"));
        assertEquals(List.of(), out.virtualServices());
    }

    @Test
    void meshTcpAndTlsRoutesForTheServiceHost() throws Exception {
        RouteConversion.Output out = convert(yaml("TCPRoute", "tcp", "{group: \"\", kind: Service, name: echo, port: 9000}", """
                - backendRefs:
                  - {name: echo-v1, port: 9000}
                """) + "---\n" + yaml("TLSRoute", "tls", "{group: \"\", kind: Service, name: echo, port: 443}", """
                - backendRefs:
                  - {name: echo-v1, port: 443}
                """), SERVICES, RouteParents.NONE);

        assertEquals(vs("""
                hosts: "echo.default.svc.domain.suffix" gateways: "mesh"
                tcp { match { port: 9000 } route { destination { host: "echo-v1.default.svc.domain.suffix" port { number: 9000 } } } }
                """), virtualService(out, "default", "tcp~tcp~0~istio-autogenerated-k8s-gateway").spec());
        assertEquals(vs("""
                hosts: "echo.default.svc.domain.suffix" gateways: "mesh"
                tls {
                  match { sni_hosts: "echo.default.svc.domain.suffix" port: 443 }
                  route { destination { host: "echo-v1.default.svc.domain.suffix" port { number: 443 } } }
                }"""), virtualService(out, "default", "tls~tls~0~istio-autogenerated-k8s-gateway").spec());
    }
}
