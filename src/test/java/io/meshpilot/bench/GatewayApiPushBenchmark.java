package io.meshpilot.bench;

import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedGateways;
import io.meshpilot.xds.GatewayXds;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
 * The push half of issue 33's acceptance 4, over the input of {@link GatewayApiConversionBenchmark}
 * ({@link GeneratedGateways}: {@code routes} HTTPRoutes on {@code gateways} Gateways), converted
 * once and served from a store behind the aggregate as the Gateway API controller serves it:
 * <ul>
 * <li>{@code oneGateway}: the LDS and RDS of one gateway pod (Gateway {@code team-0/gateway}) as
 * the server's generators build, pack and serialize them; gateway config is not cached, so this
 * is what each gateway proxy costs on each push;</li>
 * <li>{@code routeChange}: what a push after one HTTPRoute changes costs, without debounce and
 * gRPC: the changed route's converted VirtualService put into the store (route 0's split
 * alternates between 90/10 and 80/20, so every call is a change), a new PushContext of the
 * whole config, then every gateway pod's LDS and RDS (a full push rebuilds them all). The
 * conversion of the changed snapshot is {@code GatewayApiConversionBenchmark.convert};</li>
 * <li>{@code pushContext}: the first part of {@code routeChange} alone (the put and the new
 * PushContext), so the rest of it is the 100 gateway pods' config.</li>
 * </ul>
 * Setup prints the PushContext build time and what one gateway pod gets. Run with
 * {@code bin/bench GatewayApi -prof gc} (with the conversion) or {@code bin/bench GatewayApiPush}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class GatewayApiPushBenchmark {
    @Param({"100"})
    public int gateways;

    @Param({"1000"})
    public int routes;

    private GeneratedGateways world;
    private final GatewayXds xds = new GatewayXds();
    private PushContext push;
    private List<Proxy> proxies;
    /** Each proxy's route names, as its connection holds them. */
    private List<Set<String>> routeNames;
    private long version = 1;

    @Setup(Level.Trial)
    public void build() throws Exception {
        world = GeneratedGateways.of(gateways, routes);
        long t0 = System.nanoTime();
        push = world.push(version);
        long pushMs = (System.nanoTime() - t0) / 1_000_000;
        proxies = world.gatewayProxies();
        routeNames = new ArrayList<>();
        for (Proxy p : proxies) {
            routeNames.add(GatewayXds.routeNames(p, push));
        }
        GatewayXds.Config one = oneGateway();
        RouteConfiguration rc = one.rds().getResources(0).unpack(RouteConfiguration.class);
        System.out.printf("%n[gateway-api push] %d Gateways, %d HTTPRoutes -> %d Istio Gateways, %d VirtualServices; "
                        + "push context %d ms; gateway pod %s: %d listener(s), route configurations %s, "
                        + "%d virtual hosts, %d routes, %,d bytes (LDS+RDS)%n", gateways, routes, world.gateways(),
                world.converted().virtualServices().size(), pushMs, proxies.get(0).id(), one.lds().getResourcesCount(),
                routeNames.get(0), rc.getVirtualHostsCount(),
                rc.getVirtualHostsList().stream().mapToInt(v -> v.getRoutesCount()).sum(), one.bytes());
    }

    @Benchmark
    public GatewayXds.Config oneGateway() {
        return xds.config(proxies.get(0), push, routeNames.get(0));
    }

    /** The first part of {@link #routeChange}: the changed route into the store and the new PushContext. */
    @Benchmark
    public PushContext pushContext() {
        world.changeRoute();
        return world.push(++version);
    }

    /** @return the bytes every gateway pod is sent */
    @Benchmark
    public long routeChange() {
        PushContext changed = pushContext();
        long bytes = 0;
        for (int i = 0; i < proxies.size(); i++) {
            bytes += xds.config(proxies.get(i), changed, routeNames.get(i)).bytes();
        }
        return bytes;
    }

    @TearDown(Level.Trial)
    public void close() {
        world.close();
    }
}
