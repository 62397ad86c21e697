package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.validation.EnvoyConfigCheck;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden files for Istio's authorization samples ({@code golden/authz-samples}): each sample,
 * applied with the bookinfo services, workloads and bookinfo-gateway (and the mesh config in
 * {@code <sample>.mesh} when there is one), gives the sidecar of
 * workload {@code httpbin} (10.10.1.1 in {@code foo}) and the ingress gateway a complete
 * LDS/RDS/CDS/EDS compared with {@code golden/<sample>/{httpbin,ingressgateway}.json}, and both
 * configs pass the Envoy proto-constraint and cross-reference checker. Updated with
 * {@code -Dgolden.update=true}, as {@link GoldenConfigTest}.
 */
class SecurityGoldenConfigTest {
    static final Path SAMPLES = GoldenConfigTest.GOLDEN.resolve("authz-samples");
    static final Proxy HTTPBIN = new Proxy("sidecar~10.10.1.1~httpbin-v1-6d8f7c9b5-q7w2e.foo~foo.svc.cluster.local",
            Proxy.Type.SIDECAR, List.of("10.10.1.1"), "httpbin-v1-6d8f7c9b5-q7w2e.foo", "foo.svc.cluster.local", "foo",
            Map.of("app", "httpbin", "version", "v1"), "Kubernetes", "1.24.0", "", "httpbin", "",
            new Locality("us-east1", "us-east1-b", ""));

    static Stream<String> samples() throws Exception {
        try (Stream<Path> files = Files.list(SAMPLES)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("samples")
    void httpbinSidecarAndIngressGatewayMatchTheirGoldens(String sample) throws Exception {
        try (MeshFixture mesh = new MeshFixture()) {
            mesh.apply(Files.readString(GoldenConfigTest.HOME.resolve("etc/config/bookinfo/services.yaml")));
            mesh.apply(GoldenConfigTest.baseWorkloads());
            mesh.apply(Files.readString(GoldenConfigTest.GOLDEN.resolve("samples/bookinfo-gateway.yaml")));
            mesh.apply(Files.readString(SAMPLES.resolve(sample)));
            String dir = sample.substring(0, sample.length() - ".yaml".length());
            // a sample that needs mesh config (extension providers for CUSTOM) has <sample>.mesh next to it
            Path meshFile = SAMPLES.resolve(dir + ".mesh");
            var loader = new MeshConfigLoader();
            PushContext push = PushContext.build(mesh.registry, mesh.store, mesh.updates.index,
                    Files.exists(meshFile) ? loader.loadMesh(meshFile) : loader.defaults(), "cluster.local",
                    GoldenConfigTest.VERSIONS.incrementAndGet());
            GoldenConfigTest.ProxyConfig sidecar = GoldenConfigTest.ProxyConfig.of(HTTPBIN, push);
            GoldenConfigTest.ProxyConfig gateway = GoldenConfigTest.ProxyConfig.of(GoldenConfigTest.INGRESS, push);
            GoldenConfigTest.check(GoldenConfigTest.GOLDEN.resolve(dir).resolve("httpbin.json"), sidecar.json());
            GoldenConfigTest.check(GoldenConfigTest.GOLDEN.resolve(dir).resolve("ingressgateway.json"), gateway.json());
            assertEquals(List.of(), EnvoyConfigCheck.check(sidecar.typed()).unexpected(Set.of()), dir + " httpbin");
            assertEquals(List.of(), EnvoyConfigCheck.check(gateway.typed()).unexpected(Set.of()), dir + " ingress");
            // the policies are there at all: an inbound HCM and the ingress HCM carry RBAC
            assertTrue(hasRbac(sidecar), dir + ": httpbin's inbound chains carry RBAC");
            assertTrue(hasRbac(gateway), dir + ": the ingress gateway carries RBAC");
        }
    }

    static boolean hasRbac(GoldenConfigTest.ProxyConfig config) throws Exception {
        for (var a : config.listeners()) {
            for (var chain : a.unpack(Listener.class).getFilterChainsList()) {
                for (var f : chain.getFiltersList()) {
                    if (f.getName().equals("envoy.filters.network.rbac")) {
                        return true;
                    }
                    if (f.getTypedConfig().is(HttpConnectionManager.class) && f.getTypedConfig()
                            .unpack(HttpConnectionManager.class).getHttpFiltersList().stream()
                            .anyMatch(h -> h.getName().equals("envoy.filters.http.rbac"))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
