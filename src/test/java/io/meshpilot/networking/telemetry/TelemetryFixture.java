package io.meshpilot.networking.telemetry;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A small mesh for Telemetry and WasmPlugin tests: httpbin in {@code foo} (HTTP 8000, TCP 9000)
 * with one workload at 10.1.1.1, the tracing and OpenTelemetry collectors in istio-system,
 * and the sidecar listeners of that workload built as the LDS generator builds them.
 */
final class TelemetryFixture {
    static final String SERVICES = """
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: httpbin, namespace: foo}
            spec:
              hosts: [httpbin.foo.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: STATIC
              ports: [{number: 8000, name: http, protocol: HTTP}, {number: 9000, name: tcp, protocol: TCP}]
              workloadSelector: {labels: {app: httpbin}}
            ---
            apiVersion: networking.istio.io/v1
            kind: WorkloadEntry
            metadata: {name: httpbin-1, namespace: foo}
            spec: {address: 10.1.1.1, labels: {app: httpbin, version: v1}, serviceAccount: httpbin}
            ---
            apiVersion: networking.istio.io/v1
            kind: ServiceEntry
            metadata: {name: collectors, namespace: istio-system}
            spec:
              hosts: [zipkin.istio-system.svc.cluster.local, otel.istio-system.svc.cluster.local]
              location: MESH_INTERNAL
              resolution: DNS
              ports: [{number: 9411, name: http, protocol: HTTP}, {number: 4317, name: grpc, protocol: GRPC}]
            """;
    static final String MESH = """
            extensionProviders:
            - name: file-text
              envoyFileAccessLog: {path: /var/log/access.log, logFormat: {text: "%REQ_WITHOUT_QUERY(:PATH)% %RESPONSE_CODE%"}}
            - name: file-json
              envoyFileAccessLog: {path: /dev/stderr, logFormat: {labels: {code: "%RESPONSE_CODE%", path: "%REQ(:PATH)%"}}}
            - name: otel
              envoyOtelAls: {service: otel.istio-system.svc.cluster.local, port: 4317, logFormat: {text: "%RESPONSE_CODE%", labels: {peer: "%DOWNSTREAM_REMOTE_ADDRESS%"}}}
            - name: zipkin
              zipkin: {service: zipkin.istio-system.svc.cluster.local, port: 9411, maxTagLength: 256}
            - name: otel-tracing
              opentelemetry: {service: otel.istio-system.svc.cluster.local, port: 4317}
            - name: unknown-service
              zipkin: {service: nowhere.example.com, port: 9411}
            """;
    static final Proxy HTTPBIN = proxy(Map.of("app", "httpbin", "version", "v1"));

    private TelemetryFixture() {
    }

    static Proxy proxy(Map<String, String> labels) {
        return new Proxy("sidecar~10.1.1.1~httpbin-1.foo~foo.svc.cluster.local", Proxy.Type.SIDECAR,
                List.of("10.1.1.1"), "httpbin-1.foo", "foo.svc.cluster.local", "foo", labels, "Kubernetes", "", "",
                "httpbin", "", new Locality("", "", ""));
    }

    static MeshConfig mesh(String extra) throws Exception {
        return new MeshConfigLoader().parseMesh("mesh.yaml", MESH + extra);
    }

    static PushContext push(MeshFixture fixture, MeshConfig mesh) {
        return fixture.push(mesh);
    }

    static List<Listener> listeners(Proxy proxy, PushContext push) {
        return SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
    }

    static Listener listener(List<Listener> all, String name) {
        return all.stream().filter(l -> l.getName().equals(name)).findFirst().orElseThrow(() ->
                new AssertionError("no listener " + name + " in " + all.stream().map(Listener::getName).toList()));
    }

    /** The first connection manager of a listener's chains whose chain name is {@code chain} (null: any). */
    static HttpConnectionManager hcm(Listener l, String chain) throws Exception {
        for (FilterChain fc : l.getFilterChainsList()) {
            if (chain != null && !fc.getName().equals(chain)) {
                continue;
            }
            for (Filter f : fc.getFiltersList()) {
                if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                    return f.getTypedConfig().unpack(HttpConnectionManager.class);
                }
            }
        }
        throw new AssertionError("no connection manager in " + l.getName() + " chain " + chain);
    }

    /** Every tcp_proxy of a listener. */
    static List<TcpProxy> tcpProxies(Listener l) throws Exception {
        List<TcpProxy> out = new ArrayList<>();
        for (FilterChain fc : l.getFilterChainsList()) {
            for (Filter f : fc.getFiltersList()) {
                if (f.getTypedConfig().is(TcpProxy.class)) {
                    out.add(f.getTypedConfig().unpack(TcpProxy.class));
                }
            }
        }
        return out;
    }

    static JsonElement json(MessageOrBuilder m) throws Exception {
        return JsonParser.parseString(JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY).print(m));
    }

    static JsonElement json(List<? extends MessageOrBuilder> list) throws Exception {
        JsonArray a = new JsonArray();
        for (MessageOrBuilder m : list) {
            a.add(json(m));
        }
        return a;
    }

    static JsonElement parse(String json) {
        return JsonParser.parseString(json);
    }

}
