package io.meshpilot.bench;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedMesh;
import io.meshpilot.xds.SidecarXds;
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
 * The full config of one Envoy sidecar (CDS, EDS, LDS and RDS, packed and serialized as the
 * server sends them) in generated meshes of N services, 20% with a VirtualService and a
 * DestinationRule ({@link GeneratedMesh}). {@code uncached}: the builders directly, as for the
 * first proxy of a scope or with the cache off; {@code cached}: the server's push path after
 * another sidecar of the same scope warmed the XdsCache and shared responses, i.e. what each
 * further proxy costs. {@code cds/eds/lds/rds} split the uncached build by type. Setup prints
 * the mesh build time and the serialized size of each response. Run with
 * {@code bin/bench SidecarTranslation -prof gc} (gc.alloc.rate.norm is bytes per config).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx4g"})
public class SidecarTranslationBenchmark {
    @Param({"100", "1000", "5000"})
    public int services;

    private GeneratedMesh mesh;
    private PushContext push;
    private SidecarXds xds;
    /** A sidecar of service 0's v2 workload: the proxy measured in both modes. */
    private Proxy proxy;
    private SidecarXds.Subscriptions subscriptions;

    @Setup(Level.Trial)
    public void build() throws Exception {
        long t0 = System.nanoTime();
        mesh = GeneratedMesh.of(services);
        push = mesh.push();
        long buildMs = (System.nanoTime() - t0) / 1_000_000;
        xds = new SidecarXds();
        // the first proxy of the scope (service 0's v1 workload) fills the cache and the shared responses
        Proxy first = GeneratedMesh.sidecar(0, 1);
        xds.cached(first, push, SidecarXds.subscriptions(first, push));
        proxy = GeneratedMesh.sidecar(0, 2);
        subscriptions = SidecarXds.subscriptions(proxy, push); // its own, as each connection holds its own
        SidecarXds.Config c = SidecarXds.uncached(proxy, push, subscriptions);
        StringBuilder sizes = new StringBuilder();
        for (DiscoveryResponse r : c.responses()) {
            String type = r.getTypeUrl().substring(r.getTypeUrl().lastIndexOf('.') + 1);
            sizes.append(String.format(" %s=%d/%,dB", type, r.getResourcesCount(), r.getSerializedSize()));
        }
        System.out.printf("%n[sidecar] services=%d mesh build %d ms (store, registry, push context); "
                + "one sidecar's config %,d bytes:%s%n", services, buildMs, c.bytes(), sizes);
    }

    @Benchmark
    public SidecarXds.Config uncached() {
        return SidecarXds.uncached(proxy, push, subscriptions);
    }

    @Benchmark
    public SidecarXds.Config cached() {
        return xds.cached(proxy, push, subscriptions);
    }

    @Benchmark
    public int cds() {
        return SidecarXds.cds(proxy, push).toByteArray().length;
    }

    @Benchmark
    public int eds() {
        return SidecarXds.eds(proxy, push, subscriptions).toByteArray().length;
    }

    @Benchmark
    public int lds() {
        return SidecarXds.lds(proxy, push).toByteArray().length;
    }

    @Benchmark
    public int rds() {
        return SidecarXds.rds(proxy, push, subscriptions).toByteArray().length;
    }

    @TearDown(Level.Trial)
    public void close() {
        xds.close();
        mesh.close();
    }
}
