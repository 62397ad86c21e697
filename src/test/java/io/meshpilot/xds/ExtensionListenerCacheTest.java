package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Outbound listeners are cached per scope (EnvoyLdsGenerator); a Telemetry or WasmPlugin with a
 * workload selector makes two proxies of one scope differ, so the cache key must carry the
 * applicable set: each proxy gets its own listeners whichever asks first, from one shared cache.
 */
class ExtensionListenerCacheTest {
    static final String MESH = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: httpbin, namespace: foo}
            spec:
              hosts: [httpbin.foo.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: STATIC
              ports: [{number: 8000, name: http, protocol: HTTP}]
              endpoints: [{address: 10.1.1.1}]
            ---
            apiVersion: telemetry.istio.io/v1
            kind: Telemetry
            metadata: {name: v2-logs, namespace: foo}
            spec:
              selector: {matchLabels: {version: v2}}
              accessLogging: [{providers: [{name: envoy}]}]
            ---
            apiVersion: extensions.istio.io/v1alpha1
            kind: WasmPlugin
            metadata: {name: v1-plugin, namespace: foo}
            spec:
              selector: {matchLabels: {version: v1}}
              url: file:///opt/plugin.wasm
            """;

    static Proxy sidecar(String ip, String version) {
        return new Proxy("sidecar~" + ip + "~sleep-" + version + ".foo~foo.svc.cluster.local", Proxy.Type.SIDECAR,
                List.of(ip), "sleep-" + version + ".foo", "foo.svc.cluster.local", "foo",
                Map.of("app", "sleep", "version", version), "Kubernetes", "", "", "sleep", "", new Locality("", "", ""));
    }

    @Test
    void workloadSelectedTelemetryAndWasmPluginGiveEachProxyOfAScopeItsOwnOutboundListeners() throws Exception {
        Proxy v1 = sidecar("10.2.0.1", "v1");
        Proxy v2 = sidecar("10.2.0.2", "v2");
        for (List<Proxy> order : List.of(List.of(v1, v2), List.of(v2, v1))) {
            try (MeshFixture mesh = new MeshFixture()) {
                mesh.apply(MESH);
                PushContext push = PushContext.build(mesh.registry, mesh.store, mesh.updates.index,
                        new MeshConfigLoader().defaults(), "cluster.local",
                        GoldenConfigTest.VERSIONS.incrementAndGet());
                assertEquals(push.scope(v1).key(), push.scope(v2).key(), "one scope");
                Generators generators = Generators.standalone(new XdsCache(true));
                Generator lds = generators.forType(TypeUrls.LISTENER, v1);
                for (Proxy p : order) {
                    HttpConnectionManager hcm = outboundHcm(lds.generate(p, push, Set.of(), true));
                    boolean isV2 = p == v2;
                    assertEquals(isV2 ? 1 : 0, hcm.getAccessLogCount(), p.id() + " access logs, order " + ids(order));
                    assertEquals(isV2 ? List.of() : List.of("extensions.istio.io/wasmplugin/foo.v1-plugin"),
                            hcm.getHttpFiltersList().stream().map(HttpFilter::getName)
                                    .filter(n -> n.startsWith("extensions.istio.io/")).toList(),
                            p.id() + " Wasm filters, order " + ids(order));
                }
                assertNotEquals(EnvoyLdsGenerator.outboundKey(v1, push), EnvoyLdsGenerator.outboundKey(v2, push));
            }
        }
    }

    @Test
    void withoutWorkloadSelectionTheScopeStillSharesOneKey() throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(MESH.substring(0, MESH.indexOf("---\napiVersion: telemetry")) + """
                    ---
                    apiVersion: telemetry.istio.io/v1
                    kind: Telemetry
                    metadata: {name: ns-logs, namespace: foo}
                    spec: {accessLogging: [{providers: [{name: envoy}]}]}
                    """);
            PushContext push = mesh.push();
            assertEquals(EnvoyLdsGenerator.outboundKey(sidecar("10.2.0.1", "v1"), push),
                    EnvoyLdsGenerator.outboundKey(sidecar("10.2.0.2", "v2"), push));
        }
    }

    /**
     * Tracing's Istio tags (canonical service and revision) and a tracer's service name are the
     * proxy's own: with a namespace-wide tracing Telemetry, two workloads of one scope still
     * each get their own outbound listeners.
     */
    @Test
    void tracingTagsOfEachWorkloadSurviveTheSharedOutboundListeners() throws Exception {
        Proxy sleep = sidecar("10.2.0.1", "v1");
        Proxy curl = new Proxy("sidecar~10.2.0.3~curl-1.foo~foo.svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.2.0.3"), "curl-1.foo", "foo.svc.cluster.local", "foo",
                Map.of("app", "curl", "service.istio.io/canonical-name", "curl"), "Kubernetes", "", "", "curl", "",
                new Locality("", "", ""));
        for (List<Proxy> order : List.of(List.of(sleep, curl), List.of(curl, sleep))) {
            try (MeshFixture mesh = new MeshFixture()) {
                mesh.apply(MESH.substring(0, MESH.indexOf("---\napiVersion: telemetry")) + """
                        ---
                        apiVersion: networking.istio.io/v1
                        kind: ServiceEntry
                        metadata: {name: zipkin, namespace: istio-system}
                        spec:
                          hosts: [zipkin.istio-system.svc.cluster.local]
                          location: MESH_INTERNAL
                          resolution: DNS
                          ports: [{number: 9411, name: http, protocol: HTTP}]
                        ---
                        apiVersion: telemetry.istio.io/v1
                        kind: Telemetry
                        metadata: {name: ns-tracing, namespace: foo}
                        spec: {tracing: [{providers: [{name: zipkin}]}]}
                        """);
                PushContext push = mesh.push(new MeshConfigLoader().parseMesh("mesh.yaml", """
                        extensionProviders:
                        - name: zipkin
                          zipkin: {service: zipkin.istio-system.svc.cluster.local, port: 9411}
                        """));
                Generator lds = Generators.standalone(new XdsCache(true)).forType(TypeUrls.LISTENER, sleep);
                for (Proxy p : order) {
                    var tags = outboundHcm(lds.generate(p, push, Set.of(), true)).getTracing().getCustomTagsList();
                    String service = tags.stream().filter(t -> t.getTag().equals("istio.canonical_service"))
                            .map(t -> t.getLiteral().getValue()).findFirst().orElse("none");
                    assertEquals(p == curl ? "curl" : "unknown", service, p.id() + ", order " + order.getFirst().id());
                }
            }
        }
    }

    private static String ids(List<Proxy> order) {
        return order.stream().map(p -> p.labels().get("version")).toList().toString();
    }

    private static HttpConnectionManager outboundHcm(List<Any> lds) throws Exception {
        for (Any a : lds) {
            Listener l = a.unpack(Listener.class);
            if (l.getName().equals("0.0.0.0_8000")) {
                return l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
            }
        }
        throw new AssertionError("no listener 0.0.0.0_8000");
    }
}
