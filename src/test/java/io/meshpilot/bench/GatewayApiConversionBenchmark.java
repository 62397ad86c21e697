package io.meshpilot.bench;

import com.google.gson.JsonParser;
import io.meshpilot.config.kube.gateway.GatewayApiConversion;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.TestGatewayServices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * One full Gateway API conversion ({@link GatewayApiConversion#convert}: Istio Gateways,
 * VirtualServices and every status) of {@code routes} HTTPRoutes spread evenly over
 * {@code gateways} Gateways of class {@code istio}, each Gateway in its own namespace with an
 * HTTP listener for {@code *.<namespace>.example.com}, each route for one host of it with a
 * path-prefix rule split 90/10 over two Services and a header-match rule (issue 33, acceptance
 * 4). Setup prints what the conversion produced. Run with
 * {@code bin/bench GatewayApiConversion -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class GatewayApiConversionBenchmark {
    private static final String DOMAIN_SUFFIX = "cluster.local";

    @Param({"100"})
    public int gateways;

    @Param({"1000"})
    public int routes;

    private GatewayApiInputs inputs;

    @Setup(Level.Trial)
    public void build() {
        inputs = inputs(gateways, routes);
        GatewayApiConversion.Result result = GatewayApiConversion.convert(inputs);
        System.out.printf("%n[gateway-api] %d Gateways, %d HTTPRoutes (%d input objects) -> %d Istio Gateways, "
                        + "%d VirtualServices, %d statuses%n", gateways, routes, inputs.objects().size(),
                result.gateways().size(), result.virtualServices().size(), result.statuses().size());
    }

    @Benchmark
    public GatewayApiConversion.Result convert() {
        return GatewayApiConversion.convert(inputs);
    }

    /** The generated snapshot: one GatewayClass, the Gateways, the routes and every Service they name. */
    static GatewayApiInputs inputs(int gateways, int routes) {
        List<GatewayApiObject> objects = new ArrayList<>();
        Map<String, Map<String, String>> namespaceLabels = new TreeMap<>();
        TestGatewayServices.Builder services = TestGatewayServices.builder();
        objects.add(object("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "istio"},
                 "spec": {"controllerName": "istio.io/gateway-controller"}}
                """));
        for (int g = 0; g < gateways; g++) {
            String namespace = "team-" + g;
            namespaceLabels.put(namespace, Map.of("kubernetes.io/metadata.name", namespace));
            objects.add(object("""
                    {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                     "metadata": {"name": "gateway", "namespace": "%s"},
                     "spec": {"gatewayClassName": "istio", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP",
                              "hostname": "*.%s.example.com", "allowedRoutes": {"namespaces": {"from": "Same"}}}]}}
                    """.formatted(namespace, namespace)));
            services.service("gateway-istio." + namespace + ".svc." + DOMAIN_SUFFIX, namespace, 80);
        }
        for (int r = 0; r < routes; r++) {
            String namespace = "team-" + (r % gateways);
            String name = "route-" + r;
            objects.add(object("""
                    {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                     "metadata": {"name": "%1$s", "namespace": "%2$s"},
                     "spec": {"parentRefs": [{"name": "gateway"}], "hostnames": ["%1$s.%2$s.example.com"],
                              "rules": [
                                {"matches": [{"path": {"type": "PathPrefix", "value": "/api"}}],
                                 "backendRefs": [{"name": "%1$s-v1", "port": 8080, "weight": 90},
                                                 {"name": "%1$s-v2", "port": 8080, "weight": 10}]},
                                {"matches": [{"headers": [{"name": "x-canary", "value": "true"}]}],
                                 "backendRefs": [{"name": "%1$s-v2", "port": 8080}]}]}}
                    """.formatted(name, namespace)));
            services.service(name + "-v1." + namespace + ".svc." + DOMAIN_SUFFIX, namespace, 8080);
            services.service(name + "-v2." + namespace + ".svc." + DOMAIN_SUFFIX, namespace, 8080);
        }
        return new GatewayApiInputs(objects, namespaceLabels, services.build(), Map.of(), Map.of(),
                GatewayApiInputs.Settings.defaults(DOMAIN_SUFFIX, "Kubernetes"));
    }

    private static GatewayApiObject object(String json) {
        return GatewayApiObject.fromJson(JsonParser.parseString(json).getAsJsonObject());
    }
}
