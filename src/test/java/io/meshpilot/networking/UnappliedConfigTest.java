package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Nothing accepted is silently ignored: each row applies one object that uses fields MeshPilot
 * accepts but does not apply (for Envoy, or for proxyless gRPC), through the real validating
 * store; the push lists exactly the expected entries (metric -> keys), naming the object and
 * the field, and lists none of them once the object is deleted. Objects that MeshPilot applies
 * in full give no entry.
 */
class UnappliedConfigTest {
    static Arguments row(String yaml, String kind, String namespace, String name, String metric, String... keys) {
        return Arguments.of(yaml, kind, namespace, name, metric, List.of(keys));
    }

    static Stream<Arguments> rows() {
        return Stream.of(
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: Sidecar
                        metadata: {name: default, namespace: shop}
                        spec:
                          inboundConnectionPool: {tcp: {maxConnections: 10}}
                          ingress:
                          - port: {number: 9443, protocol: HTTPS, name: https}
                            defaultEndpoint: 127.0.0.1:8443
                            bind: 10.0.0.1
                            captureMode: NONE
                            tls: {mode: SIMPLE, privateKey: /etc/k.pem, serverCertificate: /etc/c.pem}
                            connectionPool: {tcp: {maxConnections: 5}}
                          egress:
                          - port: {number: 80, protocol: HTTP, name: http}
                            bind: 127.0.0.2
                            captureMode: IPTABLES
                            hosts: ["./*"]
                        """, "Sidecar", "shop", "default", "pilot_sidecar_unapplied",
                        "shop/default|spec.ingress[0].tls"),
                // egress port, bind and captureMode are applied but for these two listeners
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: Sidecar
                        metadata: {name: default, namespace: shop}
                        spec:
                          egress:
                          - port: {number: 0, protocol: TCP, name: tcp-uds}
                            bind: unix:///var/run/db.sock
                            hosts: ["./*"]
                          - port: {number: 3128, protocol: HTTP_PROXY, name: http-proxy}
                            captureMode: NONE
                            hosts: ["*/*"]
                          - hosts: ["./*"]
                            bind: 127.0.0.3
                            captureMode: NONE
                        """, "Sidecar", "shop", "default", "pilot_sidecar_unapplied",
                        "shop/default|spec.egress[0].port", "shop/default|spec.egress[1].port"),
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: DestinationRule
                        metadata: {name: web, namespace: shop}
                        spec:
                          host: web.shop.svc.cluster.local
                          trafficPolicy:
                            loadBalancer:
                              consistentHash: {httpHeaderName: x-user}
                              localityLbSetting: {enabled: true}
                              warmupDurationSecs: 30s
                            connectionPool: {http: {useClientProtocol: true}}
                            tls: {mode: SIMPLE, caCertificates: /etc/ca.pem, caCrl: /etc/crl.pem}
                            proxyProtocol: {version: V1}
                            retryBudget: {percent: 20}
                            portLevelSettings:
                            - port: {number: 80}
                              loadBalancer: {simple: PASSTHROUGH}
                          subsets:
                          - name: v1
                            labels: {version: v1}
                            trafficPolicy: {tunnel: {protocol: CONNECT, targetHost: egress.example.com, targetPort: 8443}}
                        """, "DestinationRule", "shop", "web", "pilot_destrule_unapplied",
                        "shop/web|spec.subsets[0].trafficPolicy.tunnel",
                        "shop/web|spec.trafficPolicy.connectionPool.http.useClientProtocol",
                        "shop/web|spec.trafficPolicy.portLevelSettings[0].loadBalancer.simple",
                        "shop/web|spec.trafficPolicy.proxyProtocol", "shop/web|spec.trafficPolicy.retryBudget",
                        "shop/web|spec.trafficPolicy.tls.caCrl"),
                // applied over EDS per proxy; a DNS host's endpoints are inline in its shared cluster
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: DestinationRule
                        metadata: {name: pg, namespace: other}
                        spec:
                          host: pg.example.com
                          trafficPolicy:
                            loadBalancer: {localityLbSetting: {failover: [{from: r1, to: r2}]}}
                            outlierDetection: {consecutive5xxErrors: 5}
                        """, "DestinationRule", "other", "pg", "pilot_destrule_unapplied",
                        "other/pg|spec.trafficPolicy.loadBalancer.localityLbSetting"),
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: Gateway
                        metadata: {name: gw, namespace: shop}
                        spec:
                          selector: {istio: ingressgateway}
                          servers:
                          - port: {number: 443, name: https, protocol: HTTPS}
                            bind: 10.0.0.5
                            hosts: [shop.example.com]
                            tls: {mode: SIMPLE, credentialNames: [rsa, ecdsa], caCrl: /etc/crl.pem}
                          - port: {number: 8443, name: mtls, protocol: HTTPS}
                            hosts: [shop.example.com]
                            tls: {mode: OPTIONAL_MUTUAL, credentialName: shop, caCertCredentialName: shop-ca,
                                  insecureSkipVerify: true}
                        """, "Gateway", "shop", "gw", "pilot_gateway_unapplied",
                        "shop/gw|spec.servers[0].tls.caCrl",
                        "shop/gw|spec.servers[1].tls.insecureSkipVerify"),
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: ServiceEntry
                        metadata: {name: api, namespace: shop}
                        spec:
                          hosts: [api.example.com]
                          ports: [{number: 443, name: tls, protocol: TLS}]
                          resolution: DNS
                          subjectAltNames: [spiffe://cluster.local/ns/shop/sa/api]
                        """, "ServiceEntry", "shop", "api", "pilot_serviceentry_unapplied",
                        "shop/api|spec.subjectAltNames"),
                row("""
                        apiVersion: networking.istio.io/v1beta1
                        kind: ProxyConfig
                        metadata: {name: web, namespace: shop}
                        spec: {concurrency: 2}
                        """, "ProxyConfig", "shop", "web", "pilot_proxyconfig_unapplied", "shop/web"),
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: WorkloadGroup
                        metadata: {name: vm, namespace: shop}
                        spec: {template: {serviceAccount: vm}}
                        """, "WorkloadGroup", "shop", "vm", "pilot_workloadgroup_unapplied", "shop/vm"),
                row("""
                        apiVersion: security.istio.io/v1
                        kind: PeerAuthentication
                        metadata: {name: web, namespace: istio-system}
                        spec: {selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}}
                        """, "PeerAuthentication", "istio-system", "web", "pilot_peerauthn_ignored",
                        "istio-system/web"),
                // applied in full: no entry
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: DestinationRule
                        metadata: {name: web, namespace: shop}
                        spec:
                          host: web.shop.svc.cluster.local
                          trafficPolicy:
                            loadBalancer: {simple: ROUND_ROBIN}
                            connectionPool: {tcp: {maxConnections: 10}, http: {http2MaxRequests: 100}}
                            outlierDetection: {consecutive5xxErrors: 5}
                        """, "DestinationRule", "shop", "web", "pilot_destrule_unapplied"));
    }

    @ParameterizedTest
    @MethodSource("rows")
    void listedWhileTheObjectExists(String yaml, String kind, String namespace, String name, String metric,
                                    List<String> keys) throws Exception {
        try (MeshFixture f = new MeshFixture()) {
            f.applyResource("/meshes/shop.yaml");
            assertEquals(Map.of(), f.push().diagnostics().all(), "the mesh alone has no problem");
            f.apply(yaml);
            PushDiagnostics d = f.push().diagnostics();
            assertEquals(keys, List.copyOf(d.all().getOrDefault(metric, Map.of()).keySet()), d.toString());
            for (String key : keys) {
                String message = d.all().get(metric).get(key).message();
                assertTrue(message.contains(namespace + "/" + name) && message.contains("not applied")
                        || message.contains("ignored"), message);
            }
            assertEquals(keys.isEmpty() ? Map.of() : Map.of(metric, keys.size()), counts(d));

            f.store.delete(kind, namespace, name, null);
            assertTrue(f.store.awaitEventsDelivered(10, TimeUnit.SECONDS));
            assertEquals(Map.of(), f.push().diagnostics().all(), "gone with the object");
        }
    }

    static Map<String, Integer> counts(PushDiagnostics d) {
        Map<String, Integer> out = new TreeMap<>();
        d.all().forEach((m, e) -> out.put(m, e.size()));
        return out;
    }

    static Stream<Arguments> proxylessRows() {
        return Stream.of(
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: VirtualService
                        metadata: {name: web, namespace: shop}
                        spec:
                          hosts: [web.shop.svc.cluster.local]
                          http:
                          - match: [{uri: {prefix: /a}, method: {exact: GET}, queryParams: {q: {exact: "1"}}}]
                            rewrite: {uri: /b}
                            headers: {request: {set: {x-a: b}}}
                            route: [{destination: {host: web.shop.svc.cluster.local}}]
                          - redirect: {uri: /c}
                        """, "VirtualService", "shop", "web", "pilot_grpc_unapplied",
                        "VirtualService/shop/web|spec.http[0].headers", "VirtualService/shop/web|spec.http[0].match[0]",
                        "VirtualService/shop/web|spec.http[0].rewrite", "VirtualService/shop/web|spec.http[1].redirect"),
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: DestinationRule
                        metadata: {name: web, namespace: shop}
                        spec:
                          host: web.shop.svc.cluster.local
                          trafficPolicy:
                            loadBalancer: {simple: LEAST_REQUEST}
                            outlierDetection: {consecutive5xxErrors: 5}
                            tls: {mode: ISTIO_MUTUAL}
                        """, "DestinationRule", "shop", "web", "pilot_grpc_unapplied",
                        "DestinationRule/shop/web|spec.trafficPolicy.loadBalancer.simple",
                        "DestinationRule/shop/web|spec.trafficPolicy.outlierDetection",
                        "DestinationRule/shop/web|spec.trafficPolicy.tls"),
                row("""
                        apiVersion: security.istio.io/v1
                        kind: PeerAuthentication
                        metadata: {name: default, namespace: shop}
                        spec: {mtls: {mode: STRICT}}
                        """, "PeerAuthentication", "shop", "default", "pilot_grpc_unapplied",
                        "PeerAuthentication/shop/default|spec.mtls"),
                row("""
                        apiVersion: security.istio.io/v1
                        kind: RequestAuthentication
                        metadata: {name: jwt, namespace: shop}
                        spec: {jwtRules: [{issuer: https://issuer.example.com, jwks: '{"keys":[]}'}]}
                        """, "RequestAuthentication", "shop", "jwt", "pilot_grpc_unapplied",
                        "RequestAuthentication/shop/jwt|spec.jwtRules"),
                // what gRPC applies: no entry
                row("""
                        apiVersion: networking.istio.io/v1
                        kind: VirtualService
                        metadata: {name: web, namespace: shop}
                        spec:
                          hosts: [web.shop.svc.cluster.local]
                          http:
                          - match: [{uri: {prefix: /a}, headers: {x-b: {exact: c}}}]
                            timeout: 2s
                            retries: {attempts: 2}
                            fault: {abort: {httpStatus: 503, percentage: {value: 10}}}
                            route: [{destination: {host: web.shop.svc.cluster.local}, weight: 100}]
                        """, "VirtualService", "shop", "web", "pilot_grpc_unapplied"));
    }

    @ParameterizedTest
    @MethodSource("proxylessRows")
    void proxylessGapsListedWhileTheObjectExists(String yaml, String kind, String namespace, String name,
                                                 String metric, List<String> keys) throws Exception {
        try (MeshFixture f = new MeshFixture()) {
            f.applyResource("/meshes/shop.yaml");
            f.apply(yaml);
            PushContext push = f.push();
            PushDiagnostics d = push.proxylessDiagnostics();
            assertEquals(keys, List.copyOf(d.all().getOrDefault(metric, Map.of()).keySet()), d.toString());
            for (String key : keys) {
                assertTrue(d.all().get(metric).get(key).message().contains("proxyless gRPC"), key);
            }
            f.store.delete(kind, namespace, name, null);
            assertTrue(f.store.awaitEventsDelivered(10, TimeUnit.SECONDS));
            assertEquals(Map.of(), f.push().proxylessDiagnostics().all(), "gone with the object");
        }
    }
}
