package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
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
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sidecar listener fields in, LDS and RDS out, one table per field. Egress: istiod's
 * buildSidecarOutboundListeners over SidecarScope.EgressListeners, and
 * BuildSidecarOutboundVirtualHosts over GetEgressListenerForRDS; each outbound listener is
 * summarised as {@code address bound|redirected chain,chain} where a chain is
 * {@code rds:<route>} or {@code tcp:<cluster>}, each route as its virtual hosts. Ingress:
 * istiod's buildInboundChainConfigs and buildInboundListeners (captureMode NONE makes the port
 * a listener of its own at {@code <bind>:<port>}, otherwise its chains stay on virtualInbound,
 * named after the bind); each inbound listener is summarised as
 * {@code address bound|redirected original_dst?} and its chains for port 8080 as
 * {@code name>cluster}. The mesh is {@code /meshes/shop.yaml}: web.shop (VIP 240.0.0.1: HTTP
 * 80, TCP 9000, unnamed 7000), db.other (VIP 240.0.0.2: Mongo 3306, HTTP 80), pg.example.com
 * (no VIP: TCP 5432); the proxy is web's endpoint 10.0.0.1 in shop.
 */
class SidecarListenerFieldsTest {
    static final String WEB = "web.shop.svc.cluster.local";
    static final String DB = "db.other.svc.cluster.local";
    static final String SNIFFED_WEB_7000 = "0.0.0.0:7000 redirected rds:7000,tcp:outbound|7000||" + WEB
            + ",rds:7000,tcp:PassthroughCluster";

    MeshFixture fixture;
    final Proxy proxy = GenerationPushMetricsTest.sidecar("10.0.0.1");

    @BeforeEach
    void setUp() throws Exception {
        fixture = MeshFixture.of("/meshes/shop.yaml");
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    static Arguments row(String name, String egress, Map<String, String> listeners, Map<String, List<String>> routes) {
        return Arguments.of(name, egress, listeners, routes);
    }

    static Stream<Arguments> egressPort() {
        return Stream.of(
                row("a port listener sees its hosts' services on that port only", """
                                - port: {number: 80, protocol: HTTP, name: http}
                                  hosts: ["other/*"]
                                """,
                        Map.of("0.0.0.0_80", "0.0.0.0:80 redirected rds:80"),
                        Map.of("80", List.of(DB + ":80", "allow_any"))),
                row("a port listener before the catch-all: each sees its own hosts", """
                                - port: {number: 3306, protocol: MONGO, name: mongo}
                                  hosts: ["other/*"]
                                - hosts: ["./*"]
                                """,
                        Map.of("240.0.0.2_3306", "240.0.0.2:3306 redirected tcp:outbound|3306||" + DB,
                                "0.0.0.0_80", "0.0.0.0:80 redirected rds:80",
                                "240.0.0.1_9000", "240.0.0.1:9000 redirected tcp:outbound|9000||" + WEB,
                                "0.0.0.0_7000", SNIFFED_WEB_7000),
                        Map.of("80", List.of(WEB + ":80", "allow_any"))),
                row("a port listener takes its port from the catch-all (istiod's locked entries)", """
                                - port: {number: 80, protocol: HTTP, name: http}
                                  hosts: ["./*"]
                                - hosts: ["*/*"]
                                """,
                        Map.of("0.0.0.0_80", "0.0.0.0:80 redirected rds:80",
                                "240.0.0.1_9000", "240.0.0.1:9000 redirected tcp:outbound|9000||" + WEB,
                                "0.0.0.0_7000", SNIFFED_WEB_7000,
                                "240.0.0.2_3306", "240.0.0.2:3306 redirected tcp:outbound|3306||" + DB,
                                "0.0.0.0_5432", "0.0.0.0:5432 redirected tcp:outbound|5432||pg.example.com"),
                        Map.of("80", List.of(WEB + ":80", "allow_any"))),
                row("the egress port's protocol decides the listener, not the service port's", """
                                - port: {number: 80, protocol: TCP, name: tcp}
                                  hosts: ["./web.shop.svc.cluster.local"]
                                """,
                        Map.of("240.0.0.1_80", "240.0.0.1:80 redirected tcp:outbound|80||" + WEB),
                        Map.of()));
    }

    static Stream<Arguments> egressBindAndCaptureMode() {
        return Stream.of(
                row("a bind with captureMode DEFAULT: that address, still taking redirected traffic", """
                                - port: {number: 9000, protocol: TCP, name: tcp}
                                  bind: 127.0.0.2
                                  hosts: ["./*"]
                                """,
                        Map.of("127.0.0.2_9000", "127.0.0.2:9000 redirected tcp:outbound|9000||" + WEB),
                        Map.of()),
                row("captureMode NONE without a bind: a real socket on 127.0.0.1", """
                                - port: {number: 80, protocol: HTTP, name: http}
                                  captureMode: NONE
                                  hosts: ["./*"]
                                """,
                        Map.of("127.0.0.1_80", "127.0.0.1:80 bound rds:80"),
                        Map.of("80", List.of(WEB + ":80", "allow_any"))),
                row("captureMode NONE with a bind: a real socket on the bind", """
                                - port: {number: 9000, protocol: TCP, name: tcp}
                                  bind: 127.0.0.5
                                  captureMode: NONE
                                  hosts: ["./*"]
                                """,
                        Map.of("127.0.0.5_9000", "127.0.0.5:9000 bound tcp:outbound|9000||" + WEB),
                        Map.of()),
                row("a catch-all with captureMode NONE binds every port on 127.0.0.1, a sniffed one per service", """
                                - hosts: ["./*"]
                                  captureMode: NONE
                                """,
                        Map.of("127.0.0.1_80", "127.0.0.1:80 bound rds:80",
                                "127.0.0.1_9000", "127.0.0.1:9000 bound tcp:outbound|9000||" + WEB,
                                "127.0.0.1_7000", "127.0.0.1:7000 bound rds:" + WEB + ":7000,tcp:outbound|7000||" + WEB),
                        Map.of("80", List.of(WEB + ":80", "allow_any"), WEB + ":7000", List.of(WEB + ":7000"))),
                row("a unix socket: a pipe with the socket's own route configuration", """
                                - port: {number: 0, protocol: HTTP, name: uds}
                                  bind: unix:///var/run/egress.sock
                                  hosts: ["./*"]
                                """,
                        Map.of("unix:///var/run/egress.sock_0",
                                "pipe:/var/run/egress.sock bound rds:unix:///var/run/egress.sock"),
                        Map.of("unix:///var/run/egress.sock", List.of(WEB + ":80", "allow_any"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("egressBindAndCaptureMode")
    void egressBindAndCaptureMode(String name, String egress, Map<String, String> listeners,
                                  Map<String, List<String>> routes) throws Exception {
        assertEgress(egress, listeners, routes);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("egressPort")
    void egressPort(String name, String egress, Map<String, String> listeners, Map<String, List<String>> routes)
            throws Exception {
        assertEgress(egress, listeners, routes);
    }

    /** The push after applying the web workload's Sidecar with {@code spec} (YAML under {@code spec:}). */
    PushContext pushWithSidecar(String spec) throws Exception {
        fixture.apply("""
                apiVersion: networking.istio.io/v1
                kind: Sidecar
                metadata: {name: web, namespace: shop}
                spec:
                  workloadSelector: {labels: {app: web}}
                """ + spec.indent(2));
        return fixture.push();
    }

    void assertEgress(String egress, Map<String, String> listeners, Map<String, List<String>> routes)
            throws Exception {
        PushContext push = pushWithSidecar("egress:\n" + egress);
        var scope = push.scope(proxy);
        Map<String, String> got = new TreeMap<>();
        for (Listener l : SidecarOutboundListenerBuilder.outbound(proxy, push, scope)) {
            got.put(l.getName(), outboundSummary(l));
        }
        assertEquals(new TreeMap<>(listeners), got);
        for (var e : routes.entrySet()) {
            RouteConfiguration rc = SidecarRouteBuilder.build(e.getKey(), push, scope).orElseThrow(
                    () -> new AssertionError("no route " + e.getKey()));
            assertEquals(e.getValue(), rc.getVirtualHostsList().stream().map(VirtualHost::getName).toList(),
                    "route " + e.getKey());
        }
    }

    static String outboundSummary(Listener l) throws InvalidProtocolBufferException {
        var a = l.getAddress();
        String address = a.hasPipe() ? "pipe:" + a.getPipe().getPath()
                : a.getSocketAddress().getAddress() + ":" + a.getSocketAddress().getPortValue();
        boolean bound = !l.hasBindToPort() || l.getBindToPort().getValue();
        List<String> chains = new ArrayList<>();
        for (FilterChain c : l.getFilterChainsList()) {
            Filter f = c.getFilters(c.getFiltersCount() - 1);
            if (f.getName().equals(EnvoyFilters.TCP_PROXY)) {
                chains.add("tcp:" + f.getTypedConfig().unpack(TcpProxy.class).getCluster());
            } else {
                chains.add("rds:" + f.getTypedConfig().unpack(HttpConnectionManager.class).getRds().getRouteConfigName());
            }
        }
        return address + " " + (bound ? "bound" : "redirected") + " " + String.join(",", chains);
    }

    static final String PERMISSIVE_HTTP_8080 = "0.0.0.0_8080>inbound|8080||,0.0.0.0_8080>inbound|8080||";
    /** Without a bind the chains carry the proxy's first global-unicast IP (istiod's getSidecarInboundBindIPs). */
    static final String POD_IP_HTTP_8080 = PERMISSIVE_HTTP_8080.replace("0.0.0.0_", "10.0.0.1_");
    static final String VIRTUAL_INBOUND_WITHOUT_8080 = "0.0.0.0:15006 redirected original_dst chains:";

    static Stream<Arguments> ingressBindAndCaptureMode() {
        return Stream.of(
                Arguments.of("no bind or captureMode: the port's chains on virtualInbound, named after the pod IP", "",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + POD_IP_HTTP_8080)),
                Arguments.of("a bind alone: still on virtualInbound, the chains named after the bind",
                        "bind: 10.0.0.1",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + POD_IP_HTTP_8080)),
                Arguments.of("a bind of 0.0.0.0: the chains named after it", "bind: 0.0.0.0",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + PERMISSIVE_HTTP_8080)),
                Arguments.of("captureMode IPTABLES is the redirection DEFAULT uses", "captureMode: IPTABLES",
                        Map.of("virtualInbound", "0.0.0.0:15006 redirected original_dst chains:" + POD_IP_HTTP_8080)),
                Arguments.of("captureMode NONE: a listener of its own at the pod IP, without original_dst",
                        "captureMode: NONE",
                        Map.of("virtualInbound", VIRTUAL_INBOUND_WITHOUT_8080,
                                "10.0.0.1_8080", "10.0.0.1:8080 bound chains:" + POD_IP_HTTP_8080)),
                Arguments.of("captureMode NONE with a bind: the listener at the bind", "captureMode: NONE\nbind: 127.0.0.2",
                        Map.of("virtualInbound", VIRTUAL_INBOUND_WITHOUT_8080,
                                "127.0.0.2_8080", "127.0.0.2:8080 bound chains:"
                                        + PERMISSIVE_HTTP_8080.replace("0.0.0.0_", "127.0.0.2_"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ingressBindAndCaptureMode")
    void ingressBindAndCaptureMode(String name, String fields, Map<String, String> expected) throws Exception {
        assertEquals(new TreeMap<>(expected), inboundWithIngress8080(proxy, fields));
    }

    /** Go's IsGlobalUnicast excludes loopback and link-local: without such an IP the wildcard stays. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"169.254.10.1", "127.0.0.1"})
    void ingressWithoutAGlobalUnicastIpIsNamedAndBoundAtTheWildcard(String ip) throws Exception {
        assertEquals(Map.of("virtualInbound", VIRTUAL_INBOUND_WITHOUT_8080,
                        "0.0.0.0_8080", "0.0.0.0:8080 bound chains:" + PERMISSIVE_HTTP_8080),
                inboundWithIngress8080(GenerationPushMetricsTest.sidecar(ip), "captureMode: NONE"));
    }

    /** The inbound listeners of {@code sidecar} under a Sidecar ingress on 8080 with {@code fields}, by name. */
    Map<String, String> inboundWithIngress8080(Proxy sidecar, String fields) throws Exception {
        PushContext push = pushWithSidecar("""
                ingress:
                - port: {number: 8080, protocol: HTTP, name: http}
                  defaultEndpoint: 127.0.0.1:18080
                """ + fields.indent(2) + """
                egress: [{hosts: ["./*"]}]
                """);
        Map<String, String> got = new TreeMap<>();
        for (Listener l : SidecarListenerBuilder.inboundListeners(sidecar, push)) {
            got.put(l.getName(), inboundSummary(l));
        }
        return got;
    }

    static String inboundSummary(Listener l) throws InvalidProtocolBufferException {
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
