package io.meshpilot.networking.telemetry;

import static io.meshpilot.networking.telemetry.TelemetryFixture.SERVICES;
import static io.meshpilot.networking.telemetry.TelemetryFixture.listener;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.Extension;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.envoy.extensions.stats.PluginConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istio-proxy's {@code istio.stats} filter, node in and LDS out, as istiod writes it for the same
 * Telemetries: the rows of istiod's TestTelemetryFilters (pilot/pkg/model/telemetry_test.go,
 * sidecar outbound HTTP unless named, expected PluginConfig as proto-name JSON), then rows for
 * the other listener classes and providers. The node is the one istio-agent sends (with
 * {@code PROXY_CONFIG}); httpbin's outbound listener 0.0.0.0_8000 (HTTP) and 0.0.0.0_9000 (TCP)
 * and its virtualInbound chains are read back and their typed configs decoded.
 */
class IstioProxyStatsTest {
    static final String STATS = "istio.stats";
    static final String MX = "istio.metadata_exchange";
    static final String STATS_TYPE = "type.googleapis.com/stats.PluginConfig";
    static final String COUNT_TAGS = "[{match: {metric: REQUEST_COUNT}, "
            + "tagOverrides: {remove: {operation: REMOVE}, add: {value: bar}}}]";
    /** istiod's {@code overrides}, under an entry that names providers. */
    static final String OVERRIDES = "  overrides: " + COUNT_TAGS;
    /** The same as an entry of its own, naming no providers. */
    static final String OVERRIDES_ONLY = "- overrides: " + COUNT_TAGS;
    /** istiod's {@code cfg}: REQUEST_COUNT without tag "remove" and with add=bar. */
    static final String CFG = "{\"metrics\":[{\"dimensions\":{\"add\":\"bar\"},\"name\":\"requests_total\","
            + "\"tags_to_remove\":[\"remove\"]}]}";
    static final List<String> ALL = List.of("request_messages_total", "response_messages_total", "requests_total",
            "request_duration_milliseconds", "request_bytes", "response_bytes", "tcp_connections_closed_total",
            "tcp_connections_opened_total", "tcp_received_bytes_total", "tcp_sent_bytes_total");

    /** The node istio-agent sends for httpbin-1: PROXY_CONFIG is a struct of the effective ProxyConfig. */
    static Node agentNode() {
        return plainNode().toBuilder().setMetadata(plainNode().getMetadata().toBuilder()
                .putFields("PROXY_CONFIG", Value.newBuilder().setStructValue(Struct.newBuilder()
                        .putFields("discoveryAddress", Value.newBuilder().setStringValue("istiod.istio-system.svc:15012")
                                .build())).build())).build();
    }

    /** The same workload on plain Envoy: no agent, no PROXY_CONFIG. */
    static Node plainNode() {
        return Node.newBuilder().setId("sidecar~10.1.1.1~httpbin-1.foo~foo.svc.cluster.local")
                .setMetadata(Struct.newBuilder()
                        .putFields("NAMESPACE", Value.newBuilder().setStringValue("foo").build())
                        .putFields("LABELS", Value.newBuilder().setStructValue(Struct.newBuilder()
                                .putFields("app", Value.newBuilder().setStringValue("httpbin").build())
                                .putFields("version", Value.newBuilder().setStringValue("v1").build())).build()))
                .build();
    }

    static String telemetry(String namespace, String name, String metrics) {
        return """
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: %s, namespace: %s}
                spec:
                  metrics:
                %s
                ---
                """.formatted(name, namespace, metrics.indent(2).stripTrailing());
    }

    static String root(String metrics) {
        return telemetry("istio-system", "default", metrics);
    }

    static String ns(String metrics) {
        return telemetry("foo", "default", metrics);
    }

    static final String PROMETHEUS = "- providers: [{name: prometheus}]";
    static final String DISABLE_ALL = PROMETHEUS + "\n  overrides: [{match: {metric: ALL_METRICS}, disabled: true}]";

    static String allWith(String add) {
        List<String> out = new ArrayList<>();
        for (String m : ALL) {
            out.add("{\"dimensions\":{\"add\":\"" + (m.equals("requests_total") ? add : "bar") + "\"},\"name\":\"" + m
                    + "\",\"tags_to_remove\":[\"remove\"]}");
        }
        return "{\"metrics\":[" + String.join(",", out) + "]}";
    }

    static final String ALL_TAGS = "{tagOverrides: {remove: {operation: REMOVE}, add: {value: bar}}}";
    static final String COUNT_OVERRIDE = "{match: {metric: REQUEST_COUNT}, tagOverrides: {add: {value: add-override}}}";

    /** name, Telemetry YAML, mesh defaultProviders.metrics, class, TCP?, expected JSON (null: no filter). */
    static Stream<Arguments> istiodCases() {
        return Stream.of(
                Arguments.of("empty", "", "", ListenerClass.SIDECAR_OUTBOUND, false, null),
                Arguments.of("disabled-prometheus", root(DISABLE_ALL), "", ListenerClass.SIDECAR_OUTBOUND, false, null),
                Arguments.of("disabled-prometheus-implicit",
                        root(PROMETHEUS + "\n  overrides: [{disabled: true}]"), "", ListenerClass.SIDECAR_OUTBOUND,
                        false, null),
                Arguments.of("disabled-then-empty", root(DISABLE_ALL) + ns(PROMETHEUS), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, null),
                Arguments.of("disabled-then-reenable",
                        root(DISABLE_ALL) + ns(PROMETHEUS + "\n  overrides: [{match: {metric: ALL_METRICS}}]"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, "{\"metrics\":["
                                + String.join(",", ALL.stream().map(m -> "{\"name\":\"" + m + "\"}").toList()) + "]}"),
                Arguments.of("disabled-then-overrides", root(DISABLE_ALL) + ns(PROMETHEUS + "\n" + OVERRIDES), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, CFG),
                Arguments.of("default prometheus", root(PROMETHEUS), "", ListenerClass.SIDECAR_OUTBOUND, false, "{}"),
                Arguments.of("default provider prometheus", "", "[prometheus]", ListenerClass.SIDECAR_OUTBOUND, false,
                        "{}"),
                Arguments.of("prometheus overrides", root(PROMETHEUS + "\n" + OVERRIDES), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, CFG),
                Arguments.of("prometheus overrides all metrics", root(PROMETHEUS + "\n  overrides: [" + ALL_TAGS + "]"),
                        "", ListenerClass.SIDECAR_OUTBOUND, false, allWith("bar")),
                Arguments.of("prometheus overrides all metrics first",
                        root(PROMETHEUS + "\n  overrides: [" + ALL_TAGS + ", " + COUNT_OVERRIDE + "]"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, allWith("add-override")),
                Arguments.of("prometheus overrides all metrics secondary",
                        root(PROMETHEUS + "\n  overrides: [" + COUNT_OVERRIDE + ", " + ALL_TAGS + "]"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, allWith("bar")),
                Arguments.of("prometheus overrides TCP", root(PROMETHEUS + "\n" + OVERRIDES), "",
                        ListenerClass.SIDECAR_OUTBOUND, true, CFG),
                Arguments.of("reporting-interval", root(PROMETHEUS + "\n  reportingInterval: 15s"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, "{\"tcp_reporting_duration\":\"15s\"}"),
                Arguments.of("override-interval", root(PROMETHEUS + "\n  reportingInterval: 15s")
                                + ns(PROMETHEUS + "\n  reportingInterval: 10s"), "", ListenerClass.SIDECAR_OUTBOUND, false,
                        "{\"tcp_reporting_duration\":\"10s\"}"),
                Arguments.of("namespace overrides merge without provider",
                        root(PROMETHEUS) + ns(OVERRIDES_ONLY), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, CFG),
                Arguments.of("namespace overrides merge with default provider",
                        ns(OVERRIDES_ONLY), "[prometheus]",
                        ListenerClass.SIDECAR_OUTBOUND, false, CFG),
                // MeshPilot's rows: the other classes, sides and providers
                Arguments.of("inbound disables the host header fallback", root(PROMETHEUS), "",
                        ListenerClass.SIDECAR_INBOUND, false, "{\"disable_host_header_fallback\":true}"),
                Arguments.of("inbound TCP too", root(PROMETHEUS), "", ListenerClass.SIDECAR_INBOUND, true,
                        "{\"disable_host_header_fallback\":true}"),
                Arguments.of("a SERVER override leaves the client side alone",
                        root(PROMETHEUS + "\n  overrides: [{match: {metric: REQUEST_COUNT, mode: SERVER}, disabled: true}]"),
                        "", ListenerClass.SIDECAR_OUTBOUND, false, "{}"),
                Arguments.of("a SERVER override reaches the server side",
                        root(PROMETHEUS + "\n  overrides: [{match: {metric: REQUEST_COUNT, mode: SERVER}, disabled: true}]"),
                        "", ListenerClass.SIDECAR_INBOUND, false,
                        "{\"disable_host_header_fallback\":true,\"metrics\":[{\"name\":\"requests_total\",\"drop\":true}]}"),
                Arguments.of("CLIENT all disabled: no outbound filter",
                        root(PROMETHEUS + "\n  overrides: [{match: {mode: CLIENT}, disabled: true}]"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, null),
                Arguments.of("CLIENT all disabled: inbound kept",
                        root(PROMETHEUS + "\n  overrides: [{match: {mode: CLIENT}, disabled: true}]"), "",
                        ListenerClass.SIDECAR_INBOUND, false, "{\"disable_host_header_fallback\":true}"),
                Arguments.of("a stackdriver provider gets no stats filter", root("- providers: [{name: stackdriver}]"),
                        "", ListenerClass.SIDECAR_OUTBOUND, false, null),
                Arguments.of("REQUEST_COUNT disabled and a tag overridden",
                        root(PROMETHEUS + "\n  overrides: [{match: {metric: REQUEST_COUNT}, disabled: true}, "
                                + "{match: {metric: REQUEST_DURATION}, tagOverrides: {request_protocol: {operation: REMOVE}, "
                                + "source_app: {value: \"filter_state['app']\"}}}]"), "",
                        ListenerClass.SIDECAR_OUTBOUND, false, "{\"metrics\":[{\"name\":\"requests_total\",\"drop\":true},"
                                + "{\"dimensions\":{\"source_app\":\"filter_state['app']\"},"
                                + "\"name\":\"request_duration_milliseconds\",\"tags_to_remove\":[\"request_protocol\"]}]}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("istiodCases")
    void statsFilterAsIstiodWritesIt(String name, String telemetries, String defaultProviders, ListenerClass cls,
                                     boolean tcp, String expected) throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            if (!telemetries.isEmpty()) {
                fixture.apply(telemetries);
            }
            MeshConfig mesh = defaultProviders.isEmpty() ? new MeshConfigLoader().defaults()
                    : new MeshConfigLoader().parseMesh("mesh.yaml", "defaultProviders: {metrics: " + defaultProviders + "}");
            PushContext push = fixture.push(mesh);
            List<Listener> lds = SidecarListenerBuilder.listeners(Proxy.fromNode(agentNode()), push,
                    push.scope(Proxy.fromNode(agentNode())));
            List<Any> stats = cls == ListenerClass.SIDECAR_INBOUND
                    ? statsOf(chain(listener(lds, "virtualInbound"), tcp ? "0.0.0.0_9000" : "0.0.0.0_8000"), tcp)
                    : statsOf(listener(lds, tcp ? "0.0.0.0_9000" : "0.0.0.0_8000").getFilterChains(0), tcp);
            if (expected == null) {
                assertEquals(List.of(), stats, name);
                return;
            }
            assertEquals(1, stats.size(), name + ": one istio.stats filter: " + stats);
            assertEquals(STATS_TYPE, stats.get(0).getTypeUrl());
            assertEquals(JsonParser.parseString(expected), protoNames(stats.get(0).unpack(PluginConfig.class)), name);
        }
    }

    static JsonElement protoNames(PluginConfig c) throws Exception {
        return JsonParser.parseString(JsonFormat.printer().preservingProtoFieldNames().print(c));
    }

    /** The configs of the chain's istio.stats filters: the connection manager's, or the chain's own for TCP. */
    static List<Any> statsOf(FilterChain chain, boolean tcp) throws Exception {
        List<Any> out = new ArrayList<>();
        if (tcp) {
            chain.getFiltersList().stream().filter(f -> f.getName().equals(STATS)).forEach(f -> out.add(f.getTypedConfig()));
        } else {
            hcmFilters(chain).stream().filter(h -> h.getName().equals(STATS)).forEach(h -> out.add(h.getTypedConfig()));
        }
        return out;
    }

    /** The HTTP filters of the chain's connection manager. */
    static List<HttpFilter> hcmFilters(FilterChain chain) throws Exception {
        for (Filter f : chain.getFiltersList()) {
            if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                return f.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFiltersList();
            }
        }
        throw new AssertionError("no connection manager in " + chain.getName());
    }

    static FilterChain chain(Listener l, String name) {
        return l.getFilterChainsList().stream().filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no chain " + name + " in " + l.getName() + ": "
                        + l.getFilterChainsList().stream().map(FilterChain::getName).toList()));
    }

    static List<String> names(FilterChain chain) {
        return chain.getFiltersList().stream().map(Filter::getName).toList();
    }

    static List<String> httpNames(FilterChain chain) throws Exception {
        return hcmFilters(chain).stream().map(HttpFilter::getName).toList();
    }

    @Test
    void filtersGoWhereIstiodPutsThem() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES).apply(root(PROMETHEUS));
            PushContext push = fixture.push();
            Proxy proxy = Proxy.fromNode(agentNode());
            List<Listener> lds = SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
            assertEquals(List.of(MX, "envoy.filters.http.grpc_stats", "istio.alpn", "envoy.filters.http.fault",
                    "envoy.filters.http.cors", STATS, "envoy.filters.http.router"),
                    httpNames(listener(lds, "0.0.0.0_8000").getFilterChains(0)), "outbound HTTP");
            assertEquals(List.of(STATS, "envoy.filters.network.tcp_proxy"),
                    names(listener(lds, "0.0.0.0_9000").getFilterChains(0)), "outbound TCP: no network MX");
            Listener inbound = listener(lds, "virtualInbound");
            assertEquals(List.of(MX, "envoy.filters.network.http_connection_manager"),
                    names(chain(inbound, "0.0.0.0_8000")), "inbound HTTP: network MX before the HCM, no network stats");
            assertEquals(List.of(MX, "envoy.filters.http.grpc_stats", "envoy.filters.http.fault",
                    "envoy.filters.http.cors", STATS, "envoy.filters.http.router"),
                    httpNames(chain(inbound, "0.0.0.0_8000")), "inbound HTTP filters");
            assertEquals(List.of(MX, STATS, "envoy.filters.network.tcp_proxy"), names(chain(inbound, "0.0.0.0_9000")),
                    "inbound TCP");
            for (Listener l : lds) {
                for (FilterChain c : l.getFilterChainsList()) {
                    if (names(c).contains("envoy.filters.network.tcp_proxy")) {
                        assertTrue(names(c).contains(STATS), l.getName() + " " + c.getName() + ": " + names(c));
                    }
                }
            }
        }
    }

    @Test
    void metadataExchangeConfigsAreIstiodsTypedStructs() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            PushContext push = fixture.push();
            Proxy proxy = Proxy.fromNode(agentNode());
            List<Listener> lds = SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
            Filter outboundHcm = listener(lds, "0.0.0.0_8000").getFilterChains(0).getFilters(0);
            HttpFilter outboundMx = outboundHcm.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFilters(0);
            assertEquals(JsonParser.parseString("""
                    {"@type":"type.googleapis.com/udpa.type.v1.TypedStruct",
                     "typeUrl":"type.googleapis.com/io.istio.http.peer_metadata.Config",
                     "value":{"upstream_discovery":[{"istio_headers":{}},{"workload_discovery":{}}],
                              "upstream_propagation":[{"istio_headers":{}}]}}"""),
                    TelemetryFixture.json(outboundMx.getTypedConfig()));
            Filter inboundMx = chain(listener(lds, "virtualInbound"), "0.0.0.0_9000").getFilters(0);
            assertEquals(JsonParser.parseString("""
                    {"@type":"type.googleapis.com/udpa.type.v1.TypedStruct",
                     "typeUrl":"type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange",
                     "value":{"protocol":"istio-peer-exchange","enable_discovery":true}}"""),
                    TelemetryFixture.json(inboundMx.getTypedConfig()));
            HttpFilter inboundHttpMx = httpFilter(chain(listener(lds, "virtualInbound"), "0.0.0.0_8000"), MX);
            assertEquals(JsonParser.parseString("""
                    {"@type":"type.googleapis.com/udpa.type.v1.TypedStruct",
                     "typeUrl":"type.googleapis.com/io.istio.http.peer_metadata.Config",
                     "value":{"downstream_discovery":[{"istio_headers":{}},{"workload_discovery":{}}],
                              "downstream_propagation":[{"istio_headers":{}}]}}"""),
                    TelemetryFixture.json(inboundHttpMx.getTypedConfig()));
        }
    }

    static HttpFilter httpFilter(FilterChain chain, String name) throws Exception {
        return hcmFilters(chain).stream().filter(h -> h.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + name + " in " + chain.getName()));
    }

    @Test
    void plainEnvoyGetsNoneOfIstiosFilters() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES).apply(root(PROMETHEUS));
            PushContext push = fixture.push();
            Proxy plain = Proxy.fromNode(plainNode());
            String all = TelemetryFixture.json(SidecarListenerBuilder.listeners(plain, push, push.scope(plain)))
                    .toString();
            assertTrue(!all.contains("istio.stats") && !all.contains("istio.metadata_exchange")
                    && !all.contains("grpc_stats"), all);
        }
    }

    @Test
    void anEnvoyListingIstiosStatsExtensionIsIstioProxy() throws Exception {
        Node withExtension = plainNode().toBuilder().addExtensions(Extension.newBuilder()
                .setName("envoy.filters.http.istio_stats").setCategory("envoy.filters.http")).build();
        assertTrue(Proxy.fromNode(withExtension).istioProxy());
        assertTrue(Proxy.fromNode(agentNode()).istioProxy());
        assertTrue(!Proxy.fromNode(plainNode()).istioProxy());
    }

    @Test
    void metadataExchangeFollowsTheServersSwitches() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            Proxy proxy = Proxy.fromNode(agentNode());
            PushContext off = fixture.push(new MeshConfigLoader().defaults(),
                    new MetadataExchange(false, List.of()));
            List<Listener> lds = SidecarListenerBuilder.listeners(proxy, off, off.scope(proxy));
            assertTrue(!TelemetryFixture.json(lds).toString().contains(MX), "PILOT_ENABLE_METADATA_EXCHANGE=false");
            PushContext labels = fixture.push(new MeshConfigLoader().defaults(),
                    new MetadataExchange(true, List.of("app.kubernetes.io/part-of", "team")));
            Filter mx = chain(listener(SidecarListenerBuilder.listeners(proxy, labels, labels.scope(proxy)),
                    "virtualInbound"), "0.0.0.0_9000").getFilters(0);
            assertEquals(JsonParser.parseString("[\"app.kubernetes.io/part-of\",\"team\"]"),
                    TelemetryFixture.json(mx.getTypedConfig()).getAsJsonObject().getAsJsonObject("value")
                            .get("additional_labels"));
        }
    }
}
