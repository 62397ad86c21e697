package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.JwksResolver;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Split-horizon EDS as istiod's EndpointsByNetworkFilter does it for sidecars, through the real
 * ServiceEntry registry and PushContext: one service with endpoints on three networks; network
 * n2 has two meshNetworks gateways (so every weight is scaled by 2 and split over both), n1
 * one, n3 none. Each row is a proxy network and the assignment it gets, as
 * {@code region/zone address:port=weight} entries.
 */
class SplitHorizonFilterTest {
    static final String CLUSTER = "outbound|80||svc.test.example";
    static final String NETWORKS = """
            networks:
              n1:
                endpoints: [{fromCidr: 10.0.0.1/32}]
                gateways: [{address: 192.0.2.9, port: 15443}]
              n2:
                endpoints: [{fromCidr: 10.0.0.0/29}]
                gateways: [{address: 192.0.2.2, port: 15443}, {address: 192.0.2.1, port: 15443}]
            """;

    MeshFixture mesh;

    @BeforeEach
    void setUp() throws Exception {
        // .4 has no identity, so no Istio mTLS: it cannot be reached through a gateway
        mesh = new MeshFixture().apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: svc, namespace: test}
                spec:
                  hosts: [svc.test.example]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  endpoints:
                  - {address: 10.0.0.1, network: n1, locality: r1/z1, serviceAccount: a}
                  - {address: 10.0.0.2, network: n2, locality: r1/z1, serviceAccount: a}
                  - {address: 10.0.0.3, network: n2, locality: r2/z2, serviceAccount: a, weight: 3, labels: {version: v2}}
                  - {address: 10.0.0.4, network: n2, locality: r1/z1}
                  - {address: 10.0.0.5, network: n3, locality: r1/z1, serviceAccount: a}
                """);
    }

    @AfterEach
    void tearDown() {
        mesh.close();
    }

    static Map<String, Integer> assignment(PushContext push, String proxyNetwork) {
        return assignment(push, new NetworkView(proxyNetwork, Set.of()));
    }

    static Map<String, Integer> assignment(PushContext push, NetworkView view) {
        ClusterLoadAssignment cla = EndpointBuilder.build(CLUSTER, push, ProxyScope.of("test"), view, null)
                .orElseThrow();
        Map<String, Integer> out = new TreeMap<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            int sum = 0;
            for (LbEndpoint e : l.getLbEndpointsList()) {
                var a = e.getEndpoint().getAddress().getSocketAddress();
                out.put(l.getLocality().getRegion() + "/" + l.getLocality().getZone() + " " + a.getAddress() + ":"
                        + a.getPortValue(), e.getLoadBalancingWeight().getValue());
                sum += e.getLoadBalancingWeight().getValue();
            }
            assertEquals(sum, l.getLoadBalancingWeight().getValue(), "a locality weighs what its endpoints weigh");
        }
        return out;
    }

    static Map<String, Integer> parse(String entries) {
        Map<String, Integer> out = new TreeMap<>();
        for (String e : entries.split(";")) {
            int eq = e.lastIndexOf('=');
            out.put(e.substring(0, eq).strip(), Integer.parseInt(e.substring(eq + 1)));
        }
        return out;
    }

    @ParameterizedTest(name = "proxy network \"{0}\"")
    @CsvSource(delimiter = '|', value = {
        // own network direct (x2); n2's mTLS endpoints behind both gateways per locality; n3 has no gateway: direct
        "n1 | r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.1:15443=1; r1/z1 192.0.2.2:15443=1;"
                + " r2/z2 192.0.2.1:15443=3; r2/z2 192.0.2.2:15443=3",
        // n2 sees its own directly (the one without mTLS too) and n1's endpoint behind n1's gateway
        "n2 | r1/z1 10.0.0.2:80=2; r2/z2 10.0.0.3:80=6; r1/z1 10.0.0.4:80=2; r1/z1 10.0.0.5:80=2;"
                + " r1/z1 192.0.2.9:15443=2",
        // a proxy naming no network reaches every network with a gateway through it
        "'' | r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.9:15443=2; r1/z1 192.0.2.1:15443=1; r1/z1 192.0.2.2:15443=1;"
                + " r2/z2 192.0.2.1:15443=3; r2/z2 192.0.2.2:15443=3",
    })
    void aProxyGetsItsOwnNetworkDirectlyAndTheOthersThroughTheirGateways(String proxyNetwork, String expected)
            throws Exception {
        assertEquals(parse(expected), assignment(multiNetworkPush(mesh), proxyNetwork));
    }

    static PushContext multiNetworkPush(MeshFixture mesh) throws Exception {
        return multiNetworkPush(mesh, NETWORKS);
    }

    static PushContext multiNetworkPush(MeshFixture mesh, String meshNetworks) throws Exception {
        MeshNetworks networks = new MeshConfigLoader().parseNetworks("meshNetworks", meshNetworks);
        return PushContext.build(mesh.registry, mesh.store, mesh.updates.index,
                new MeshConfigLoader().defaults(), networks, "cluster.local", 1, JwksResolver.NONE);
    }

    static final String N1_ALL = "r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.1:15443=1;"
            + " r1/z1 192.0.2.2:15443=1; r2/z2 192.0.2.1:15443=3; r2/z2 192.0.2.2:15443=3";
    static final String N1_WITHOUT_V2 = "r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.1:15443=1;"
            + " r1/z1 192.0.2.2:15443=1";
    static final String N1_OWN_ONLY = "r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2";

    /**
     * istiod's mtlsChecker (pilot/pkg/xds/endpoints/mtls_checker.go): an endpoint crosses a
     * gateway only when the client will speak Istio mTLS to it: the DestinationRule's TLS mode
     * for the port (a subset's first) decides when set, else the endpoint's tlsMode label and
     * then the PeerAuthentication of its workload and port must not DISABLE mTLS. Proxy n1.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "no rule | | " + N1_ALL,
        "rule DISABLE | DR {tls: {mode: DISABLE}} | " + N1_OWN_ONLY,
        "rule SIMPLE | DR {tls: {mode: SIMPLE}} | " + N1_OWN_ONLY,
        "port-level DISABLE over ISTIO_MUTUAL | DR {tls: {mode: ISTIO_MUTUAL}, portLevelSettings: [{port: {number: 80},"
                + " tls: {mode: DISABLE}}]} | " + N1_OWN_ONLY,
        "namespace policy DISABLE | PA {mtls: {mode: DISABLE}} | " + N1_OWN_ONLY,
        "mesh policy DISABLE | PA-ROOT {mtls: {mode: DISABLE}} | " + N1_OWN_ONLY,
        "workload policy DISABLE (v2) | PA {selector: {matchLabels: {version: v2}}, mtls: {mode: DISABLE}} | "
                + N1_WITHOUT_V2,
        "port-level policy DISABLE (v2, port 80) | PA {selector: {matchLabels: {version: v2}},"
                + " portLevelMtls: {80: {mode: DISABLE}}} | " + N1_WITHOUT_V2,
        "port-level policy on another port | PA {selector: {matchLabels: {version: v2}},"
                + " portLevelMtls: {81: {mode: DISABLE}}} | " + N1_ALL,
        "the rule's ISTIO_MUTUAL wins over a policy | DR {tls: {mode: ISTIO_MUTUAL}};"
                + " PA {mtls: {mode: DISABLE}} | " + N1_ALL,
    })
    void anEndpointCrossesAGatewayOnlyWhenTheClientWillUseIstioMtls(String name, String config, String expected)
            throws Exception {
        for (String part : config == null ? new String[0] : config.split(";")) {
            String[] kindAndSpec = part.strip().split(" ", 2);
            mesh.apply(switch (kindAndSpec[0]) {
                case "DR" -> """
                        apiVersion: networking.istio.io/v1
                        kind: DestinationRule
                        metadata: {name: svc, namespace: test}
                        spec: {host: svc.test.example, trafficPolicy: %s}
                        """.formatted(kindAndSpec[1]);
                case "PA", "PA-ROOT" -> """
                        apiVersion: security.istio.io/v1
                        kind: PeerAuthentication
                        metadata: {name: pa, namespace: %s}
                        spec: %s
                        """.formatted(kindAndSpec[0].equals("PA") ? "test" : "istio-system", kindAndSpec[1]);
                default -> throw new IllegalArgumentException(part);
            });
        }
        assertEquals(parse(expected), assignment(multiNetworkPush(mesh), "n1"));
    }

    /** A workload that DISABLEs mTLS gets no Istio mTLS metadata, so auto mTLS sends it plaintext (as istiod). */
    @Test
    void anEndpointWhoseWorkloadDisablesMtlsIsSentWithoutIstioTlsMode() throws Exception {
        mesh.apply("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: pa, namespace: test}
                spec: {selector: {matchLabels: {version: v2}}, mtls: {mode: DISABLE}}
                """);
        ClusterLoadAssignment cla = EndpointBuilder.build(CLUSTER, multiNetworkPush(mesh), ProxyScope.of("test"),
                new NetworkView("n2", Set.of()), null).orElseThrow();
        Map<String, String> tlsModes = new TreeMap<>();
        for (LocalityLbEndpoints l : cla.getEndpointsList()) {
            for (LbEndpoint e : l.getLbEndpointsList()) {
                // istiod writes no transport-socket match for a disabled tlsMode (AppendLbEndpointMetadata)
                var match = e.getMetadata().getFilterMetadataOrDefault("envoy.transport_socket_match", null);
                tlsModes.put(e.getEndpoint().getAddress().getSocketAddress().getAddress(),
                        match == null ? "(none)" : match.getFieldsOrThrow("tlsMode").getStringValue());
            }
        }
        assertEquals(Map.of("10.0.0.2", "istio", "10.0.0.3", "(none)", "10.0.0.4", "(none)",
                "10.0.0.5", "istio", "192.0.2.9", "istio"), tlsModes);
    }

    @ParameterizedTest(name = "proxy network \"{0}\"")
    @CsvSource({"n1", "n2", "''"})
    void withoutGatewaysEveryProxyGetsEveryEndpointAsItIs(String proxyNetwork) {
        assertEquals(parse("r1/z1 10.0.0.1:80=1; r1/z1 10.0.0.2:80=1; r2/z2 10.0.0.3:80=3; r1/z1 10.0.0.4:80=1;"
                + " r1/z1 10.0.0.5:80=1"), assignment(mesh.push(), proxyNetwork));
    }

    /** n1's only gateway is IPv6, n2 has one of each family. */
    static final String DUAL_STACK_NETWORKS = """
            networks:
              n1:
                endpoints: [{fromCidr: 10.0.0.1/32}]
                gateways: [{address: "2001:db8::9", port: 15443}]
              n2:
                endpoints: [{fromCidr: 10.0.0.0/29}]
                gateways: [{address: 192.0.2.1, port: 15443}, {address: "2001:db8::1", port: 15443}]
            """;

    /**
     * istiod's filterGatewaysByIPFamily (ep_filters.go): a proxy with only IPv4 (or only IPv6)
     * addresses uses only the gateways of that family; dual-stack uses all; an endpoint whose
     * network has gateways but none the proxy can reach is left out rather than sent directly.
     */
    @ParameterizedTest(name = "proxy network {0} with {1}")
    @CsvSource(delimiter = '|', value = {
        "n1 | 10.1.0.1 | r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.1:15443=2; r2/z2 192.0.2.1:15443=6",
        "n1 | fd00::1 | r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 2001:db8::1:15443=2; r2/z2 2001:db8::1:15443=6",
        "n1 | 10.1.0.1 fd00::1 | r1/z1 10.0.0.1:80=2; r1/z1 10.0.0.5:80=2; r1/z1 192.0.2.1:15443=1;"
                + " r1/z1 2001:db8::1:15443=1; r2/z2 192.0.2.1:15443=3; r2/z2 2001:db8::1:15443=3",
        "n2 | 10.1.0.1 | r1/z1 10.0.0.2:80=2; r2/z2 10.0.0.3:80=6; r1/z1 10.0.0.4:80=2; r1/z1 10.0.0.5:80=2",
    })
    void aProxyUsesOnlyTheGatewaysOfItsIpFamilies(String proxyNetwork, String ips, String expected) throws Exception {
        PushContext push = multiNetworkPush(mesh, DUAL_STACK_NETWORKS);
        List<String> addresses = List.of(ips.split(" "));
        Proxy proxy = new Proxy("sidecar~" + addresses.get(0) + "~client.test~test.svc.cluster.local", Proxy.Type.SIDECAR,
                addresses, "client.test", "test.svc.cluster.local", "test", Map.of(), "", "", "", "", proxyNetwork,
                Locality.NONE);
        assertEquals(parse(expected), assignment(push, NetworkView.of(proxy)));
    }
}
