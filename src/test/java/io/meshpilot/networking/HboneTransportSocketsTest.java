package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.meshpilot.model.ProxyScope;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An outbound cluster's transport while HBONE is sent, for each way its TLS comes about, as
 * istiod's cluster_tls.go applyHBONETransportSocketMatches: HBONE first for endpoints marked
 * {@code tunnel: http}, then what the cluster had (auto mTLS; the rule's Istio mutual TLS; the
 * rule's own TLS, which also goes inside the tunnel; plaintext).
 */
class HboneTransportSocketsTest {
    static final String HOST = "web.shop.svc.cluster.local";
    MeshFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [web.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.1}]
                """);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    Cluster cluster(String tls) throws Exception {
        if (!tls.isEmpty()) {
            fixture.apply("""
                    apiVersion: networking.istio.io/v1
                    kind: DestinationRule
                    metadata: {name: web, namespace: shop}
                    spec:
                      host: web.shop.svc.cluster.local
                      trafficPolicy: {tls: %s}
                    """.formatted(tls));
        }
        return ClusterBuilder.build(ClusterNames.outbound(80, "", HOST), fixture.pushSendingHbone(), ProxyScope.of("shop"))
                .orElseThrow();
    }

    static List<String> matches(Cluster c) {
        return c.getTransportSocketMatchesList().stream().map(Cluster.TransportSocketMatch::getName).toList();
    }

    static InternalUpstreamTransport hbone(Cluster c) throws Exception {
        Cluster.TransportSocketMatch m = c.getTransportSocketMatches(0);
        assertEquals("hbone", m.getName());
        assertEquals("http", m.getMatch().getFieldsOrThrow("tunnel").getStringValue());
        return m.getTransportSocket().getTypedConfig().unpack(InternalUpstreamTransport.class);
    }

    @Test
    void autoMtlsTriesHboneThenIstioMutualTlsThenPlaintext() throws Exception {
        Cluster c = cluster("");
        assertEquals(List.of("hbone", "tlsMode-istio", "tlsMode-disabled"), matches(c));
        assertEquals("envoy.transport_sockets.raw_buffer", hbone(c).getTransportSocket().getName());
        assertFalse(c.hasTransportSocket());
    }

    @Test
    void theRulesIstioMutualTlsIsWhatAnEndpointWithoutHboneGets() throws Exception {
        Cluster c = cluster("{mode: ISTIO_MUTUAL}");
        assertEquals(List.of("hbone", "tlsMode-istio"), matches(c));
        assertEquals(0, c.getTransportSocketMatches(1).getMatch().getFieldsCount(), "matches every other endpoint");
        assertTrue(c.getTransportSocketMatches(1).getTransportSocket().getTypedConfig().is(UpstreamTlsContext.class));
        assertFalse(c.hasTransportSocket());
    }

    @Test
    void theRulesOwnTlsGoesInsideTheTunnelToo() throws Exception {
        Cluster c = cluster("{mode: SIMPLE, sni: web.example}");
        assertEquals(List.of("hbone", "user"), matches(c));
        UpstreamTlsContext inner = hbone(c).getTransportSocket().getTypedConfig().unpack(UpstreamTlsContext.class);
        assertEquals("web.example", inner.getSni());
        assertEquals(c.getTransportSocketMatches(1).getTransportSocket(), hbone(c).getTransportSocket());
    }

    @Test
    void aDisabledRuleSendsHboneOrPlaintext() throws Exception {
        Cluster c = cluster("{mode: DISABLE}");
        assertEquals(List.of("hbone", "tlsMode-disabled"), matches(c));
        assertEquals("envoy.transport_sockets.raw_buffer", c.getTransportSocketMatches(1).getTransportSocket().getName());
    }

    @Test
    void withoutHboneSendingTheClusterIsAsBefore() throws Exception {
        Cluster c = ClusterBuilder.build(ClusterNames.outbound(80, "", HOST), fixture.push(), ProxyScope.of("shop"))
                .orElseThrow();
        assertEquals(List.of("tlsMode-istio", "tlsMode-disabled"), matches(c));
    }
}
