package io.meshpilot.bench;

import com.google.protobuf.Any;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.GeneratedMesh;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import io.meshpilot.networking.envoy.SidecarRouteBuilder;
import io.meshpilot.networking.envoyfilter.EnvoyFilterPatches;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * EnvoyFilter patch application for one sidecar of a 100-service generated mesh whose
 * namespace holds N EnvoyFilters (in turn: a Lua HTTP filter before the router, a cluster
 * connect_timeout MERGE, a route configuration MERGE, a tcp_proxy typed-config MERGE): the
 * selection of the proxy's patches, then its outbound listeners, clusters and one route
 * configuration patched (as LDS, CDS and RDS do before caching), N=0 the baseline. Run with
 * {@code bin/bench EnvoyFilterPatch -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class EnvoyFilterPatchBenchmark {
    @Param({"0", "20"})
    public int envoyFilters;

    private GeneratedMesh mesh;
    private PushContext push;
    private final Proxy proxy = GeneratedMesh.sidecar(0, 1);
    private List<Any> listeners;
    private List<Any> clusters;
    private Any routes;

    static String envoyFilter(int i, String namespace) {
        String patch = switch (i % 4) {
            case 0 -> """
                  - applyTo: HTTP_FILTER
                    match: {context: SIDECAR_OUTBOUND, listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}}}}
                    patch: {operation: INSERT_BEFORE, value: {name: lua-%d, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua, default_source_code: {inline_string: "function envoy_on_request(h) end"}}}}
                """.formatted(i);
            case 1 -> """
                  - applyTo: CLUSTER
                    match: {context: SIDECAR_OUTBOUND, cluster: {portNumber: 8080}}
                    patch: {operation: MERGE, value: {connect_timeout: %ds}}
                """.formatted(i);
            case 2 -> """
                  - applyTo: ROUTE_CONFIGURATION
                    match: {context: SIDECAR_OUTBOUND}
                    patch: {operation: MERGE, value: {max_direct_response_body_size_bytes: %d}}
                """.formatted(1000 + i);
            default -> """
                  - applyTo: NETWORK_FILTER
                    match: {context: SIDECAR_OUTBOUND, listener: {filterChain: {filter: {name: envoy.filters.network.tcp_proxy}}}}
                    patch: {operation: MERGE, value: {typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy, idle_timeout: %ds}}}
                """.formatted(60 + i);
        };
        return """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: ef-%d, namespace: %s}
                spec:
                  configPatches:
                %s---
                """.formatted(i, namespace, patch);
    }

    @Setup(Level.Trial)
    public void build() throws Exception {
        mesh = GeneratedMesh.of(100);
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < envoyFilters; i++) {
            yaml.append(envoyFilter(i, proxy.namespace()));
        }
        if (envoyFilters > 0) {
            mesh.fixture().apply(yaml.toString());
        }
        push = mesh.fixture().push();
        if (!push.diagnostics().isEmpty()) {
            throw new IllegalStateException(push.diagnostics().toString());
        }
        ProxyScope scope = push.scope(proxy);
        listeners = SidecarListenerBuilder.outboundListeners(proxy, push, scope).stream().map(Any::pack).toList();
        clusters = ClusterBuilder.all(push, scope).stream().map(Any::pack).toList();
        routes = Any.pack(SidecarRouteBuilder.build(String.valueOf(GeneratedMesh.HTTP_PORT), push, scope).orElseThrow());
    }

    @TearDown(Level.Trial)
    public void close() {
        mesh.close();
    }

    @Benchmark
    public Object patchOneSidecar() {
        MergedEnvoyFilters efw = push.envoyFilters(proxy);
        return List.of(EnvoyFilterPatches.listeners(PatchContext.SIDECAR_OUTBOUND, efw, listeners, false),
                EnvoyFilterPatches.clusters(PatchContext.SIDECAR_OUTBOUND, efw, clusters, false),
                EnvoyFilterPatches.routeConfiguration(PatchContext.SIDECAR_OUTBOUND, efw, routes));
    }
}
