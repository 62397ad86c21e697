package io.meshpilot.bench;

import io.meshpilot.config.kube.gateway.ConversionResult;
import io.meshpilot.config.kube.gateway.convert.GatewayApiConversion;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.networking.GeneratedGateways;
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
 * {@code gateways} Gateways of class {@code istio} ({@link GeneratedGateways#inputs}: each Gateway
 * in its own namespace with an HTTP listener for {@code *.<namespace>.example.com}, each route
 * for one host of it with a path-prefix rule split 90/10 over two Services and a header-match
 * rule; issue 33, acceptance 4). {@link GatewayApiPushBenchmark} is the push of what it yields.
 * Setup prints what the conversion produced. Run with {@code bin/bench GatewayApiConversion -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class GatewayApiConversionBenchmark {
    @Param({"100"})
    public int gateways;

    @Param({"1000"})
    public int routes;

    private GatewayApiInputs inputs;

    @Setup(Level.Trial)
    public void build() {
        inputs = GeneratedGateways.inputs(gateways, routes);
        ConversionResult result = GatewayApiConversion.convert(inputs);
        System.out.printf("%n[gateway-api] %d Gateways, %d HTTPRoutes (%d input objects) -> %d Istio Gateways, "
                        + "%d VirtualServices, %d statuses%n", gateways, routes, inputs.objects().size(),
                result.gateways().size(), result.virtualServices().size(), result.statuses().size());
    }

    @Benchmark
    public ConversionResult convert() {
        return GatewayApiConversion.convert(inputs);
    }
}
