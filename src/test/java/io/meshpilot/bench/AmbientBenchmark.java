package io.meshpilot.bench;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.meshpilot.model.Proxy;
import io.meshpilot.registry.ambient.AmbientIndex;
import io.meshpilot.registry.ambient.GeneratedAmbient;
import io.meshpilot.xds.ZtunnelXds;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Issue 35's acceptance 4 over {@link GeneratedAmbient} ({@code pods} captured pods, 10 per
 * Service, 100 per namespace, on 100 nodes):
 * <ul>
 * <li>{@code buildIndex}: the whole ambient index built through the functions the controller runs
 * per object (services, then pods against their namespace's services); setup prints the heap the
 * built index retains;</li>
 * <li>{@code podChangePush}: one pod changes (its {@code version} label alternates, so every call
 * is a change): its workload built again and put, then the push to {@code ztunnels} wildcard
 * ztunnel connections as a push worker builds it for each (the Address generator scoped to the
 * one changed uid, the delta response serialized), without debounce and gRPC.</li>
 * </ul>
 * Run with {@code bin/bench Ambient -prof gc}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class AmbientBenchmark {
    @Param({"10000"})
    public int pods;

    @Param({"100"})
    public int ztunnels;

    private GeneratedAmbient cluster;
    private AmbientIndex index;
    private ZtunnelXds xds;
    private final List<Proxy> proxies = new ArrayList<>();
    private int tick;

    @Setup(Level.Trial)
    public void build() {
        cluster = new GeneratedAmbient(pods);
        long before = RegistryBenchmark.usedHeap();
        long t0 = System.nanoTime();
        index = cluster.build();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long bytes = RegistryBenchmark.usedHeap() - before;
        xds = new ZtunnelXds(index);
        for (int i = 0; i < ztunnels; i++) {
            proxies.add(ZtunnelXds.ztunnel(i, "node-" + i));
        }
        DeltaDiscoveryResponse all = xds.initial(proxies.getFirst(), 1);
        System.out.printf("%n[ambient] %d pods, %d services: index built in %d ms, retains %.1f MB (%.0f bytes per "
                        + "pod); a wildcard ztunnel's first answer: %d resources, %.1f MB%n", pods,
                cluster.serviceCount(), ms, bytes / 1048576.0, (double) bytes / pods, all.getResourcesCount(),
                all.getSerializedSize() / 1048576.0);
    }

    @Benchmark
    public AmbientIndex buildIndex() {
        return cluster.build();
    }

    @Benchmark
    public long podChangePush() {
        int i = tick++;
        String uid = cluster.podChanged(index, cluster.pod(i % 100, i / 100 % 2 == 0 ? "v2" : "v1"));
        long bytes = 0;
        for (Proxy p : proxies) {
            bytes += xds.push(p, Set.of(uid), i).toByteString().size();
        }
        return bytes;
    }
}
