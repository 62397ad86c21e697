package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.StringValue;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.access_loggers.file.v3.FileAccessLog;
import io.envoyproxy.envoy.extensions.filters.http.wasm.v3.Wasm;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through real ADS on the embedded bookinfo: a mesh-wide Telemetry enabling access logs (Istio
 * docs' mesh-default with the built-in {@code envoy} provider) and a WasmPlugin on productpage
 * reach its sidecar: LDS carries the file access log and references the plugin over ECDS, an
 * ECDS request for that name returns its TypedExtensionConfig, and the OCI plugin plain Envoy
 * cannot load is named in /debug/push_status and counted in its gauge.
 */
class TelemetryWasmAdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String PLUGIN = "extensions.istio.io/wasmplugin/default.basic-auth";

    @TempDir
    static Path dir;
    static MeshPilotServer server;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        Files.writeString(dir.resolve("config/extensions.yaml"), EXTENSIONS);
        server = TestServers.start(dir);
    }

    static final String EXTENSIONS = """
                apiVersion: telemetry.istio.io/v1
                kind: Telemetry
                metadata: {name: mesh-default, namespace: istio-system}
                spec:
                  accessLogging: [{providers: [{name: envoy}]}]
                ---
                apiVersion: extensions.istio.io/v1alpha1
                kind: WasmPlugin
                metadata: {name: basic-auth, namespace: default}
                spec:
                  selector: {matchLabels: {app: productpage}}
                  url: file:///opt/filters/basic_auth.wasm
                  phase: AUTHN
                  pluginConfig: {basic_auth_rules: [{prefix: /productpage, request_methods: [GET], credentials: ["ok:test"]}]}
                ---
                apiVersion: extensions.istio.io/v1alpha1
                kind: WasmPlugin
                metadata: {name: from-registry, namespace: default}
                spec:
                  url: oci://ghcr.io/istio-ecosystem/wasm-extensions/basic_auth:1.12.0
                """;

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void accessLogAndWasmPluginReachASidecarOverLdsAndEcds() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.7~productpage-v1-abc.default~default.svc.cluster.local",
                Map.of("NAMESPACE", "default", "LABELS", "{\"app\":\"productpage\",\"version\":\"v1\"}"))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = c.await(TypeUrls.LISTENER, WAIT);
            HttpConnectionManager hcm = null;
            for (Listener l : EnvoySidecarXdsTest.unpack(lds, Listener.class)) {
                if (l.getName().equals("0.0.0.0_9080")) {
                    hcm = l.getFilterChains(0).getFilters(0).getTypedConfig().unpack(HttpConnectionManager.class);
                }
            }
            assertTrue(hcm != null, "an outbound listener on 9080");
            assertEquals(1, hcm.getAccessLogCount(), hcm.getAccessLogList().toString());
            assertEquals("/dev/stdout", hcm.getAccessLog(0).getTypedConfig().unpack(FileAccessLog.class).getPath());
            List<String> names = hcm.getHttpFiltersList().stream().map(HttpFilter::getName).toList();
            assertEquals(PLUGIN, names.get(0), names.toString());
            assertTrue(names.stream().noneMatch(n -> n.contains("from-registry")), "oci:// is not referenced: " + names);
            c.ack(lds, List.of());

            c.subscribe(TypeUrls.EXTENSION_CONFIG, List.of(PLUGIN));
            DiscoveryResponse ecds = c.await(TypeUrls.EXTENSION_CONFIG, WAIT);
            assertEquals(1, ecds.getResourcesCount(), ecds.toString());
            TypedExtensionConfig config = ecds.getResources(0).unpack(TypedExtensionConfig.class);
            assertEquals(PLUGIN, config.getName());
            Wasm wasm = config.getTypedConfig().unpack(Wasm.class);
            assertEquals("/opt/filters/basic_auth.wasm", wasm.getConfig().getVmConfig().getCode().getLocal().getFilename());
            assertEquals("default.basic-auth", wasm.getConfig().getName());
            c.ack(ecds, List.of(PLUGIN));

            // an edit of the plugin pushes ECDS again (istiod's ecdsNeedsPush), replaced atomically
            Path tmp = dir.resolve("extensions.yaml.tmp");
            Files.writeString(tmp, EXTENSIONS.replace("prefix: /productpage", "prefix: /changed"));
            Files.move(tmp, dir.resolve("config/extensions.yaml"),
                    StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            DiscoveryResponse again = c.await(TypeUrls.EXTENSION_CONFIG, WAIT);
            Wasm changed = again.getResources(0).unpack(TypedExtensionConfig.class).getTypedConfig().unpack(Wasm.class);
            assertTrue(changed.getConfig().getConfiguration().unpack(StringValue.class).getValue()
                    .contains("/changed"), changed.toString());
        }
    }

    @Test
    void theOciPluginIsNamedInPushStatusAndCounted() {
        Http.Reply r = Http.get(server.ports().get("http"), "/debug/push_status");
        assertEquals(200, r.status(), r.body());
        assertTrue(r.body().contains("pilot_wasm_oci_unsupported") && r.body().contains("default/from-registry"), r.body());
        var family = PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body())
                .get("pilot_wasm_oci_unsupported");
        assertTrue(family != null && family.samples().get(0).value() == 1.0, String.valueOf(family));
    }
}
