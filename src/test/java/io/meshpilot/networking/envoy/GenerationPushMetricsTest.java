package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushMetric;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The push-status entries istiod records while it builds one proxy's listeners and clusters
 * (PushContext.AddMetric from listener.go, listener_inbound.go and GetProxyServiceTargets),
 * recorded by our builders into the PushContext they build from, keyed as istiod keys them.
 * The shop mesh: the proxy 10.0.0.1 is an endpoint of web.shop (HTTP 80 -> 8080).
 */
class GenerationPushMetricsTest {
    static Proxy sidecar(String ip) {
        return new Proxy("sidecar~" + ip + "~web-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR, List.of(ip),
                "web-1.shop", "shop.svc.cluster.local", "shop", Map.of("app", "web"), "Kubernetes", "1.24.0", "", "",
                "", Locality.NONE);
    }

    MeshFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.applyResource("/meshes/shop.yaml");
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    static PushDiagnostics built(Proxy proxy, PushContext push) {
        SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
        SidecarClusterBuilder.inboundClusters(proxy, push);
        return push.records().snapshot();
    }

    @Test
    void theShopMeshRecordsNothingForItsOwnEndpoint() {
        PushContext push = fixture.push();
        PushDiagnostics d = built(sidecar("10.0.0.1"), push);
        for (PushMetric m : List.of(PushMetric.NO_IP, PushMetric.CONFLICT_INBOUND_LISTENER,
                PushMetric.CONFLICT_OUTBOUND_TCP_OVER_TCP, PushMetric.ENDPOINT_NOT_READY)) {
            assertEquals(0, d.count(m), m.name() + ": " + d);
        }
    }

    @Test
    void aSidecarWhoseIpNoEndpointHasIsNoIpKeyedByProxyId() {
        PushContext push = fixture.push();
        Proxy stranger = sidecar("10.9.9.9");
        PushDiagnostics d = built(stranger, push);
        assertEquals(1, d.count(PushMetric.NO_IP), d.toString());
        assertEquals(stranger.id(), d.entries(PushMetric.NO_IP).get(stranger.id()).proxy());
        // building again records nothing new: readers see no change
        long changes = push.records().changes();
        built(stranger, push);
        assertEquals(changes, push.records().changes());
    }

    @Test
    void twoTcpServicesOnOneVipAndPortConflictOutbound() throws Exception {
        for (String host : List.of("a", "b")) {
            fixture.apply("""
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: %1$s, namespace: shop}
                    spec:
                      hosts: [%1$s.example.com]
                      addresses: [240.0.0.7]
                      location: MESH_INTERNAL
                      ports: [{number: 7777, name: tcp, protocol: TCP}]
                      resolution: STATIC
                      endpoints: [{address: 10.0.7.1}]
                    """.formatted(host));
        }
        PushDiagnostics d = built(sidecar("10.0.0.1"), fixture.push());
        assertEquals(1, d.count(PushMetric.CONFLICT_OUTBOUND_TCP_OVER_TCP), d.toString());
        String message = d.entries(PushMetric.CONFLICT_OUTBOUND_TCP_OVER_TCP).get("240.0.0.7_7777").message();
        assertTrue(message.startsWith("Listener=240.0.0.7_7777 Accepted=TCP Rejected=TCP ("), message);
    }

    @Test
    void aTcpServiceOnTheWorkloadsHttpTargetPortConflictsInbound() throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: raw, namespace: shop}
                spec:
                  hosts: [raw.shop.example.com]
                  addresses: [240.0.0.8]
                  location: MESH_INTERNAL
                  ports: [{number: 8081, name: tcp, protocol: TCP, targetPort: 8080}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.1}]
                """);
        Proxy proxy = sidecar("10.0.0.1");
        PushDiagnostics d = built(proxy, fixture.push());
        assertEquals(1, d.count(PushMetric.CONFLICT_INBOUND_LISTENER), d.toString());
        PushDiagnostics.Entry e = d.entries(PushMetric.CONFLICT_INBOUND_LISTENER).get(proxy.id());
        assertEquals(proxy.id(), e.proxy());
        assertTrue(e.message().startsWith("Conflicting inbound listener:8080. existing: "), e.message());
    }
}
