package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedMesh;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Patched resources are cached by the EnvoyFilter patches that apply: two sidecars of one
 * scope, one selected by an EnvoyFilter's workloadSelector, never share a cached or shared
 * CDS, LDS or RDS resource, in either order, with one XdsCache for both.
 */
class EnvoyFilterCacheTest {
    private static final Proxy V1 = GeneratedMesh.sidecar(0, 1);
    private static final Proxy V2 = GeneratedMesh.sidecar(0, 2);

    static String envoyFilter() {
        return """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: v2-only, namespace: %s}
                spec:
                  workloadSelector: {labels: {version: v2}}
                  configPatches:
                  - applyTo: CLUSTER
                    match: {context: SIDECAR_OUTBOUND}
                    patch: {operation: MERGE, value: {connect_timeout: 7s}}
                  - applyTo: HTTP_FILTER
                    match: {context: SIDECAR_OUTBOUND, listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}}}}
                    patch:
                      operation: INSERT_BEFORE
                      value:
                        name: envoy.filters.http.lua
                        typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua, default_source_code: {inline_string: "function envoy_on_request(h) end"}}
                  - applyTo: ROUTE_CONFIGURATION
                    match: {context: SIDECAR_OUTBOUND}
                    patch: {operation: MERGE, value: {max_direct_response_body_size_bytes: 2048}}
                """.formatted(GeneratedMesh.namespace(0));
    }

    static boolean patchedClusters(List<Any> clusters) throws Exception {
        boolean any = false;
        for (Any a : clusters) {
            Cluster c = a.unpack(Cluster.class);
            if (c.getName().startsWith("outbound|")) {
                any |= c.getConnectTimeout().getSeconds() == 7;
            }
        }
        return any;
    }

    static boolean hasLua(List<Any> listeners) throws Exception {
        for (Any a : listeners) {
            for (var fc : a.unpack(Listener.class).getFilterChainsList()) {
                for (var f : fc.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class) && f.getTypedConfig()
                            .unpack(HttpConnectionManager.class).getHttpFiltersList().stream()
                            .anyMatch(h -> h.getName().equals("envoy.filters.http.lua"))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    static boolean patchedRoutes(List<Any> routes) throws Exception {
        assertFalse(routes.isEmpty());
        return routes.getFirst().unpack(RouteConfiguration.class).getMaxDirectResponseBodySizeBytes().getValue() == 2048;
    }

    @Test
    void sidecarsWithDifferentEnvoyFiltersNeverShareACachedPatchedResource() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10)) {
            mesh.fixture().apply(envoyFilter());
            PushContext push = mesh.fixture().push();
            XdsCache cache = new XdsCache(true);
            CdsGenerator cds = new CdsGenerator(cache);
            EnvoyLdsGenerator lds = new EnvoyLdsGenerator(cache);
            EnvoyRdsGenerator rds = new EnvoyRdsGenerator(cache);
            Set<String> routeNames = Set.of(String.valueOf(GeneratedMesh.HTTP_PORT));

            assertNotEquals(cds.responseScope(V1, push, true), cds.responseScope(V2, push, true),
                    "a shared CDS response is per set of applied patches");
            for (Proxy first : List.of(V2, V1)) {
                Proxy second = first == V2 ? V1 : V2;
                for (Proxy p : List.of(first, second)) {
                    boolean selected = p == V2;
                    assertEquals(selected, patchedClusters(cds.generate(p, push, Set.of(), true)), p.id() + " CDS");
                    assertEquals(selected, hasLua(lds.generate(p, push, Set.of(), true)), p.id() + " LDS");
                    assertEquals(selected, patchedRoutes(rds.generate(p, push, routeNames, false)), p.id() + " RDS");
                }
                cache = new XdsCache(true);
                cds = new CdsGenerator(cache);
                lds = new EnvoyLdsGenerator(cache);
                rds = new EnvoyRdsGenerator(cache);
            }
            assertTrue(push.diagnostics().isEmpty(), push.diagnostics().toString());
        }
    }
}
