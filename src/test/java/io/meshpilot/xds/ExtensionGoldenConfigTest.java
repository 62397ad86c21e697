package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.validation.EnvoyConfigCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden files for Istio's Telemetry and WasmPlugin doc samples ({@code golden/extension-samples}):
 * each sample, applied with the bookinfo services, workloads and bookinfo-gateway, gives
 * productpage's sidecar and the ingress gateway a complete LDS/RDS/CDS/EDS plus the ECDS
 * resources their listeners reference, compared with {@code golden/<sample>/*.json}; both pass
 * the proto-constraint and cross-reference checker, ECDS references included. Updated with
 * {@code -Dgolden.update=true}, as {@link GoldenConfigTest}.
 */
class ExtensionGoldenConfigTest {
    static final Path SAMPLES = GoldenConfigTest.GOLDEN.resolve("extension-samples");

    static Stream<String> samples() throws Exception {
        try (Stream<Path> files = Files.list(SAMPLES)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("samples")
    void productpageSidecarAndIngressGatewayMatchTheirGoldens(String sample) throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(Files.readString(GoldenConfigTest.HOME.resolve("etc/config/bookinfo/services.yaml")));
            mesh.apply(GoldenConfigTest.baseWorkloads());
            mesh.apply(Files.readString(GoldenConfigTest.GOLDEN.resolve("samples/bookinfo-gateway.yaml")));
            mesh.apply(Files.readString(SAMPLES.resolve(sample)));
            PushContext push = PushContext.build(mesh.registry, mesh.store, mesh.updates.index,
                    new MeshConfigLoader().defaults(), "cluster.local",
                    GoldenConfigTest.VERSIONS.incrementAndGet());
            String dir = sample.substring(0, sample.length() - ".yaml".length());
            Set<String> referenced = new TreeSet<>();
            for (Proxy proxy : List.of(GoldenConfigTest.PRODUCTPAGE, GoldenConfigTest.INGRESS)) {
                GoldenConfigTest.ProxyConfig config = GoldenConfigTest.ProxyConfig.of(proxy, push);
                List<TypedExtensionConfig> ecds = extensionConfigs(proxy, push, config.listeners());
                ecds.forEach(e -> referenced.add(e.getName()));
                JsonObject json = config.json();
                JsonArray ecdsJson = new JsonArray();
                for (TypedExtensionConfig e : ecds) {
                    ecdsJson.add(JsonParser.parseString(JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY).print(e)));
                }
                json.add("extensionConfigs", ecdsJson);
                String file = proxy == GoldenConfigTest.INGRESS ? "ingressgateway.json" : "productpage.json";
                GoldenConfigTest.check(GoldenConfigTest.GOLDEN.resolve(dir).resolve(file), json);
                assertEquals(List.of(), EnvoyConfigCheck.check(config.typed(), ecds).unexpected(Set.of()),
                        dir + " " + file);
            }
            if (dir.startsWith("wasm")) {
                assertFalse(referenced.isEmpty(), dir + ": the plugin is referenced and served");
                // the checker catches a reference ECDS does not serve
                var gateway = GoldenConfigTest.ProxyConfig.of(GoldenConfigTest.INGRESS, push);
                assertEquals(List.of("no extension config extensions.istio.io/wasmplugin/istio-system.basic-auth"),
                        EnvoyConfigCheck.check(gateway.typed(), List.of()).violations().stream()
                                .map(v -> v.message()).toList());
            }
        }
    }

    /** What the proxy gets when it asks ECDS for every name its listeners' connection managers reference. */
    static List<TypedExtensionConfig> extensionConfigs(Proxy proxy, PushContext push, List<Any> lds) throws Exception {
        Set<String> names = new TreeSet<>();
        for (Any a : lds) {
            for (var chain : a.unpack(Listener.class).getFilterChainsList()) {
                for (var f : chain.getFiltersList()) {
                    if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                        f.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFiltersList().stream()
                                .filter(h -> h.hasConfigDiscovery()).forEach(h -> names.add(h.getName()));
                    }
                }
            }
        }
        List<TypedExtensionConfig> out = new ArrayList<>();
        for (Any a : Generators.standalone(new XdsCache(false)).forType(TypeUrls.EXTENSION_CONFIG, proxy)
                .generate(proxy, push, names, false)) {
            out.add(a.unpack(TypedExtensionConfig.class));
        }
        return out;
    }
}
