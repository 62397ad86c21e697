package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Sidecar ingress listeners in, inbound LDS out, one row per field (istiod's
 * buildInboundChainConfigs and buildInboundListeners: captureMode NONE makes the port a
 * listener of its own at {@code <bind>:<port>}, otherwise its chains stay on virtualInbound,
 * named after the bind). The proxy is web's endpoint 10.0.0.1 in {@code /meshes/shop.yaml}.
 * Each inbound listener is summarised as {@code address bound|redirected original_dst?} and
 * its chains for port 8080 as {@code name>cluster}.
 */
class SidecarIngressListenerTest {
    MeshFixture fixture;
    final Proxy proxy = new Proxy("sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local", Proxy.Type.SIDECAR,
            List.of("10.0.0.1"), "web-1.shop", "shop.svc.cluster.local", "shop", Map.of("app", "web"), "Kubernetes",
            "1.24.0", "", "", "", Locality.NONE);

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        fixture.applyResource("/meshes/shop.yaml");
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    static final String PERMISSIVE_HTTP_8080 = "0.0.0.0_8080>inbound|8080||,0.0.0.0_8080>inbound|8080||";
    static final String VIRTUAL_INBOUND_WITHOUT_8080 = "0.0.0.0:15006 redirected original_dst chains:";

    static Stream<Arguments> ingressBindAndCaptureMode() {
        return Stream.of(
                Arguments.of("no bind or captureMode: the port's chains on virtualInbound", "",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + PERMISSIVE_HTTP_8080)),
                Arguments.of("a bind alone: still on virtualInbound, the chains named after the bind",
                        "bind: 10.0.0.1",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:"
                                + PERMISSIVE_HTTP_8080.replace("0.0.0.0_", "10.0.0.1_"))),
                Arguments.of("captureMode IPTABLES is the redirection DEFAULT uses", "captureMode: IPTABLES",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + PERMISSIVE_HTTP_8080)),
                Arguments.of("captureMode NONE: a listener of its own on 0.0.0.0, without original_dst",
                        "captureMode: NONE",
                        Map.of("virtualInbound", VIRTUAL_INBOUND_WITHOUT_8080,
                                "0.0.0.0_8080", "0.0.0.0:8080 bound chains:" + PERMISSIVE_HTTP_8080)),
                Arguments.of("captureMode NONE with a bind: the listener at the bind", "captureMode: NONE\nbind: 10.0.0.1",
                        Map.of("virtualInbound", VIRTUAL_INBOUND_WITHOUT_8080,
                                "10.0.0.1_8080", "10.0.0.1:8080 bound chains:"
                                        + PERMISSIVE_HTTP_8080.replace("0.0.0.0_", "10.0.0.1_"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ingressBindAndCaptureMode")
    void ingressBindAndCaptureMode(String name, String fields, Map<String, String> expected) throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: web, namespace: shop}
                spec:
                  workloadSelector: {labels: {app: web}}
                  ingress:
                  - port: {number: 8080, protocol: HTTP, name: http}
                    defaultEndpoint: 127.0.0.1:18080
                """ + fields.indent(4) + """
                  egress: [{hosts: ["./*"]}]
                """);
        PushContext push = fixture.push();
        Map<String, String> got = new TreeMap<>();
        for (Listener l : SidecarListenerBuilder.inboundListeners(proxy, push)) {
            got.put(l.getName(), summary(l));
        }
        assertEquals(new TreeMap<>(expected), got);
    }

    static String summary(Listener l) throws InvalidProtocolBufferException {
        var a = l.getAddress().getSocketAddress();
        boolean bound = !l.hasBindToPort() || l.getBindToPort().getValue();
        boolean originalDst = l.getListenerFiltersList().stream()
                .anyMatch(f -> f.getName().equals(EnvoyFilters.ORIGINAL_DST));
        List<String> chains = new ArrayList<>();
        for (FilterChain c : l.getFilterChainsList()) {
            if (c.getFilterChainMatch().getDestinationPort().getValue() == 8080) {
                chains.add(c.getName() + ">" + cluster(c.getFilters(c.getFiltersCount() - 1)));
            }
        }
        return a.getAddress() + ":" + a.getPortValue() + " " + (bound && !originalDst ? "bound" : "redirected")
                + (originalDst ? " original_dst" : "") + " chains:" + String.join(",", chains);
    }

    static String cluster(Filter f) throws InvalidProtocolBufferException {
        if (f.getName().equals(EnvoyFilters.TCP_PROXY)) {
            return f.getTypedConfig().unpack(TcpProxy.class).getCluster();
        }
        return f.getTypedConfig().unpack(HttpConnectionManager.class).getRouteConfig().getVirtualHosts(0)
                .getRoutes(0).getRoute().getCluster();
    }
}
