package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ALPN of Istio mutual TLS toward in-mesh clusters, node in and CDS out, as istiod's
 * cluster_tls.go buildUpstreamClusterTLSContext sets it for ISTIO_MUTUAL: an HTTP/2 cluster
 * offers {@code h2} after {@code istio}, and {@code istio-peer-exchange} leads only while
 * PILOT_ENABLE_METADATA_EXCHANGE and not PILOT_DISABLE_MX_ALPN. Plain Envoy keeps the list it
 * always had (its goldens do not move).
 */
class IstioProxyUpstreamAlpnTest {
    static final String SERVICES = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: echo, namespace: foo}
            spec:
              hosts: [echo.foo.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: STATIC
              ports: [{number: 8080, name: http, protocol: HTTP}, {number: 9090, name: grpc, protocol: GRPC}]
              workloadSelector: {labels: {app: echo}}
            ---
            apiVersion: networking.istio.io/v1
            kind: WorkloadEntry
            metadata: {name: echo-1, namespace: foo}
            spec: {address: 10.1.1.2, labels: {app: echo}, serviceAccount: echo}
            """;
    static final String HTTP = "outbound|8080||echo.foo.svc.cluster.local";
    static final String GRPC = "outbound|9090||echo.foo.svc.cluster.local";
    static final List<String> MX_ISTIO = List.of("istio-peer-exchange", "istio");

    static Node node(boolean agent) {
        Struct.Builder meta = Struct.newBuilder().putFields("NAMESPACE", Value.newBuilder().setStringValue("foo").build());
        if (agent) {
            meta.putFields("PROXY_CONFIG", Value.newBuilder().setStructValue(Struct.newBuilder()
                    .putFields("discoveryAddress", Value.newBuilder().setStringValue("istiod.istio-system.svc:15012")
                            .build())).build());
        }
        return Node.newBuilder().setId("sidecar~10.1.1.9~client-1.foo~foo.svc.cluster.local").setMetadata(meta).build();
    }

    /** name, istio-proxy?, switches, HTTP cluster's ALPN, gRPC (HTTP/2) cluster's ALPN. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("istio-proxy", true, MetadataExchange.DEFAULTS, MX_ISTIO,
                        List.of("istio-peer-exchange", "istio", "h2")),
                Arguments.of("PILOT_DISABLE_MX_ALPN", true, new MetadataExchange(true, List.of(), true, false),
                        List.of("istio"), List.of("istio", "h2")),
                Arguments.of("PILOT_ENABLE_METADATA_EXCHANGE=false", true,
                        new MetadataExchange(false, List.of(), true, true), List.of("istio"), List.of("istio", "h2")),
                Arguments.of("plain Envoy", false, MetadataExchange.DEFAULTS, MX_ISTIO, MX_ISTIO),
                Arguments.of("plain Envoy, PILOT_DISABLE_MX_ALPN", false,
                        new MetadataExchange(true, List.of(), true, false), MX_ISTIO, MX_ISTIO));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void istioMutualAlpnAsIstiod(String name, boolean agent, MetadataExchange settings, List<String> http,
                                 List<String> grpc) throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            PushContext push = fixture.push(new MeshConfigLoader().defaults(), settings);
            Proxy proxy = Proxy.fromNode(node(agent));
            // a fresh cache per row: the rows differ in server settings, which a real server never changes
            List<Any> cds = new CdsGenerator(new XdsCache(true)).generate(proxy, push, Set.of(), true);
            assertEquals(http, istioMutualAlpn(cds, HTTP), "HTTP cluster");
            assertEquals(grpc, istioMutualAlpn(cds, GRPC), "HTTP/2 cluster");
        }
    }

    static List<String> istioMutualAlpn(List<Any> cds, String name) throws Exception {
        for (Any a : cds) {
            Cluster c = a.unpack(Cluster.class);
            if (c.getName().equals(name)) {
                for (Cluster.TransportSocketMatch m : c.getTransportSocketMatchesList()) {
                    if (m.getName().equals("tlsMode-istio")) {
                        return m.getTransportSocket().getTypedConfig().unpack(UpstreamTlsContext.class)
                                .getCommonTlsContext().getAlpnProtocolsList();
                    }
                }
                throw new AssertionError(name + " has no Istio mutual TLS match: " + c);
            }
        }
        throw new AssertionError("no " + name);
    }
}
