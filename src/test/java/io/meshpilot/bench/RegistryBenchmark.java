package io.meshpilot.bench;

import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.networking.v1alpha3.WorkloadSelector;
import io.meshpilot.config.Config;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ShardKey;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * The registry at scale: N ServiceEntries, each selecting 10 WorkloadEntries, built through
 * the real validating config store and its events. Setup prints build time and retained
 * heap; the benchmark is one WorkloadEntry change end to end (store write, event, selection,
 * endpoint recompute, endpoint index update, push decision). Its cost must not grow with N.
 * Run with {@code bin/bench Registry}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx4g"})
public class RegistryBenchmark {
    static final GroupVersionKind SE = new GroupVersionKind("networking.istio.io", "v1", "ServiceEntry");
    static final GroupVersionKind WE = new GroupVersionKind("networking.istio.io", "v1", "WorkloadEntry");
    static final int ENDPOINTS = 10;

    @Param({"100", "10000"})
    public int services;

    private MemoryConfigStore store;
    private ServiceEntryRegistry registry;
    private final EndpointIndex index = new EndpointIndex();
    private final AtomicLong pushes = new AtomicLong();
    private int tick;

    /** The DiscoveryServer's contract over a real endpoint index, counting pushes. */
    private final RegistryUpdates updates = new RegistryUpdates() {
        @Override
        public void edsUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
            if (index.update(shard, hostname, namespace, endpoints) != EndpointIndex.PushType.NONE) {
                pushes.incrementAndGet();
            }
        }

        @Override
        public void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
            index.update(shard, hostname, namespace, endpoints);
        }

        @Override
        public void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted) {
            pushes.incrementAndGet();
        }

        @Override
        public void networkGatewaysUpdate() {
            pushes.incrementAndGet();
        }

        @Override
        public void addressesUpdate(Set<String> keys, Set<String> waypoints) {
            pushes.incrementAndGet();
        }

        @Override
        public void ambientPoliciesUpdate(Set<String> names) {
            pushes.incrementAndGet();
        }
    };

    static Config serviceEntry(int i) {
        return Config.of(SE, "bench", "svc-" + i, ServiceEntry.newBuilder()
                .addHosts("svc-" + i + ".bench.svc.cluster.local")
                .addPorts(ServicePort.newBuilder().setNumber(8080).setName("http").setProtocol("HTTP"))
                .setResolution(ServiceEntry.Resolution.STATIC)
                .setLocation(ServiceEntry.Location.MESH_INTERNAL)
                .setWorkloadSelector(WorkloadSelector.newBuilder().putLabels("app", "svc-" + i))
                .build());
    }

    static Config workloadEntry(int service, int replica, int weight) {
        return Config.of(WE, "bench", "svc-" + service + "-" + replica, WorkloadEntry.newBuilder()
                .setAddress("10." + (service / 250 % 250) + "." + (service % 250) + "." + (replica + 1))
                .putLabels("app", "svc-" + service).putLabels("version", "v" + (replica % 3))
                .setServiceAccount("svc-" + service)
                .setLocality("region/zone-" + (replica % 3))
                .setWeight(weight)
                .build());
    }

    static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Setup(Level.Trial)
    public void build() throws Exception {
        long before = usedHeap();
        long t0 = System.nanoTime();
        store = new MemoryConfigStore("bench", Schemas.PILOT.all(), true);
        registry = new ServiceEntryRegistry(store, updates, () -> "cluster.local", "Kubernetes");
        store.registerEventHandler("ServiceEntry", registry::onConfigEvent);
        store.registerEventHandler("WorkloadEntry", registry::onConfigEvent);
        store.run();
        for (int i = 0; i < services; i++) {
            store.create(serviceEntry(i));
            for (int r = 0; r < ENDPOINTS; r++) {
                store.create(workloadEntry(i, r, 1));
            }
        }
        if (!store.awaitEventsDelivered(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("build did not finish");
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long bytes = usedHeap() - before;
        int eps = registry.services().stream().mapToInt(s -> index.shards(s.hostname(), s.namespace()).all().size()).sum();
        System.out.printf("%n[registry] services=%d endpoints=%d build=%d ms (%.1f us per object) heap=%.1f MB "
                        + "(%.1f KB per service incl. its config)%n", services, eps, ms,
                ms * 1000.0 / (services * (1 + ENDPOINTS)), bytes / 1048576.0, bytes / 1024.0 / services);
        if (eps != services * ENDPOINTS) {
            throw new IllegalStateException("expected " + services * ENDPOINTS + " endpoints, got " + eps);
        }
    }

    /**
     * One endpoint's weight changes: an incremental EDS update for one service. Both sizes
     * touch the same 100 services, so the comparison is of the algorithm, not of how many
     * services fit in the CPU caches.
     */
    @Benchmark
    public long updateOneEndpoint() throws Exception {
        int service = tick % 100;
        int replica = (tick / 100) % ENDPOINTS;
        tick++;
        Config cur = store.get("WorkloadEntry", "bench", "svc-" + service + "-" + replica).orElseThrow();
        int weight = ((WorkloadEntry) cur.spec()).getWeight() % 100 + 1;
        store.update(workloadEntry(service, replica, weight));
        store.awaitEventsDelivered(10, TimeUnit.SECONDS);
        return pushes.get();
    }

    @TearDown(Level.Trial)
    public void close() {
        store.close();
    }
}
