package io.meshpilot.networking.envoyfilter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import com.google.protobuf.Message;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.Cors;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.filters.http.lua.v3.Lua;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.model.EnvoyFilterIndex;
import io.meshpilot.model.Locality;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.networking.EnvoyTypes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * EnvoyFilter patches per applyTo and operation, the patched object compared as protobuf JSON
 * with what istiod's envoyfilter package produces for the same input (its cluster_patch,
 * listener_patch and rc_patch rules: Durations replaced whole on MERGE, typed configs merged
 * by type, a transport socket of the same name merged alone, inserts at the sub-filter, the
 * insert operations as ADD where they have no list, ADD with context ANY only outbound).
 */
class EnvoyFilterPatchesTest {
    static final String ROOT = "istio-system";
    static final TypeRegistry TYPES = TypeRegistry.newBuilder()
            .add(EnvoyTypes.REGISTRY.find("envoy.config.listener.v3.Listener"))
            .add(HttpConnectionManager.getDescriptor())
            .add(Router.getDescriptor())
            .add(HTTPFault.getDescriptor())
            .add(Cors.getDescriptor())
            .add(Lua.getDescriptor())
            .add(TcpProxy.getDescriptor())
            .add(UpstreamTlsContext.getDescriptor())
            .add(TlsInspector.getDescriptor())
            .build();

    static final Proxy SIDECAR = proxy("shop", Map.of("app", "web"), "1.24.2", Map.of("CLUSTER_ID", "east"));

    static Proxy proxy(String ns, Map<String, String> labels, String version, Map<String, String> metadata) {
        return new Proxy("sidecar~10.0.0.1~web-1." + ns + "~" + ns + ".svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.0.0.1"), "web-1." + ns, ns + ".svc.cluster.local", ns, labels, "Kubernetes", version, "",
                "", "", Locality.NONE, metadata);
    }

    /** The patches of {@code yaml}'s EnvoyFilters (namespace shop unless given) for {@code proxy}. */
    static MergedEnvoyFilters patches(String yaml, Proxy proxy) {
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("test.yaml", yaml);
        assertEquals(List.of(), r.errors());
        // creation times as the store would set them (the parser leaves them to the store)
        EnvoyFilterIndex index = EnvoyFilterIndex.of(r.configs().stream().map(c -> c.annotations().containsKey("created")
                ? c.withMeta(c.resourceVersion(), c.generation(), Instant.parse(c.annotations().get("created")))
                : c).toList());
        assertTrue(index.problems().isEmpty(), index.problems().toString());
        return index.forProxy(proxy, ROOT);
    }

    /** One EnvoyFilter in namespace shop with one patch: applyTo, match (YAML flow) and patch. */
    static String ef(String applyTo, String match, String patch) {
        return ef("ef", applyTo, match, patch);
    }

    static String ef(String name, String applyTo, String match, String patch) {
        return """
                ---
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: %s, namespace: shop}
                spec:
                  configPatches:
                  - applyTo: %s
                    match: %s
                    patch: %s
                """.formatted(name, applyTo, match, patch);
    }

    static <M extends Message> M parse(String json, M.Builder b) {
        try {
            JsonFormat.parser().usingTypeRegistry(TYPES).merge(json, b);
        } catch (Exception e) {
            throw new AssertionError(json, e);
        }
        @SuppressWarnings("unchecked")
        M m = (M) b.build();
        return m;
    }

    static String json(Message m) {
        try {
            return JsonParser.parseString(JsonFormat.printer().usingTypeRegistry(TYPES).print(m)).toString();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static String jsonList(List<? extends Message> ms) {
        return ms.stream().map(EnvoyFilterPatchesTest::json).toList().toString();
    }

    static String canonical(String json) {
        return JsonParser.parseString(json).toString();
    }

    // ---- CLUSTER ----

    static final String CLUSTERS = """
            [{"name":"outbound|80||web.shop.svc.cluster.local","connectTimeout":"10s","type":"EDS"},
             {"name":"outbound|9080|v1|reviews.shop.svc.cluster.local","connectTimeout":"10s","type":"EDS",
              "transportSocket":{"name":"envoy.transport_sockets.tls","typedConfig":{
                "@type":"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
                "commonTlsContext":{"alpnProtocols":["istio"]},"sni":"outbound_.9080_.v1_.reviews"}}}]""";

    static List<Cluster> clusters() {
        List<Cluster> out = new ArrayList<>();
        for (var e : JsonParser.parseString(CLUSTERS).getAsJsonArray()) {
            out.add(parse(e.toString(), Cluster.newBuilder()));
        }
        return out;
    }

    static Stream<Arguments> clusterCases() {
        String web = "{\"name\":\"outbound|80||web.shop.svc.cluster.local\",\"type\":\"EDS\",\"connectTimeout\":\"10s\"}";
        String reviews = "{\"name\":\"outbound|9080|v1|reviews.shop.svc.cluster.local\",\"type\":\"EDS\","
                + "\"connectTimeout\":\"10s\",\"transportSocket\":{\"name\":\"envoy.transport_sockets.tls\",\"typedConfig\":{"
                + "\"@type\":\"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext\","
                + "\"commonTlsContext\":{\"alpnProtocols\":[\"istio\"]},\"sni\":\"outbound_.9080_.v1_.reviews\"}}}";
        return Stream.of(
                // istiod's merge replaces a Duration: 0.5s, not protobuf's field merge 10.5s
                Arguments.of("MERGE connect_timeout by service and port", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{context: SIDECAR_OUTBOUND, cluster: {service: web.shop.svc.cluster.local, portNumber: 80}}",
                                "{operation: MERGE, value: {connect_timeout: 0.5s, per_connection_buffer_limit_bytes: 1024}}"),
                        "[" + web.replace("\"connectTimeout\":\"10s\"", "\"connectTimeout\":\"0.500s\",\"perConnectionBufferLimitBytes\":1024") + "," + reviews + "]"),
                Arguments.of("MERGE misses another port", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{cluster: {service: web.shop.svc.cluster.local, portNumber: 81}}",
                                "{operation: MERGE, value: {connect_timeout: 1s}}"),
                        "[" + web + "," + reviews + "]"),
                Arguments.of("MERGE misses another context", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{context: SIDECAR_INBOUND}", "{operation: MERGE, value: {connect_timeout: 1s}}"),
                        "[" + web + "," + reviews + "]"),
                Arguments.of("REMOVE by subset", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{cluster: {subset: v1}}", "{operation: REMOVE}"), "[" + web + "]"),
                Arguments.of("REMOVE by name", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{cluster: {name: \"outbound|80||web.shop.svc.cluster.local\"}}", "{operation: REMOVE}"),
                        "[" + reviews + "]"),
                Arguments.of("ADD with context ANY: outbound", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{}", "{operation: ADD, value: {name: extra, type: STRICT_DNS, connect_timeout: 2s}}"),
                        "[" + web + "," + reviews + ",{\"name\":\"extra\",\"type\":\"STRICT_DNS\",\"connectTimeout\":\"2s\"}]"),
                Arguments.of("ADD with context ANY: not inbound", PatchContext.SIDECAR_INBOUND,
                        ef("CLUSTER", "{}", "{operation: ADD, value: {name: extra}}"), "[" + web + "," + reviews + "]"),
                Arguments.of("INSERT_FIRST means ADD for clusters", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{}", "{operation: INSERT_FIRST, value: {name: extra}}"),
                        "[" + web + "," + reviews + ",{\"name\":\"extra\"}]"),
                // a transport socket of the cluster's socket name: only the typed configs merge,
                // the patch's other fields are not applied (istiod's mergeTransportSocketCluster)
                Arguments.of("MERGE transport socket of the same name", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{cluster: {subset: v1}}", """
                                {operation: MERGE, value: {connect_timeout: 3s, transport_socket: {name: envoy.transport_sockets.tls,
                                  typed_config: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext,
                                    sni: other.example.com}}}}"""),
                        "[" + web + "," + reviews.replace("outbound_.9080_.v1_.reviews", "other.example.com") + "]"),
                Arguments.of("MERGE transport socket into a cluster without one", PatchContext.SIDECAR_OUTBOUND,
                        ef("CLUSTER", "{cluster: {portNumber: 80}}", """
                                {operation: MERGE, value: {connect_timeout: 3s, transport_socket: {name: envoy.transport_sockets.tls,
                                  typed_config: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext,
                                    sni: web.example.com}}}}"""),
                        "[" + web.replace("\"connectTimeout\":\"10s\"}", "\"connectTimeout\":\"10s\",\"transportSocket\":{\"name\":"
                                + "\"envoy.transport_sockets.tls\",\"typedConfig\":{\"@type\":\"type.googleapis.com/envoy."
                                + "extensions.transport_sockets.tls.v3.UpstreamTlsContext\",\"sni\":\"web.example.com\"}}}") + ","
                                + reviews + "]"));
    }

    @ParameterizedTest(name = "CLUSTER {0}")
    @MethodSource("clusterCases")
    void clusterPatches(String name, PatchContext context, String yaml, String expected) {
        List<Cluster> out = EnvoyFilterPatches.clusterMessages(context, patches(yaml, SIDECAR), clusters());
        assertEquals(canonical(expected), canonical(jsonList(out)));
    }

    @Test
    void inboundClustersMatchTheServicesBehindThem() {
        Cluster inbound = Cluster.newBuilder().setName("inbound|8080||").build();
        MergedEnvoyFilters efw = patches(ef("CLUSTER", "{context: SIDECAR_INBOUND, cluster: {service: web.shop.svc.cluster.local, portNumber: 8080}}",
                "{operation: MERGE, value: {per_connection_buffer_limit_bytes: 1}}"), SIDECAR);
        assertEquals(1, EnvoyFilterPatches.clusterMessages(PatchContext.SIDECAR_INBOUND, efw, List.of(inbound),
                Map.of("inbound|8080||", List.of("web.shop.svc.cluster.local"))).getFirst().getPerConnectionBufferLimitBytes().getValue());
        assertEquals(0, EnvoyFilterPatches.clusterMessages(PatchContext.SIDECAR_INBOUND, efw, List.of(inbound),
                Map.of("inbound|8080||", List.of("db.shop.svc.cluster.local"))).getFirst().getPerConnectionBufferLimitBytes().getValue());
    }

    // ---- LISTENER, LISTENER_FILTER, FILTER_CHAIN, NETWORK_FILTER, HTTP_FILTER ----

    static final String HCM_80 = """
            {"name":"envoy.filters.network.http_connection_manager","typedConfig":{
              "@type":"type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
              "statPrefix":"outbound_0.0.0.0_80","rds":{"routeConfigName":"80"},"httpFilters":[
              {"name":"envoy.filters.http.fault","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault"}},
              {"name":"envoy.filters.http.cors","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors"}},
              {"name":"envoy.filters.http.router","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}]}}""";
    static final String TCP_9000 = """
            {"name":"envoy.filters.network.tcp_proxy","typedConfig":{
              "@type":"type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
              "statPrefix":"outbound|9000||db","cluster":"outbound|9000||db"}}""";

    static List<Listener> listeners() {
        return List.of(
                parse("""
                        {"name":"0.0.0.0_80","address":{"socketAddress":{"address":"0.0.0.0","portValue":80}},
                         "filterChains":[{"filters":[%s]}]}""".formatted(HCM_80), Listener.newBuilder()),
                parse("""
                        {"name":"10.0.0.5_9000","address":{"socketAddress":{"address":"10.0.0.5","portValue":9000}},
                         "listenerFilters":[{"name":"envoy.filters.listener.tls_inspector","typedConfig":{
                           "@type":"type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector"}}],
                         "filterChains":[{"name":"sni-a","filterChainMatch":{"serverNames":["a.example.com"],"transportProtocol":"tls"},
                           "filters":[%s]},
                          {"name":"plain","filters":[%s]}]}""".formatted(TCP_9000, TCP_9000), Listener.newBuilder()));
    }

    /** A listener list as names: listener[listener filters]{chain: network filters (HTTP filters)}. */
    static String shape(List<Listener> ls) {
        StringBuilder b = new StringBuilder();
        for (Listener l : ls) {
            b.append(l.getName());
            if (l.getListenerFiltersCount() > 0) {
                b.append(l.getListenerFiltersList().stream().map(f -> short_(f.getName())).toList());
            }
            b.append('{');
            for (FilterChain fc : l.getFilterChainsList()) {
                b.append(fc.getName()).append(':');
                for (Filter f : fc.getFiltersList()) {
                    b.append(' ').append(short_(f.getName()));
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        try {
                            b.append(f.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFiltersList().stream()
                                    .map(h -> short_(h.getName())).toList().toString().replace("[", "(").replace("]", ")"));
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                }
                b.append(';');
            }
            b.append("} ");
        }
        return b.toString().trim();
    }

    static String short_(String name) {
        return name.substring(name.lastIndexOf('.') + 1);
    }

    static final String BEFORE = "0.0.0.0_80{: http_connection_manager(fault, cors, router);} "
            + "10.0.0.5_9000[tls_inspector]{sni-a: tcp_proxy;plain: tcp_proxy;}";
    static final String LUA = """
            {name: envoy.filters.http.lua, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua,
              default_source_code: {inline_string: "function envoy_on_request(h) end"}}}""";
    static final String HCM_MATCH = "{context: SIDECAR_OUTBOUND, listener: {portNumber: 80, filterChain: {filter: "
            + "{name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}}}}";
    static final String TCP_MATCH = "{listener: {name: 10.0.0.5_9000, filterChain: {filter: {name: envoy.filters.network.tcp_proxy}}}}";
    static final String TCP_RBAC = """
            {name: envoy.filters.network.rbac, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC, stat_prefix: x}}""";

    static Stream<Arguments> listenerCases() {
        return Stream.of(
                Arguments.of("LISTENER MERGE by port", ef("LISTENER", "{listener: {portNumber: 9000}}",
                        "{operation: MERGE, value: {per_connection_buffer_limit_bytes: 4096}}"), BEFORE),
                Arguments.of("LISTENER REMOVE by name", ef("LISTENER", "{listener: {name: 0.0.0.0_80}}", "{operation: REMOVE}"),
                        "10.0.0.5_9000[tls_inspector]{sni-a: tcp_proxy;plain: tcp_proxy;}"),
                Arguments.of("LISTENER ADD (outbound)", ef("LISTENER", "{context: SIDECAR_OUTBOUND}",
                        "{operation: ADD, value: {name: extra, address: {socket_address: {address: 0.0.0.0, port_value: 7000}}}}"),
                        BEFORE + " extra{}"),
                Arguments.of("LISTENER ADD of another context", ef("LISTENER", "{context: GATEWAY}",
                        "{operation: ADD, value: {name: extra}}"), BEFORE),
                Arguments.of("LISTENER_FILTER REMOVE", ef("LISTENER_FILTER",
                        "{listener: {listenerFilter: envoy.filters.listener.tls_inspector}}", "{operation: REMOVE}"),
                        BEFORE.replace("[tls_inspector]", "")),
                Arguments.of("LISTENER_FILTER INSERT_FIRST", ef("LISTENER_FILTER", "{listener: {portNumber: 9000}}",
                        "{operation: INSERT_FIRST, value: {name: envoy.filters.listener.http_inspector}}"),
                        BEFORE.replace("[tls_inspector]", "[http_inspector, tls_inspector]")),
                Arguments.of("FILTER_CHAIN REMOVE by SNI", ef("FILTER_CHAIN",
                        "{listener: {filterChain: {sni: a.example.com}}}", "{operation: REMOVE}"),
                        BEFORE.replace("sni-a: tcp_proxy;", "")),
                Arguments.of("FILTER_CHAIN REMOVE by transport protocol", ef("FILTER_CHAIN",
                        "{listener: {portNumber: 9000, filterChain: {transportProtocol: tls}}}", "{operation: REMOVE}"),
                        BEFORE.replace("sni-a: tcp_proxy;", "")),
                Arguments.of("FILTER_CHAIN ADD", ef("FILTER_CHAIN", "{listener: {name: 10.0.0.5_9000}}",
                        "{operation: ADD, value: {name: added, filters: [" + TCP_RBAC + "]}}"),
                        BEFORE.replace("plain: tcp_proxy;", "plain: tcp_proxy;added: rbac;")),
                Arguments.of("FILTER_CHAIN MERGE by name", ef("FILTER_CHAIN", "{listener: {filterChain: {name: plain}}}",
                        "{operation: MERGE, value: {name: renamed}}"), BEFORE.replace("plain:", "renamed:")),
                Arguments.of("NETWORK_FILTER INSERT_BEFORE tcp_proxy", ef("NETWORK_FILTER", TCP_MATCH,
                        "{operation: INSERT_BEFORE, value: " + TCP_RBAC + "}"),
                        BEFORE.replace("sni-a: tcp_proxy;plain: tcp_proxy;", "sni-a: rbac tcp_proxy;plain: rbac tcp_proxy;")),
                Arguments.of("NETWORK_FILTER INSERT_AFTER on one chain", ef("NETWORK_FILTER",
                        "{listener: {filterChain: {name: sni-a, filter: {name: envoy.filters.network.tcp_proxy}}}}",
                        "{operation: INSERT_AFTER, value: " + TCP_RBAC + "}"),
                        BEFORE.replace("sni-a: tcp_proxy;", "sni-a: tcp_proxy rbac;")),
                Arguments.of("NETWORK_FILTER REPLACE", ef("NETWORK_FILTER", TCP_MATCH, "{operation: REPLACE, value: " + TCP_RBAC + "}"),
                        BEFORE.replace("sni-a: tcp_proxy;plain: tcp_proxy;", "sni-a: rbac;plain: rbac;")),
                Arguments.of("NETWORK_FILTER REMOVE", ef("NETWORK_FILTER", HCM_MATCH.replace(", subFilter: {name: envoy.filters.http.router}", ""),
                        "{operation: REMOVE}"), BEFORE.replace(": http_connection_manager(fault, cors, router);", ":;")),
                Arguments.of("HTTP_FILTER INSERT_BEFORE router (Lua, Istio's sample)", ef("HTTP_FILTER", HCM_MATCH,
                        "{operation: INSERT_BEFORE, value: " + LUA + "}"), BEFORE.replace("cors, router", "cors, lua, router")),
                Arguments.of("HTTP_FILTER INSERT_AFTER fault", ef("HTTP_FILTER", HCM_MATCH.replace("http.router", "http.fault"),
                        "{operation: INSERT_AFTER, value: " + LUA + "}"), BEFORE.replace("fault, cors", "fault, lua, cors")),
                Arguments.of("HTTP_FILTER INSERT_FIRST", ef("HTTP_FILTER", HCM_MATCH, "{operation: INSERT_FIRST, value: " + LUA + "}"),
                        BEFORE.replace("(fault", "(lua, fault")),
                Arguments.of("HTTP_FILTER ADD", ef("HTTP_FILTER", HCM_MATCH, "{operation: ADD, value: " + LUA + "}"),
                        BEFORE.replace("router)", "router, lua)")),
                Arguments.of("HTTP_FILTER REMOVE", ef("HTTP_FILTER", HCM_MATCH.replace("http.router", "http.cors"),
                        "{operation: REMOVE}"), BEFORE.replace("cors, ", "")),
                Arguments.of("HTTP_FILTER REPLACE", ef("HTTP_FILTER", HCM_MATCH.replace("http.router", "http.fault"),
                        "{operation: REPLACE, value: " + LUA + "}"), BEFORE.replace("(fault", "(lua")),
                Arguments.of("HTTP_FILTER of the inbound context only", ef("HTTP_FILTER",
                        HCM_MATCH.replace("SIDECAR_OUTBOUND", "SIDECAR_INBOUND"), "{operation: ADD, value: " + LUA + "}"), BEFORE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("listenerCases")
    void listenerPatches(String name, String yaml, String expected) {
        List<Listener> out = EnvoyFilterPatches.listenerMessages(PatchContext.SIDECAR_OUTBOUND, patches(yaml, SIDECAR),
                listeners(), false);
        assertEquals(expected, shape(out));
    }

    @Test
    void listenerMergeAndTypedConfigMergeAsIstiod() throws Exception {
        List<Listener> out = EnvoyFilterPatches.listenerMessages(PatchContext.SIDECAR_OUTBOUND, patches(
                ef("LISTENER", "{listener: {portNumber: 9000}}", "{operation: MERGE, value: {per_connection_buffer_limit_bytes: 4096}}")
                        + ef("ef2", "NETWORK_FILTER", TCP_MATCH, """
                        {operation: MERGE, value: {typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy,
                          idle_timeout: 30s}}}""")
                        + ef("ef3", "HTTP_FILTER", HCM_MATCH, """
                        {operation: MERGE, value: {typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router,
                          suppress_envoy_headers: true}}}""").replace("name: ef,", "name: ef3,"), SIDECAR), listeners(), false);
        assertEquals(4096, out.get(1).getPerConnectionBufferLimitBytes().getValue());
        // the typed config merged field by field: stat_prefix and cluster kept, idle_timeout added
        assertEquals(canonical("""
                {"name":"envoy.filters.network.tcp_proxy","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                 "statPrefix":"outbound|9000||db","cluster":"outbound|9000||db","idleTimeout":"30s"}}"""),
                json(out.get(1).getFilterChains(1).getFilters(0)));
        var router = out.get(0).getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class)
                .getHttpFilters(2);
        assertEquals(canonical("""
                {"name":"envoy.filters.http.router","typedConfig":{"@type":"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
                 "suppressEnvoyHeaders":true}}"""), json(router));
    }

    @Test
    void aMergeOfAnotherTypeIntoFiltersNotKnownBeforehandLeavesThemAsTheyWere() {
        // no sub-filter named: the Lua config is merged into every HTTP filter, none of which is Lua
        List<Listener> out = EnvoyFilterPatches.listenerMessages(PatchContext.SIDECAR_OUTBOUND, patches(
                ef("HTTP_FILTER", HCM_MATCH.replace(", subFilter: {name: envoy.filters.http.router}", ""), "{operation: MERGE, value: {typed_config: " + LUA.substring(LUA.indexOf("{\"@type")) + "}"),
                SIDECAR), listeners(), false);
        assertEquals(jsonList(listeners()), jsonList(out));
    }

    // ---- ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE ----

    static final String RC = """
            {"name":"80","virtualHosts":[
              {"name":"web.shop.svc.cluster.local:80","domains":["web.shop.svc.cluster.local"],"routes":[
                {"name":"api","match":{"prefix":"/api"},"route":{"cluster":"outbound|80|v2|web.shop.svc.cluster.local","timeout":"10s"}},
                {"name":"default","match":{"prefix":"/"},"route":{"cluster":"outbound|80||web.shop.svc.cluster.local","timeout":"0s"}}]},
              {"name":"allow_any","domains":["*"],"routes":[
                {"name":"allow_any","match":{"prefix":"/"},"directResponse":{"status":502}}]}],"validateClusters":false}""";

    static RouteConfiguration rc() {
        return parse(RC, RouteConfiguration.newBuilder());
    }

    static final String ROUTE_ADDED = "{\"name\":\"added\",\"match\":{\"prefix\":\"/x\"},\"directResponse\":{\"status\":200}}";
    static final String ROUTE_VALUE = "{name: added, match: {prefix: /x}, direct_response: {status: 200}}";

    static Stream<Arguments> routeCases() {
        String web = "web.shop.svc.cluster.local:80";
        return Stream.of(
                Arguments.of("ROUTE_CONFIGURATION MERGE by port", ef("ROUTE_CONFIGURATION",
                        "{routeConfiguration: {portNumber: 80}}", "{operation: MERGE, value: {validate_clusters: true}}"),
                        RC.replace("\"validateClusters\":false", "\"validateClusters\":true")),
                Arguments.of("ROUTE_CONFIGURATION MERGE misses another name", ef("ROUTE_CONFIGURATION",
                        "{routeConfiguration: {name: \"8080\"}}", "{operation: MERGE, value: {validate_clusters: true}}"), RC),
                Arguments.of("VIRTUAL_HOST REMOVE", ef("VIRTUAL_HOST", "{routeConfiguration: {vhost: {name: allow_any}}}",
                        "{operation: REMOVE}"), RC.replaceFirst("(?s),\\s*\\{\"name\":\"allow_any\".*\\}\\]\\}\\]", "]")),
                Arguments.of("VIRTUAL_HOST MERGE", ef("VIRTUAL_HOST", "{routeConfiguration: {vhost: {name: \"" + web + "\"}}}",
                        "{operation: MERGE, value: {domains: [web], include_request_attempt_count: true}}"),
                        RC.replace("\"domains\":[\"web.shop.svc.cluster.local\"]",
                                "\"domains\":[\"web.shop.svc.cluster.local\",\"web\"],\"includeRequestAttemptCount\":true")),
                Arguments.of("VIRTUAL_HOST MERGE by a domain it serves", ef("VIRTUAL_HOST",
                        "{routeConfiguration: {vhost: {domainName: web.shop.svc.cluster.local}}}",
                        "{operation: MERGE, value: {include_request_attempt_count: true}}"),
                        RC.replace("\"domains\":[\"web.shop.svc.cluster.local\"]",
                                "\"domains\":[\"web.shop.svc.cluster.local\"],\"includeRequestAttemptCount\":true")),
                Arguments.of("VIRTUAL_HOST MERGE misses a domain no host serves", ef("VIRTUAL_HOST",
                        "{routeConfiguration: {vhost: {name: \"" + web + "\", domainName: web.example.com}}}",
                        "{operation: MERGE, value: {include_request_attempt_count: true}}"), RC),
                Arguments.of("HTTP_ROUTE REMOVE in the host serving a domain", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {domainName: \"*\", route: {action: ROUTE}}}}", "{operation: REMOVE}"),
                        RC),
                Arguments.of("VIRTUAL_HOST ADD", ef("VIRTUAL_HOST", "{routeConfiguration: {portNumber: 80}}",
                        "{operation: ADD, value: {name: extra, domains: [extra.example.com]}}"),
                        RC.replace("]}],\"validateClusters\"", "]},{\"name\":\"extra\",\"domains\":[\"extra.example.com\"]}],\"validateClusters\"")),
                Arguments.of("HTTP_ROUTE MERGE timeout by name", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {name: \"" + web + "\", route: {name: api}}}}",
                        "{operation: MERGE, value: {route: {timeout: 0.25s}}}"), RC.replace("\"10s\"", "\"0.250s\"")),
                Arguments.of("HTTP_ROUTE REMOVE by action", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {route: {action: DIRECT_RESPONSE}}}}", "{operation: REMOVE}"),
                        RC.replace("{\"name\":\"allow_any\",\"match\":{\"prefix\":\"/\"},\"directResponse\":{\"status\":502}}", "")
                                .replace("\"routes\":[\n    ]", "\"routes\":[]")),
                Arguments.of("HTTP_ROUTE INSERT_BEFORE a route", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {name: \"" + web + "\", route: {name: default}}}}",
                        "{operation: INSERT_BEFORE, value: " + ROUTE_VALUE + "}"),
                        RC.replace("{\"name\":\"default\"", ROUTE_ADDED + ",{\"name\":\"default\"")),
                Arguments.of("HTTP_ROUTE INSERT_AFTER a route", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {name: \"" + web + "\", route: {name: api}}}}",
                        "{operation: INSERT_AFTER, value: " + ROUTE_VALUE + "}"),
                        RC.replace("{\"name\":\"default\"", ROUTE_ADDED + ",{\"name\":\"default\"")),
                Arguments.of("HTTP_ROUTE INSERT_FIRST", ef("HTTP_ROUTE",
                        "{routeConfiguration: {vhost: {name: \"" + web + "\", route: {name: default}}}}",
                        "{operation: INSERT_FIRST, value: " + ROUTE_VALUE + "}"),
                        RC.replace("{\"name\":\"api\"", ROUTE_ADDED + ",{\"name\":\"api\"")),
                Arguments.of("HTTP_ROUTE ADD", ef("HTTP_ROUTE", "{routeConfiguration: {vhost: {name: allow_any}}}",
                        "{operation: ADD, value: " + ROUTE_VALUE + "}"),
                        RC.replace("\"status\":502}}", "\"status\":502}}," + ROUTE_ADDED)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routeCases")
    void routePatches(String name, String yaml, String expected) {
        RouteConfiguration out = EnvoyFilterPatches.routeMessage(PatchContext.SIDECAR_OUTBOUND, patches(yaml, SIDECAR), rc());
        RouteConfiguration want = parse(expected, RouteConfiguration.newBuilder());
        assertEquals(json(want), json(out));
    }

    @Test
    void gatewayRouteConfigurationsMatchByServerPortPortNameAndGateway() {
        Proxy gateway = new Proxy("router~10.0.0.2~gw-1.shop~shop.svc.cluster.local", Proxy.Type.ROUTER,
                List.of("10.0.0.2"), "gw-1.shop", "shop.svc.cluster.local", "shop", Map.of(), "Kubernetes", "", "", "",
                "", Locality.NONE);
        RouteConfiguration http = rc().toBuilder().setName("http.8080").build();
        RouteConfiguration https = rc().toBuilder().setName("https.443.https-web.web-gw.shop").build();
        // istiod's GatewayPortMap: listener 8080 serves the Gateway's server port 80
        Map<Integer, Set<Integer>> portMap = Map.of(8080, Set.of(80), 443, Set.of(443));
        BiFunction<String, RouteConfiguration, Boolean> merged = (match, r) ->
                EnvoyFilterPatches.routeMessage(PatchContext.GATEWAY, patches(ef("ROUTE_CONFIGURATION",
                        "{context: GATEWAY, routeConfiguration: " + match + "}",
                        "{operation: MERGE, value: {validate_clusters: true}}"), gateway), r, portMap)
                        .getValidateClusters().getValue();
        assertTrue(merged.apply("{portNumber: 80}", http));
        assertTrue(!merged.apply("{portNumber: 8080}", http), "a mapped listener port matches its server ports only");
        assertTrue(merged.apply("{portNumber: 443, portName: https-web, gateway: shop/web-gw}", https));
        assertTrue(!merged.apply("{portName: https-other}", https));
        assertTrue(!merged.apply("{gateway: shop/other-gw}", https));
        assertTrue(merged.apply("{portNumber: 80}", http.toBuilder().setName("http.80").build()),
                "a listener port the gateway does not map matches itself");
    }

    // ---- which EnvoyFilters and patches apply to a proxy ----

    static final String ROOT_AND_NS = """
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: z-late, namespace: shop, annotations: {created: "2024-01-02T00:00:00Z"}}
            spec:
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: shop-late}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: a-early, namespace: shop, annotations: {created: "2024-01-01T00:00:00Z"}}
            spec:
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: shop-early}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: mesh, namespace: istio-system, annotations: {created: "2024-01-03T00:00:00Z"}}
            spec:
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: root}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: first, namespace: shop, annotations: {created: "2024-01-05T00:00:00Z"}}
            spec:
              priority: -1
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: prioritized}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: selected, namespace: shop, annotations: {created: "2024-01-04T00:00:00Z"}}
            spec:
              workloadSelector: {labels: {app: db}}
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: db-only}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: versions, namespace: shop, annotations: {created: "2024-01-04T00:00:00Z"}}
            spec:
              configPatches:
              - {applyTo: CLUSTER, match: {proxy: {proxyVersion: '^1\\.24.*'}}, patch: {operation: ADD, value: {name: v124}}}
              - {applyTo: CLUSTER, match: {proxy: {proxyVersion: '^1\\.25.*'}}, patch: {operation: ADD, value: {name: v125}}}
              - {applyTo: CLUSTER, match: {proxy: {metadata: {CLUSTER_ID: east}}}, patch: {operation: ADD, value: {name: east}}}
              - {applyTo: CLUSTER, match: {proxy: {metadata: {CLUSTER_ID: west}}}, patch: {operation: ADD, value: {name: west}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: gw, namespace: shop}
            spec:
              targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: web-gw}]
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: gateway-only}}}
            ---
            apiVersion: networking.istio.io/v1alpha3
            kind: EnvoyFilter
            metadata: {name: other, namespace: elsewhere}
            spec:
              configPatches:
              - {applyTo: CLUSTER, patch: {operation: ADD, value: {name: other-namespace}}}
            """;

    static List<String> added(Proxy proxy) {
        return EnvoyFilterPatches.clusterMessages(PatchContext.SIDECAR_OUTBOUND, patches(ROOT_AND_NS, proxy), List.of())
                .stream().map(Cluster::getName).toList();
    }

    @Test
    void priorityThenRootNamespaceThenAgeThenSelectorsVersionsAndMetadata() {
        // istiod: priority first; then the root namespace's; then the oldest; the workloadSelector,
        // proxyVersion (regex) and metadata per patch; targetRefs never on a sidecar
        assertEquals(List.of("prioritized", "root", "shop-early", "shop-late", "v124", "east"), added(SIDECAR));
        assertEquals(List.of("prioritized", "root", "shop-early", "shop-late", "db-only", "v125", "west"),
                added(proxy("shop", Map.of("app", "db"), "1.25.0", Map.of("CLUSTER_ID", "west"))));
        assertEquals(List.of("root", "other-namespace"), added(proxy("elsewhere", Map.of(), "", Map.of())));
        Proxy gateway = new Proxy("router~10.0.0.2~gw-1.shop~shop.svc.cluster.local", Proxy.Type.ROUTER,
                List.of("10.0.0.2"), "gw-1.shop", "shop.svc.cluster.local", "shop",
                Map.of("gateway.networking.k8s.io/gateway-name", "web-gw"), "Kubernetes", "", "", "", "", Locality.NONE);
        assertTrue(EnvoyFilterPatches.clusterMessages(PatchContext.GATEWAY, patches(ROOT_AND_NS, gateway), List.of())
                .stream().anyMatch(c -> c.getName().equals("gateway-only")));
    }

    @Test
    void theKeyNamesTheAppliedPatchesSoProxiesWithOthersDoNotShare() {
        MergedEnvoyFilters a = patches(ROOT_AND_NS, SIDECAR);
        MergedEnvoyFilters b = patches(ROOT_AND_NS, proxy("shop", Map.of("app", "web"), "1.25.0", Map.of("CLUSTER_ID", "east")));
        MergedEnvoyFilters c = patches(ROOT_AND_NS, proxy("shop", Map.of("app", "web"), "1.24.9", Map.of("CLUSTER_ID", "east")));
        assertTrue(!a.key().equals(b.key()), a.key() + " vs " + b.key());
        assertEquals(a.key(), c.key(), "same patches, same key");
    }

    @Test
    void unconvertiblePatchesAreSkippedAndReported() {
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("test.yaml", """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: bad, namespace: shop}
                spec:
                  configPatches:
                  - applyTo: HTTP_FILTER
                    patch: {operation: ADD, value: {name: x, typed_config: {"@type": type.googleapis.com/istio.stats.PluginConfig}}}
                  - applyTo: CLUSTER
                    patch: {operation: MERGE, value: {connect_timeout: soon}}
                  - applyTo: CLUSTER
                    patch: {operation: MERGE, value: {connect_timeout: 5s}}
                  - applyTo: EXTENSION_CONFIG
                    patch: {operation: ADD, value: {name: ext}}
                  - applyTo: HTTP_FILTER
                    match: {listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}}}}
                    patch: {operation: MERGE, value: {typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault}}}
                """);
        assertEquals(List.of(), r.errors());
        EnvoyFilterIndex index = EnvoyFilterIndex.of(r.configs());
        var entries = index.problems().entries(EnvoyFilterIndex.ENVOY_FILTER_STATUS);
        assertEquals(List.of("shop/bad configPatches[0]", "shop/bad configPatches[1]", "shop/bad configPatches[3]",
                "shop/bad configPatches[4]"), List.copyOf(entries.keySet()));
        assertTrue(entries.get("shop/bad configPatches[4]").message().contains(
                "MERGE of a envoy.extensions.filters.http.fault.v3.HTTPFault into envoy.filters.http.router"), entries.toString());
        assertTrue(entries.get("shop/bad configPatches[0]").message().contains("unknown @type type.googleapis.com/istio.stats.PluginConfig"),
                entries.toString());
        assertTrue(entries.get("shop/bad configPatches[1]").message().contains("envoy.config.cluster.v3.Cluster"), entries.toString());
        assertTrue(entries.get("shop/bad configPatches[3]").message().contains("extension config ext has no typed_config"),
                entries.toString());
        MergedEnvoyFilters efw = index.forProxy(SIDECAR, ROOT);
        assertEquals(1, efw.patches(EnvoyFilter.ApplyTo.CLUSTER).size(),
                "the valid patch still applies");
    }
}
