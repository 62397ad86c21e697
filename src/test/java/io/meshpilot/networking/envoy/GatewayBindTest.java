package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.listener.v3.Listener;
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
 * Gateway {@code servers[].bind} as istiod's gateway builders use it: servers are merged per
 * (port, bind) (model/gateway.go ServerPort{Number, Protocol, Bind}), each bind gets its own
 * listener {@code <bind>_<port>} on that address (gateway.go buildGatewayListeners: "bind =
 * port.Bind"), and route names end in {@code .<bind>} (gatewayRDSRouteName), so the same host
 * may be served on two addresses of one port.
 */
class GatewayBindTest {
    MeshFixture fixture;
    final Proxy ingress = new Proxy("router~10.0.0.50~ingress-1.istio-system~istio-system.svc.cluster.local",
            Proxy.Type.ROUTER, List.of("10.0.0.50"), "ingress-1.istio-system", "istio-system.svc.cluster.local",
            "istio-system", Map.of("istio", "ingressgateway"), "Kubernetes", "1.24.0", "", "", "", Locality.NONE);

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture().apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [web.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  endpoints: [{address: 10.1.0.1}]
                ---
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata: {name: gw, namespace: shop}
                spec:
                  selector: {istio: ingressgateway}
                  servers:
                  - {port: {number: 8080, name: http-a, protocol: HTTP}, bind: 10.0.0.5, hosts: [shop.example.com]}
                  - {port: {number: 8080, name: http-b, protocol: HTTP}, bind: 10.0.0.6, hosts: [shop.example.com]}
                  - {port: {number: 8080, name: http, protocol: HTTP}, hosts: [other.example.com]}
                  - port: {number: 8443, name: https-a, protocol: HTTPS}
                    bind: 10.0.0.5
                    hosts: [shop.example.com]
                    tls: {mode: SIMPLE, serverCertificate: /etc/c.pem, privateKey: /etc/k.pem}
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [shop.example.com, other.example.com]
                  gateways: [gw]
                  http: [{route: [{destination: {host: web.shop.svc.cluster.local}}]}]
                """);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void eachBindHasItsListenerAndRoutes() {
        PushContext push = fixture.push();
        MergedGateway merged = MergedGateway.of(ingress, push);
        assertEquals(List.of(), merged.rejected(), "the same host on two binds of a port is no conflict");
        List<Listener> listeners = GatewayListenerBuilder.listeners(ingress, push, merged);
        assertEquals(List.of("10.0.0.5_8080 10.0.0.5:8080", "10.0.0.6_8080 10.0.0.6:8080", "0.0.0.0_8080 0.0.0.0:8080",
                        "10.0.0.5_8443 10.0.0.5:8443"),
                listeners.stream().map(l -> l.getName() + " " + l.getAddress().getSocketAddress().getAddress() + ":"
                        + l.getAddress().getSocketAddress().getPortValue()).toList());
        assertEquals(Map.of("http.8080.10.0.0.5", List.of("shop.example.com:8080"),
                        "http.8080.10.0.0.6", List.of("shop.example.com:8080"),
                        "http.8080", List.of("other.example.com:8080"),
                        "https.8443.https-a.gw.shop.10.0.0.5", List.of("shop.example.com:8443")),
                Map.of("http.8080.10.0.0.5", hosts("http.8080.10.0.0.5", push, merged),
                        "http.8080.10.0.0.6", hosts("http.8080.10.0.0.6", push, merged),
                        "http.8080", hosts("http.8080", push, merged),
                        "https.8443.https-a.gw.shop.10.0.0.5", hosts("https.8443.https-a.gw.shop.10.0.0.5", push, merged)));
    }

    List<String> hosts(String route, PushContext push, MergedGateway merged) {
        return GatewayRouteBuilder.build(route, ingress, push, merged).orElseThrow().getVirtualHostsList().stream()
                .map(v -> v.getName()).toList();
    }
}
