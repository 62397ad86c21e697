package io.meshpilot.load;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.DecompressorRegistry;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.meshpilot.grpc.NettyDirectMemory;
import java.io.BufferedReader;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The xDS load tool ({@code bin/load}): starts MeshPilot as its own process with generated
 * config (S ServiceEntries x E WorkloadEntries), connects N simulated Envoy-like proxies (by
 * default each on its own connection and not offering gzip, as Envoy; state of the world:
 * wildcard CDS, then EDS for every cluster it lists, ACKing every response), and reports: time
 * until every proxy has a complete config; after an endpoint change in every service, time
 * until every proxy has the new EDS; bytes sent; NACKs and failed streams; the server's heap
 * per connected proxy (after a GC, via jcmd); the server's heap plus grpc-java's Netty direct memory
 * at the end; with {@code --storm true}, a restart storm (the server restarted, every proxy
 * reconnecting at once) timed like the complete config. Then, unless {@code --compare false}, the same
 * proxies against java-control-plane ({@link JcpServer}: its V3DiscoveryServer and SimpleCache
 * serving the same clusters and endpoints, in its own process with the same JVM flags), and a
 * side-by-side summary against the targets. The last line is the machine's load average
 * over the run against its cores.
 */
public final class XdsLoad {
    static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    public static void main(String[] argv) throws Exception {
        if (Arrays.asList(argv).contains("--kubernetes")) {
            KubeLoad.main(argv);
            return;
        }
        int proxies = intArg(argv, "--proxies", 100);
        int services = intArg(argv, "--services", 100);
        int endpoints = intArg(argv, "--endpoints", 2);
        String transport = strArg(argv, "--grpcTransport", "netty");
        boolean compare = !"false".equals(strArg(argv, "--compare", "true"));
        String profile = strArg(argv, "--profileFanout", null);
        int changes = Math.max(1, intArg(argv, "--changes", 3));
        boolean storm = "true".equals(strArg(argv, "--storm", "false"));
        boolean warm = "true".equals(strArg(argv, "--warmServer", "false"));
        MachineLoad machine = MachineLoad.start();
        // Like Envoy sidecars by default: one connection per proxy, gzip not offered. Earlier
        // runs put 100 streams on a connection and offered gzip as grpc-java's client does
        // (Helidon then compresses every response): --streamsPerConnection 100 --acceptGzip true
        double slowFraction = Double.parseDouble(strArg(argv, "--slowFraction", "0"));
        Clients clients = new Clients(Math.max(1, intArg(argv, "--streamsPerConnection", 1)),
                "true".equals(strArg(argv, "--acceptGzip", "false")),
                slowFraction <= 0 ? 0 : (int) Math.max(1, Math.round(1 / slowFraction)),
                1_000_000_000L / Math.max(1, intArg(argv, "--slowReadKiBps", 256) * 1024L));
        System.out.printf("load: %d proxies, %d services x %d endpoints, transport %s, %d streams per connection, "
                + "gzip %s%s%s%n", proxies, services, endpoints, transport, clients.streamsPerConnection(),
                clients.acceptGzip() ? "accepted" : "not accepted", clients.slowEvery() == 0 ? ""
                        : ", every " + clients.slowEvery() + "th proxy reading at " + intArg(argv, "--slowReadKiBps", 256)
                        + " KiB/s", warm ? ", each measured server warmed by the same load first" : "");
        // the tool's own client (gRPC, protobuf parsing) is warmed first against a throwaway
        // server, so that neither measured server meets a cold client
        // with the same size and phases as the measured runs: a 200-proxy warm-up left the
        // first measured server paying for the tool's JIT (about 5 s of the tool's CPU at
        // 2,000 proxies, whichever server went first)
        try (Target t = JcpTarget.start(services, endpoints, false)) {
            long t0 = System.nanoTime();
            PrintStream out = System.out;
            System.setOut(new PrintStream(OutputStream.nullOutputStream()));
            try {
                run(t, proxies, services, endpoints, changes, clients, storm);
            } finally {
                System.setOut(out);
            }
            System.out.printf("(tool warm-up: the same load against a throwaway java-control-plane in %d ms, not measured)%n",
                    (System.nanoTime() - t0) / 1_000_000);
        }
        System.gc();
        // set after the warm-up: only the measured servers are recorded
        profileDir = profile == null ? null : Files.createDirectories(Path.of(profile));
        warmServer = warm;
        Result meshpilot;
        try (Target t = MeshPilotTarget.start(services, endpoints, transport, proxies)) {
            meshpilot = run(t, proxies, services, endpoints, changes, clients, storm);
        }
        boolean ok = meshpilot.ok();
        if (compare) {
            System.gc();
            System.out.printf("%nsame load against java-control-plane %s (V3DiscoveryServer, SimpleCache, grpc-java Netty)%n",
                    JCP_VERSION);
            Result jcp;
            try (Target t = JcpTarget.start(services, endpoints, false)) {
                jcp = run(t, proxies, services, endpoints, changes, clients, storm);
            }
            ok &= jcp.ok();
            compare(meshpilot, jcp, transport, proxies);
        }
        System.out.println(machine.summary());
        machine.close();
        if (!ok) {
            System.exit(1);
        }
    }

    static final String JCP_VERSION = "1.0.49";

    /** With {@code --profileFanout DIR}: where each measured server's complete-config and fan-out windows are recorded ({@link Profile}). */
    static Path profileDir;

    /** {@code --warmServer true}: each measured server is warmed by the same load first ({@link #warmUp}). */
    static boolean warmServer;

    /** What one run measured. */
    record Result(String server, int proxies, long[] complete, long completeAllMs, List<Fanout> fanouts,
                  long heapIdle, long heapConnected, long responses, long bytes, long nacks, long failed,
                  double cpuComplete, Map<String, Cluster> clusters, Map<String, ClusterLoadAssignment> before,
                  Map<String, ClusterLoadAssignment> after, Memory end, Storm storm) {
        boolean ok() {
            return complete.length == proxies && fanouts.stream().allMatch(f -> f.times().length == proxies)
                    && failed == 0 && (storm == null || storm.ok(proxies));
        }

        double kibPerProxy() {
            return (heapConnected - heapIdle) / 1024.0 / proxies;
        }
    }

    /** The server's used heap after a full GC and grpc-java's Netty direct memory, in bytes. */
    record Memory(long heap, long direct) {
        static Memory of(Target server) throws Exception {
            return new Memory(server.heapAfterGc(), server.directMemory());
        }

        double totalMiB() {
            return (heap + direct) / 1048576.0;
        }

        /** {@code server heap + direct: X MiB (heap Y, direct Z) at the end}, in MiB. */
        String line() {
            return String.format("server heap + direct: %.1f MiB (heap %.1f, direct %.1f) at the end", totalMiB(),
                    heap / 1048576.0, direct / 1048576.0);
        }
    }

    /**
     * {@code --storm}: per proxy the time from the new server's readiness until it had its
     * complete config again (sorted), until all had; the restart's own times; what it cost.
     */
    record Storm(long[] times, long allMs, long stopMs, long startMs, int endedByRestart, double serverCpu,
                 long failed, long nacks, Memory end) {
        boolean ok(int proxies) {
            return times.length == proxies && failed == 0;
        }
    }

    /** One change's fan-out: per proxy the time until it had every new assignment (sorted), until all had, server CPU. */
    record Fanout(int change, long[] times, long allMs, double serverCpu) {
    }

    /**
     * Change {@code k} (odd: ports to 20000+e, even: back to 19000+e), timed until every proxy
     * holds the new assignments; with {@code --profileFanout}, the server is profiled meanwhile.
     */
    static Fanout fanout(Target server, List<SimulatedProxy> sims, Cpu cpu, int k, int services, int endpoints)
            throws Exception {
        int port = k % 2 == 1 ? 20000 : 19000;
        server.prepareChange(services, endpoints, port);
        CountDownLatch updated = new CountDownLatch(sims.size());
        sims.forEach(s -> s.expectPort(port, updated));
        long responsesBefore = sims.stream().mapToLong(s -> s.responses.get()).sum();
        long bytesBefore = sims.stream().mapToLong(s -> s.bytes.get()).sum();
        // the tool's own garbage is collected before the clock starts, not in a measured window
        System.gc();
        Profile profile = Profile.start(server, "fanout-" + k);
        cpu.phase();
        long t1 = System.nanoTime();
        sims.forEach(s -> s.updateStart = t1); // each proxy's time counts from the change, as the total does
        server.change(services, endpoints);
        updated.await(10, TimeUnit.MINUTES);
        long fanoutMs = (System.nanoTime() - t1) / 1_000_000;
        String cpuLine = cpu.phase();
        profile.stop();
        long[] times = sims.stream().mapToLong(s -> s.updatedMs).filter(v -> v >= 0).sorted().toArray();
        System.out.printf("push fan-out after endpoint change %d in every service (%s): %d/%d proxies in %d ms "
                        + "(first %d ms, p50 %d ms, p99 %d ms; %s)%n", k, k == 1 ? "the first since start" : "warm",
                times.length, sims.size(), fanoutMs, times.length == 0 ? -1 : times[0], pct(times, 50),
                pct(times, 99), server.changeNote());
        long[] others = sims.stream().filter(s -> s.readDelayNanosPerByte == 0).mapToLong(s -> s.updatedMs)
                .filter(v -> v >= 0).sorted().toArray();
        if (others.length < times.length) {
            System.out.printf("  the proxies not reading slowly: %d in %d ms (p50 %d ms, p99 %d ms)%n", others.length,
                    pct(others, 100), pct(others, 50), pct(others, 99));
        }
        System.out.printf("  %s; %d responses, %.1f MB until then%s%n", cpuLine,
                sims.stream().mapToLong(s -> s.responses.get()).sum() - responsesBefore,
                (sims.stream().mapToLong(s -> s.bytes.get()).sum() - bytesBefore) / 1048576.0,
                profile.note());
        return new Fanout(k, times, fanoutMs, cpu.lastServerSeconds);
    }

    /**
     * With {@code --profileFanout DIR}, one measured window of the server (and, with async-profiler,
     * of the tool, which shares the cores): a JFR recording with every JIT compilation, or, when
     * ASYNC_PROFILER_LIB names async-profiler's library, its CPU profile with kernel time as
     * collapsed stacks. Without the option it records nothing.
     */
    record Profile(Target server, Path recording, Path toolRecording, String asyncProfiler) {
        static Profile start(Target server, String window) throws Exception {
            String asyncProfiler = System.getenv("ASYNC_PROFILER_LIB");
            if (profileDir == null) {
                return new Profile(server, null, null, asyncProfiler);
            }
            Path recording = profileDir.resolve(server.name() + "-" + window + (asyncProfiler == null ? ".jfr" : ".collapsed"));
            Path toolRecording = profileDir.resolve("tool-" + server.name() + "-" + window + ".collapsed");
            if (asyncProfiler == null) {
                // every JIT compilation, however short: what the compiler threads spend the window on
                jcmd(server.pid(), "JFR.start", "name=window", "settings=profile", "+jdk.Compilation#threshold=0ms");
            } else {
                // quoted: jcmd would read an argument with "=" as one of its own options
                jcmd(server.pid(), "JVMTI.agent_load", asyncProfiler, "\"start,event=itimer,interval=2ms,threads\"");
                jcmd(ProcessHandle.current().pid(), "JVMTI.agent_load", asyncProfiler, "\"start,event=itimer,interval=2ms,threads\"");
            }
            return new Profile(server, recording, toolRecording, asyncProfiler);
        }

        void stop() throws Exception {
            if (recording == null) {
                return;
            }
            if (asyncProfiler == null) {
                jcmd(server.pid(), "JFR.stop", "name=window", "filename=" + recording);
            } else {
                jcmd(server.pid(), "JVMTI.agent_load", asyncProfiler, "\"stop,collapsed,file=" + recording + "\"");
                jcmd(ProcessHandle.current().pid(), "JVMTI.agent_load", asyncProfiler, "\"stop,collapsed,file="
                        + toolRecording + "\"");
            }
        }

        /** "; recorded: ..." for the report line, or nothing. */
        String note() {
            return recording == null ? "" : "; recorded: " + recording + (asyncProfiler == null ? " (server)"
                    : " and, for the tool, " + toolRecording);
        }
    }

    /**
     * {@code --storm}: the server restarts as a control-plane restart does (SIGTERM, then a new
     * process on the same gRPC port) and every proxy reconnects at once when the new one is
     * ready, as a fleet does (istio/istio#35263: 5,000 proxies at once). The stream the restart
     * ends is not a failure; each proxy then opens a new one as Envoy does, sending its node and
     * the versions it holds (CDS, then EDS with its clusters), and counts as configured again once
     * it has an EDS response with every service. The clock starts when the new server is ready:
     * Envoy's reconnect backoff would spread the fleet over a few seconds, the tool makes it one
     * instant, the worst case for the server.
     */
    static Storm storm(Target server, List<ManagedChannel> channels, List<SimulatedProxy> sims, int services)
            throws Exception {
        CountDownLatch ended = new CountDownLatch(sims.size());
        sims.forEach(s -> s.expectRestart(ended));
        long t0 = System.nanoTime();
        server.stop();
        if (!ended.await(60, TimeUnit.SECONDS)) {
            System.out.printf("  %d streams still open 60 s after the server stopped%n", ended.getCount());
        }
        long stopMs = (System.nanoTime() - t0) / 1_000_000;
        long t1 = System.nanoTime();
        server.startAgain();
        long startMs = (System.nanoTime() - t1) / 1_000_000;
        int endedByRestart = (int) sims.stream().filter(s -> s.restartEnd != null).count();
        long responsesBefore = sims.stream().mapToLong(s -> s.responses.get()).sum();
        long bytesBefore = sims.stream().mapToLong(s -> s.bytes.get()).sum();
        long nacksBefore = sims.stream().mapToLong(s -> s.nacks.get()).sum();
        // a channel that tried the stopped server would wait out grpc-java's reconnect backoff first
        channels.forEach(ManagedChannel::resetConnectBackoff);
        Cpu cpu = new Cpu(server.pid());
        CountDownLatch configured = new CountDownLatch(sims.size());
        long t2 = System.nanoTime();
        sims.forEach(s -> s.reconnect(configured, t2));
        configured.await(10, TimeUnit.MINUTES);
        long allMs = (System.nanoTime() - t2) / 1_000_000;
        long[] times = sims.stream().mapToLong(s -> s.reconfiguredMs).filter(v -> v >= 0).sorted().toArray();
        System.out.printf("restart storm, complete config again: %d/%d proxies in %d ms (p50 %d ms, p99 %d ms, max %d ms)%n",
                times.length, sims.size(), allMs, pct(times, 50), pct(times, 99), pct(times, 100));
        System.out.println("  " + cpu.phase());
        System.out.printf("  the restart: the server stopped in %d ms (SIGTERM; %d of %d streams ended by it: %s), the "
                        + "new one was ready %d ms later; the clock starts then, when every proxy reconnects at once%n",
                stopMs, endedByRestart, sims.size(), sims.stream().map(s -> s.restartEnd).filter(e -> e != null)
                        .map(XdsLoad::statusOf).findFirst().orElse("none"), startMs);
        long failed = sims.stream().filter(s -> s.failure != null).count();
        long nacks = sims.stream().mapToLong(s -> s.nacks.get()).sum() - nacksBefore;
        System.out.printf("  traffic since the restart: %d responses, %.1f MB; NACKs sent %d; failed streams %d%n",
                sims.stream().mapToLong(s -> s.responses.get()).sum() - responsesBefore,
                (sims.stream().mapToLong(s -> s.bytes.get()).sum() - bytesBefore) / 1048576.0, nacks, failed);
        sims.stream().filter(s -> s.failure != null).limit(3)
                .forEach(s -> System.out.println("  failure: " + s.failure));
        Memory end = Memory.of(server);
        System.out.println(end.line());
        return new Storm(times, allMs, stopMs, startMs, endedByRestart, cpu.lastServerSeconds, failed, nacks, end);
    }

    /** How a stream ended, in a word: its gRPC status code (UNKNOWN for an error without one). */
    static String statusOf(Throwable t) {
        return Status.fromThrowable(t).getCode().toString();
    }

    /**
     * How the simulated proxies connect: streams sharing one connection, whether they offer gzip,
     * and which read slowly (every {@code slowEvery}th, 0 none, taking {@code slowNanosPerByte}
     * per byte received before they read on: their HTTP/2 window fills as a slow proxy's does).
     */
    record Clients(int streamsPerConnection, boolean acceptGzip, int slowEvery, long slowNanosPerByte) {
        long readDelayNanosPerByte(int proxy) {
            return slowEvery > 0 && proxy % slowEvery == slowEvery - 1 ? slowNanosPerByte : 0;
        }
    }

    /** The tool's connections to {@code server}: one per proxy, or shared as {@code clients} says. */
    static List<ManagedChannel> channels(Target server, int proxies, Clients clients) {
        List<ManagedChannel> channels = new ArrayList<>();
        int connections = Math.max(1, (proxies + clients.streamsPerConnection() - 1) / clients.streamsPerConnection());
        for (int i = 0; i < connections; i++) {
            NettyChannelBuilder b = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext()
                    .maxInboundMessageSize(64 * 1024 * 1024);
            if (!clients.acceptGzip()) {
                b.decompressorRegistry(DecompressorRegistry.emptyInstance().with(Codec.Identity.NONE, true));
            }
            channels.add(b.build());
        }
        return channels;
    }

    /**
     * {@code --warmServer true}: the same proxies connect once and get their complete config,
     * unmeasured, then leave, so the measured run meets a server whose JIT has compiled the
     * serving path, as a control plane that has been running does when proxies come and go
     * (the storm measures the cold case: a new process).
     */
    static void warmUp(Target server, int proxies, int services, int endpoints, Clients clients) throws Exception {
        long t0 = System.nanoTime();
        List<ManagedChannel> channels = channels(server, proxies, clients);
        try {
            CountDownLatch complete = new CountDownLatch(proxies);
            for (int i = 0; i < proxies; i++) {
                new SimulatedProxy(i, channels.get(i % channels.size()), complete, t0, services, endpoints, 0).start();
            }
            if (!complete.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("warm-up: " + complete.getCount() + " proxies never got a complete config");
            }
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
            for (ManagedChannel c : channels) {
                c.awaitTermination(30, TimeUnit.SECONDS);
            }
        }
        Thread.sleep(2000); // the server sees the streams end and drops their connections
        System.out.printf("(server warm-up: %d proxies got their complete config and left in %d ms, not measured)%n", proxies,
                (System.nanoTime() - t0) / 1_000_000);
    }

    /** The same proxies against one server: complete config, heap per proxy, fan-out of changes. */
    static Result run(Target server, int proxies, int services, int endpoints, int changes, Clients clients,
                      boolean storm) throws Exception {
        if (warmServer) {
            warmUp(server, proxies, services, endpoints, clients);
        }
        long heapIdle = server.heapAfterGc();
        List<ManagedChannel> channels = channels(server, proxies, clients);
        try {
            List<SimulatedProxy> sims = new ArrayList<>();
            CountDownLatch complete = new CountDownLatch(proxies);
            Cpu cpu = new Cpu(server.pid());
            Profile profile = Profile.start(server, "complete");
            long t0 = System.nanoTime();
            for (int i = 0; i < proxies; i++) {
                SimulatedProxy p = new SimulatedProxy(i, channels.get(i % channels.size()), complete, t0, services, endpoints,
                        clients.readDelayNanosPerByte(i));
                sims.add(p);
                p.start();
            }
            complete.await(10, TimeUnit.MINUTES);
            long connectMs = (System.nanoTime() - t0) / 1_000_000;
            profile.stop();
            long[] firstConfig = sims.stream().mapToLong(s -> s.completeMs).filter(v -> v >= 0).sorted().toArray();
            System.out.printf("complete config: %d/%d proxies in %d ms (p50 %d ms, p99 %d ms, max %d ms)%n",
                    firstConfig.length, proxies, connectMs, pct(firstConfig, 50), pct(firstConfig, 99),
                    pct(firstConfig, 100));
            System.out.println("  " + cpu.phase() + profile.note());
            double cpuComplete = cpu.lastServerSeconds;
            Map<String, ClusterLoadAssignment> before = new TreeMap<>(sims.get(0).assignments);
            long heapConnected = server.heapAfterGc();
            System.out.printf("server heap: %.1f MB idle, %.1f MB with %d proxies: %.1f KiB per connected proxy%n",
                    heapIdle / 1048576.0, heapConnected / 1048576.0, proxies, (heapConnected - heapIdle) / 1024.0 / proxies);

            // endpoint changes in every service: every endpoint's port moves from 19000+e to 20000+e and
            // back. The first change after start-up meets each server's change path cold (MeshPilot's file
            // parse, registry and incremental push have not run since start, java-control-plane's snapshot
            // diff neither); later ones measure it warm, as a long-running server is.
            List<Fanout> fanouts = new ArrayList<>();
            for (int k = 1; k <= changes; k++) {
                fanouts.add(fanout(server, sims, cpu, k, services, endpoints));
            }
            long bytes = sims.stream().mapToLong(s -> s.bytes.get()).sum();
            long responses = sims.stream().mapToLong(s -> s.responses.get()).sum();
            long nacks = sims.stream().mapToLong(s -> s.nacks.get()).sum();
            long failed = sims.stream().filter(s -> s.failure != null).count();
            System.out.printf("traffic: %d responses, %.1f MB; NACKs sent %d; failed streams %d%n", responses,
                    bytes / 1048576.0, nacks, failed);
            sims.stream().filter(s -> s.failure != null).limit(3)
                    .forEach(s -> System.out.println("  failure: " + s.failure
                            + (s.failure.getCause() == null ? "" : " caused by " + s.failure.getCause())));
            String stats = server.stats();
            if (!stats.isEmpty()) {
                System.out.println("server: " + stats);
            }
            Memory end = Memory.of(server);
            System.out.println(end.line());
            // what proxy 0 holds is compared between the servers before the storm replaces it
            Map<String, Cluster> clusters = new TreeMap<>(sims.get(0).clusters0);
            Map<String, ClusterLoadAssignment> after = new TreeMap<>(sims.get(0).assignments);
            Storm restart = storm ? storm(server, channels, sims, services) : null;
            return new Result(server.name(), proxies, firstConfig, connectMs, fanouts,
                    heapIdle, heapConnected, responses, bytes, nacks, failed, cpuComplete, clusters,
                    before, after, end, restart);
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    /**
     * CPU seconds of the server process and of this tool per phase, and the machine's load
     * average: on a shared 2-core machine, whether a wall-clock number was disturbed.
     */
    static final class Cpu {
        final ProcessHandle server;
        long serverNanos;
        long toolNanos;
        double load;
        double lastServerSeconds;

        Cpu(long pid) {
            server = ProcessHandle.of(pid).orElseThrow();
            serverNanos = cpuNanos(server);
            toolNanos = cpuNanos(ProcessHandle.current());
            load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        }

        /** What the phase since the last call used; starts the next phase. */
        String phase() {
            long s = cpuNanos(server);
            long t = cpuNanos(ProcessHandle.current());
            double l = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            lastServerSeconds = (s - serverNanos) / 1e9;
            String out = String.format("CPU: server %.1f s, load tool %.1f s; load average %.1f -> %.1f",
                    lastServerSeconds, (t - toolNanos) / 1e9, load, l);
            serverNanos = s;
            toolNanos = t;
            load = l;
            return out;
        }

        static long cpuNanos(ProcessHandle p) {
            return p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
        }
    }

    /** The side-by-side summary: MeshPilot against java-control-plane, with the targets. */
    static void compare(Result mp, Result jcp, String transport, int proxies) {
        System.out.printf("%n== side by side: %d proxies; MeshPilot on its %s gRPC transport, java-control-plane %s "
                + "on grpc-java Netty%n", proxies, transport, JCP_VERSION);
        double complete = ratio(mp.completeAllMs(), jcp.completeAllMs());
        System.out.printf("complete config for all: meshpilot %.1f s vs java-control-plane %.1f s (ratio %.2f; "
                        + "target <= 1: %s)%n", mp.completeAllMs() / 1000.0, jcp.completeAllMs() / 1000.0, complete,
                complete <= 1 ? "met" : "MISSED");
        System.out.printf("  p50 %.1f s vs %.1f s, p99 %.1f s vs %.1f s%n", pct(mp.complete(), 50) / 1000.0,
                pct(jcp.complete(), 50) / 1000.0, pct(mp.complete(), 99) / 1000.0, pct(jcp.complete(), 99) / 1000.0);
        for (int i = 0; i < mp.fanouts().size(); i++) {
            compareFanout(i == 0 ? "change 1, the first since start" : "change " + (i + 1) + ", warm",
                    mp.fanouts().get(i), jcp.fanouts().get(i));
        }
        System.out.println("  MeshPilot's fan-out clock starts at the file rewrite (an atomic rename: includes its file "
                + "watch, parse, registry and 100 ms push debounce), java-control-plane's when the tool sends `change` "
                + "(a new snapshot)");
        System.out.printf("server CPU seconds (less disturbed by a busy machine than wall time): complete config "
                        + "%.1f vs %.1f (ratio %.2f)%n", mp.cpuComplete(), jcp.cpuComplete(),
                mp.cpuComplete() / jcp.cpuComplete());
        System.out.printf("heap per connected proxy: meshpilot %.1f KiB vs java-control-plane %.1f KiB "
                        + "(target for MeshPilot < 500 KiB: %s)%n", mp.kibPerProxy(), jcp.kibPerProxy(),
                mp.kibPerProxy() < 500 ? "met" : "MISSED");
        System.out.printf("traffic: meshpilot %d responses, %.1f MB, %d NACKs, %d failed streams; "
                        + "java-control-plane %d responses, %.1f MB, %d NACKs, %d failed streams%n",
                mp.responses(), mp.bytes() / 1048576.0, mp.nacks(), mp.failed(), jcp.responses(),
                jcp.bytes() / 1048576.0, jcp.nacks(), jcp.failed());
        System.out.println("resources (proxy 0): " + sameResources(mp, jcp));
        System.out.printf("server heap + direct at the end: meshpilot %.1f MiB vs java-control-plane %.1f MiB%n",
                mp.end().totalMiB(), jcp.end().totalMiB());
        if (mp.storm() != null && jcp.storm() != null) {
            Storm a = mp.storm();
            Storm b = jcp.storm();
            System.out.printf("restart storm, complete config again: meshpilot %.1f s vs java-control-plane %.1f s "
                            + "(ratio %.2f); server CPU %.1f s vs %.1f s; failed streams %d vs %d; NACKs %d vs %d; "
                            + "heap + direct at the end %.1f MiB vs %.1f MiB%n", a.allMs() / 1000.0, b.allMs() / 1000.0,
                    ratio(a.allMs(), b.allMs()), a.serverCpu(), b.serverCpu(), a.failed(), b.failed(), a.nacks(),
                    b.nacks(), a.end().totalMiB(), b.end().totalMiB());
        }
    }

    static void compareFanout(String which, Fanout mp, Fanout jcp) {
        double ratio = ratio(mp.allMs(), jcp.allMs());
        System.out.printf("fan-out to all, %s: meshpilot %.2f s vs java-control-plane %.2f s (ratio %.2f; target <= 0.5: "
                        + "%s)%n", which, mp.allMs() / 1000.0, jcp.allMs() / 1000.0, ratio, ratio <= 0.5 ? "met" : "MISSED");
        System.out.printf("  p50 %.2f s vs %.2f s, p99 %.2f s vs %.2f s; first proxy updated after %.2f s vs %.2f s; "
                        + "server CPU %.1f s vs %.1f s (ratio %.2f)%n", pct(mp.times(), 50) / 1000.0,
                pct(jcp.times(), 50) / 1000.0, pct(mp.times(), 99) / 1000.0, pct(jcp.times(), 99) / 1000.0,
                first(mp.times()) / 1000.0, first(jcp.times()) / 1000.0, mp.serverCpu(), jcp.serverCpu(),
                mp.serverCpu() / jcp.serverCpu());
    }

    static long first(long[] sorted) {
        return sorted.length == 0 ? -1 : sorted[0];
    }

    static double ratio(long a, long b) {
        return b == 0 ? Double.NaN : (double) a / b;
    }

    /** Whether both servers sent proxy 0 the same clusters and assignments, before and after the change. */
    static String sameResources(Result mp, Result jcp) {
        String d = diff("clusters", mp.clusters(), jcp.clusters());
        d = d != null ? d : diff("assignments before the change", mp.before(), jcp.before());
        d = d != null ? d : diff("assignments after the change", mp.after(), jcp.after());
        return d != null ? "DIFFERENT: " + d : "identical (" + mp.clusters().size() + " clusters, "
                + mp.after().size() + " assignments, before and after the change)";
    }

    static <M> String diff(String what, Map<String, M> a, Map<String, M> b) {
        if (!a.keySet().equals(b.keySet())) {
            return what + ": names differ (" + a.size() + " vs " + b.size() + ")";
        }
        for (var e : a.entrySet()) {
            if (!e.getValue().equals(b.get(e.getKey()))) {
                return what + ": " + e.getKey() + "\nmeshpilot:\n" + e.getValue() + "java-control-plane:\n"
                        + b.get(e.getKey());
            }
        }
        return null;
    }

    /** A server under load, as its own process. */
    interface Target extends AutoCloseable {
        String name();

        long pid();

        int grpcPort();

        /** Used heap after a full GC ({@code jcmd GC.run}). */
        long heapAfterGc() throws Exception;

        /** grpc-java's Netty direct memory: Netty's own count, the one its OutOfDirectMemoryError enforces. */
        long directMemory() throws Exception;

        /** Stops the server as a restart does (SIGTERM) and waits for its process to end. */
        void stop() throws Exception;

        /** Starts it again on the same gRPC port; returns once it is ready. */
        void startAgain() throws Exception;

        /**
         * Readies the change that moves every endpoint's port to {@code port}+e (from 19000+e to
         * 20000+e, or back), without the server seeing it yet (the tool's work, outside the
         * fan-out clock).
         */
        default void prepareChange(int services, int endpoints, int port) throws Exception {
        }

        /** Makes the prepared change: the fan-out clock runs from here. */
        void change(int services, int endpoints) throws Exception;

        String changeNote();

        String stats() throws Exception;
    }

    /** MeshPilot from its jar, config from a watched directory. */
    static final class MeshPilotTarget implements Target {
        final Path dir;
        final Path config;
        final String transport;
        final int proxies;
        /** The running process and its ports: a restart replaces them (the gRPC port stays). */
        Process process;
        int grpc;
        int monitoring;

        private MeshPilotTarget(Path dir, String transport, int proxies) {
            this.dir = dir;
            this.config = dir.resolve("config");
            this.transport = transport;
            this.proxies = proxies;
        }

        static MeshPilotTarget start(int services, int endpoints, String transport, int proxies) throws Exception {
            Path dir = Files.createTempDirectory("meshpilot-load");
            Path config = Files.createDirectories(dir.resolve("config"));
            Files.writeString(config.resolve("services.yaml"), config(services, endpoints, 19000));
            MeshPilotTarget t = new MeshPilotTarget(dir, transport, proxies);
            t.launch(0, dir.resolve("server.log"));
            return t;
        }

        private void launch(int grpcPort, Path log) throws Exception {
            Process server = startServer(dir, transport, proxies, grpcPort);
            System.out.println("(MeshPilot's output: " + log + ")");
            try {
                int[] ports = awaitPorts(server, log);
                process = server;
                grpc = ports[1];
                monitoring = ports[2];
            } catch (Exception e) {
                server.destroy();
                throw e;
            }
        }

        @Override
        public long directMemory() throws Exception {
            return sample(get(monitoring, "/metrics"), NettyDirectMemory.GAUGE);
        }

        @Override
        public void stop() throws Exception {
            terminate(process);
        }

        @Override
        public void startAgain() throws Exception {
            launch(grpc, dir.resolve("server-restarted.log"));
        }

        @Override
        public String name() {
            return "meshpilot";
        }

        @Override
        public long pid() {
            return process.pid();
        }

        @Override
        public int grpcPort() {
            return grpc;
        }

        @Override
        public long heapAfterGc() throws Exception {
            return XdsLoad.heapAfterGc(process.pid(), monitoring);
        }

        @Override
        public void prepareChange(int services, int endpoints, int port) throws Exception {
            // the new file's 3,000 documents are generated and written under a hidden name first
            // (the config source skips dot files): that is the tool's work, not the server's
            Files.writeString(config.resolve(".services.tmp"), config(services, endpoints, port));
            Thread.sleep(1000); // the directory watch sees the hidden file too: let that (empty) scan pass
        }

        @Override
        public void change(int services, int endpoints) throws Exception {
            // one file rewrite: every WorkloadEntry's port moves
            Files.move(config.resolve(".services.tmp"), config.resolve("services.yaml"), StandardCopyOption.ATOMIC_MOVE);
        }

        @Override
        public String changeNote() {
            return "from the file rewrite: includes the file watch, parse and the 100 ms PILOT_DEBOUNCE_AFTER";
        }

        @Override
        public String stats() throws Exception {
            String metrics = get(monitoring, "/metrics");
            String pushes = Arrays.stream(metrics.split("\n")).filter(l -> l.startsWith("pilot_xds_pushes{"))
                    .map(l -> l.replaceAll(",?mp_scope=\"[a-z]+\",?", "")).collect(Collectors.joining(", "));
            return grep(metrics, "pilot_xds{") + ", " + grep(metrics, "pilot_total_xds_rejects") + ", " + pushes;
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** {@link JcpServer}: java-control-plane in its own JVM, same flags and heap as MeshPilot's. */
    static final class JcpTarget implements Target {
        final int services;
        final int endpoints;
        final boolean warmUp;
        final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
        /** The running process, its port and its stdin: a restart replaces them (the port stays). */
        Process process;
        int grpc;
        Writer in;

        private JcpTarget(int services, int endpoints, boolean warmUp) {
            this.services = services;
            this.endpoints = endpoints;
            this.warmUp = warmUp;
        }

        static JcpTarget start(int services, int endpoints, boolean warmUp) throws Exception {
            JcpTarget t = new JcpTarget(services, endpoints, warmUp);
            t.launch(0);
            return t;
        }

        private void launch(int port) throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> cmd = new ArrayList<>(SERVER_JVM_FLAGS);
            cmd.addFirst(java);
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), JcpServer.class.getName(),
                    Integer.toString(services), Integer.toString(endpoints), Integer.toString(port)));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            Path log = Files.createTempFile("jcp-load", ".log");
            if (!warmUp) {
                System.out.println("(java-control-plane's output: " + log + ")");
            }
            Writer w = Files.newBufferedWriter(log);
            Pattern ready = Pattern.compile("java-control-plane: grpc=(\\d+) ready");
            String line;
            while ((line = out.readLine()) != null) {
                w.write(line + "\n");
                Matcher m = ready.matcher(line);
                if (m.find()) {
                    w.flush();
                    process = p;
                    grpc = Integer.parseInt(m.group(1));
                    in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
                    Thread.ofPlatform().daemon().start(() -> copy(out, w, l -> {
                        // the answers the tool asks for; `changed` is not waited for (the fan-out clock is)
                        boolean answer = l.startsWith("heap: ") || l.startsWith("direct: ");
                        if (answer) {
                            replies.add(l);
                        }
                        return answer || l.equals("changed");
                    }));
                    return;
                }
            }
            w.close();
            p.destroy();
            throw new IllegalStateException("java-control-plane did not start; see " + log);
        }

        @Override
        public long directMemory() throws Exception {
            return Long.parseLong(ask("direct"));
        }

        @Override
        public void stop() throws Exception {
            terminate(process);
        }

        @Override
        public void startAgain() throws Exception {
            launch(grpc);
        }

        @Override
        public String name() {
            return "java-control-plane";
        }

        @Override
        public long pid() {
            return process.pid();
        }

        @Override
        public int grpcPort() {
            return grpc;
        }

        @Override
        public long heapAfterGc() throws Exception {
            jcmdGc(process.pid());
            return Long.parseLong(ask("heap"));
        }

        /** Sends {@code command} and returns the value of its {@code <command>: <value>} answer. */
        private String ask(String command) throws Exception {
            command(command);
            String reply = replies.poll(60, TimeUnit.SECONDS);
            if (reply == null || !reply.startsWith(command + ": ")) {
                throw new IllegalStateException("java-control-plane did not answer " + command + ": " + reply);
            }
            return reply.substring(command.length() + 2);
        }

        @Override
        public void change(int services, int endpoints) throws Exception {
            command("change");
        }

        @Override
        public String changeNote() {
            return "from the `change` command: a new SimpleCache snapshot";
        }

        @Override
        public String stats() {
            return "";
        }

        private void command(String c) throws IOException {
            in.write(c + "\n");
            in.flush();
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** One Envoy-like proxy on its own ADS stream. */
    static final class SimulatedProxy {
        final int id;
        final ManagedChannel channel;
        final CountDownLatch complete;
        final long t0;
        final int services;
        final int endpoints;
        final AtomicLong bytes = new AtomicLong();
        final AtomicInteger responses = new AtomicInteger();
        final AtomicInteger nacks = new AtomicInteger();
        /** --slowFraction: how long this proxy takes per byte before it reads on (0: as fast as it can). */
        final long readDelayNanosPerByte;
        /** Proxy 0 keeps what it was sent, to compare the servers' resources. */
        final Map<String, Cluster> clusters0 = new ConcurrentHashMap<>();
        final Map<String, ClusterLoadAssignment> assignments = new ConcurrentHashMap<>();
        volatile long completeMs = -1;
        volatile long updatedMs = -1;
        volatile int expectedPort;
        volatile CountDownLatch updated;
        /** During the fan-out: the services whose new assignment this proxy has not yet got. */
        volatile BitSet pending;
        /** Whether this proxy has counted down the fan-out latch (updated, or its stream failed). */
        final AtomicBoolean fanoutCounted = new AtomicBoolean();
        volatile long updateStart;
        volatile Throwable failure;
        /** --storm: while set, the end of this proxy's stream is the restart's doing and counts down this. */
        volatile CountDownLatch restartEnded;
        /** How the restart ended this proxy's stream. */
        volatile Throwable restartEnd;
        /** --storm: counted down once this proxy has its complete config again on its new stream (or that failed). */
        volatile CountDownLatch reconfigured;
        final AtomicBoolean reconfiguredCounted = new AtomicBoolean();
        volatile long reconnectStart;
        volatile long reconfiguredMs = -1;
        /** Which stream is the current one: a stream that is no longer current is not listened to. */
        private int stream;
        private StreamObserver<Outgoing> out;
        private List<String> clusterNames = List.of();
        /** {@link #clusterNames} encoded once: every EDS ACK repeats them. */
        private ByteString encodedNames = ByteString.EMPTY;
        /** The last version ACKed per type, which a NACK repeats and a reconnecting proxy sends. */
        private final Map<String, String> acked = new ConcurrentHashMap<>();

        SimulatedProxy(int id, ManagedChannel channel, CountDownLatch complete, long t0, int services, int endpoints,
                       long readDelayNanosPerByte) {
            this.id = id;
            this.readDelayNanosPerByte = readDelayNanosPerByte;
            this.channel = channel;
            this.complete = complete;
            this.t0 = t0;
            this.services = services;
            this.endpoints = endpoints;
        }

        void start() {
            openStream();
            send(DiscoveryRequest.newBuilder().setTypeUrl(CDS).setNode(node()).build());
        }

        private Node node() {
            return Node.newBuilder().setId("sidecar~10.200." + (id / 250) + "." + (id % 250)
                    + "~load-" + id + ".default~default.svc.cluster.local").build();
        }

        private synchronized void openStream() {
            int current = ++stream;
            out = ClientCalls.asyncBidiStreamingCall(channel.newCall(ADS, CallOptions.DEFAULT), new StreamObserver<Received>() {
                @Override
                public void onNext(Received r) {
                    if (readDelayNanosPerByte > 0) {
                        LockSupport.parkNanos(r.size() * readDelayNanosPerByte);
                    }
                    bytes.addAndGet(r.size());
                    handle(r.response());
                }

                @Override
                public void onError(Throwable t) {
                    if (!current()) {
                        return;
                    }
                    if (restartEnded != null) {
                        endedByRestart(t);
                        return;
                    }
                    failure = t;
                    if (completeMs < 0) {
                        complete.countDown();
                    }
                    // a failed stream is not waited for (there is no reconnect): it counts as failed
                    CountDownLatch u = updated;
                    if (u != null && fanoutCounted.compareAndSet(false, true)) {
                        u.countDown();
                    }
                    CountDownLatch again = reconfigured;
                    if (again != null && reconfiguredCounted.compareAndSet(false, true)) {
                        again.countDown();
                    }
                }

                @Override
                public void onCompleted() {
                    if (current() && restartEnded != null) {
                        endedByRestart(null);
                    }
                }

                private boolean current() {
                    synchronized (SimulatedProxy.this) {
                        return current == stream;
                    }
                }
            });
        }

        /** --storm, before the server stops: the end of the current stream is expected and counts down {@code ended}. */
        void expectRestart(CountDownLatch ended) {
            restartEnded = ended;
            if (failure != null) {
                ended.countDown(); // its stream ended before: nothing left for the restart to end
            }
        }

        private void endedByRestart(Throwable t) {
            CountDownLatch ended = restartEnded;
            restartEnd = t == null ? Status.OK.asRuntimeException() : t;
            if (ended != null) {
                ended.countDown();
            }
        }

        /**
         * --storm, once the new server is ready: a new stream, opened as Envoy's ADS reconnects (its
         * node, then CDS and EDS with the versions it holds, EDS with its clusters' names).
         */
        void reconnect(CountDownLatch configured, long t0) {
            reconfiguredCounted.set(false);
            reconfiguredMs = -1;
            reconfigured = configured;
            reconnectStart = t0;
            restartEnded = null;
            failure = null;
            openStream();
            send(DiscoveryRequest.newBuilder().setTypeUrl(CDS).setVersionInfo(acked.getOrDefault(CDS, ""))
                    .setNode(node()).build());
            if (!clusterNames.isEmpty()) {
                sendWithNames(DiscoveryRequest.newBuilder().setTypeUrl(EDS).setVersionInfo(acked.getOrDefault(EDS, ""))
                        .build());
            }
        }

        synchronized void send(DiscoveryRequest r) {
            out.onNext(new Outgoing(r, ByteString.EMPTY));
        }

        /** {@code r} with the EDS subscription's names after its own fields. */
        synchronized void sendWithNames(DiscoveryRequest r) {
            out.onNext(new Outgoing(r, encodedNames));
        }

        /**
         * From now on, counts the proxy as updated once it holds, for every service, an
         * assignment with all its endpoints on ports from {@code port} (over one response or
         * several: a server may push a partial or intermediate EDS first).
         */
        void expectPort(int port, CountDownLatch latch) {
            // set up before a change is made, while this proxy's EDS is idle: the previous change has
            // landed. The new latch first, so that a stream failing meanwhile counts it down
            updated = latch;
            expectedPort = port;
            BitSet all = new BitSet(services);
            all.set(0, services);
            pending = all;
            updatedMs = -1; // the clock (updateStart) is set when the change is made
            fanoutCounted.set(false);
            if (failure != null && fanoutCounted.compareAndSet(false, true)) {
                latch.countDown();
            }
        }

        /** Whether an assignment has all its endpoints, each on a port from the expected one. */
        private boolean moved(Ports p) {
            return p.count == endpoints && p.min == expectedPort && p.max == expectedPort + endpoints - 1;
        }

        private void handle(DiscoveryResponse r) {
            responses.incrementAndGet();
            try {
                if (r.getTypeUrl().equals(CDS)) {
                    List<String> names = new ArrayList<>();
                    for (var a : r.getResourcesList()) {
                        if (id == 0) {
                            Cluster c = a.unpack(Cluster.class);
                            clusters0.put(c.getName(), c);
                        }
                        if (edsCluster(a.getValue())) { // as Envoy: EDS only for EDS clusters
                            names.add(name(a.getValue()));
                        }
                    }
                    send(ack(r));
                    if (!names.equals(clusterNames)) {
                        clusterNames = names;
                        encodedNames = DiscoveryRequest.newBuilder().addAllResourceNames(names).build().toByteString();
                        sendWithNames(DiscoveryRequest.newBuilder().setTypeUrl(EDS).build());
                    }
                } else if (r.getTypeUrl().equals(EDS)) {
                    BitSet waiting = pending;
                    boolean fanningOut = waiting != null && updatedMs < 0;
                    if (id == 0) {
                        for (var a : r.getResourcesList()) {
                            ClusterLoadAssignment cla = a.unpack(ClusterLoadAssignment.class);
                            assignments.put(cla.getClusterName(), cla);
                        }
                    }
                    if (fanningOut) {
                        // read without building every assignment: the tool's own CPU is kept for the servers
                        for (var a : r.getResourcesList()) {
                            Ports p = Ports.of(a.getValue());
                            if (p.service >= 0 && moved(p)) {
                                waiting.clear(p.service);
                            }
                        }
                    }
                    sendWithNames(ack(r));
                    if (completeMs < 0 && r.getResourcesCount() >= services) {
                        completeMs = (System.nanoTime() - t0) / 1_000_000;
                        complete.countDown();
                    }
                    CountDownLatch again = reconfigured;
                    if (again != null && r.getResourcesCount() >= services
                            && reconfiguredCounted.compareAndSet(false, true)) {
                        reconfiguredMs = (System.nanoTime() - reconnectStart) / 1_000_000;
                        again.countDown();
                    }
                    if (fanningOut && waiting.isEmpty() && fanoutCounted.compareAndSet(false, true)) {
                        updatedMs = (System.nanoTime() - updateStart) / 1_000_000;
                        updated.countDown();
                    }
                }
            } catch (IOException e) {
                // what Envoy does with a resource it cannot read: NACK (the previous version, an error)
                nacks.incrementAndGet();
                send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
                        .setVersionInfo(acked.getOrDefault(r.getTypeUrl(), "")).setResponseNonce(r.getNonce())
                        .addAllResourceNames(r.getTypeUrl().equals(EDS) ? clusterNames : List.of())
                        .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(3).setMessage(String.valueOf(e.getMessage())))
                        .build());
            }
        }

        /** An ACK's own fields; an EDS ACK is sent with the subscription's names after them. */
        private DiscoveryRequest ack(DiscoveryResponse r) {
            acked.put(r.getTypeUrl(), r.getVersionInfo());
            return DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
                    .setResponseNonce(r.getNonce()).build();
        }
    }

    /**
     * A request as the tool sends it: its fields, and resource names already encoded, written
     * between them (encoded messages one after another read as one message with them merged).
     */
    record Outgoing(DiscoveryRequest fields, ByteString encodedNames) {
    }

    /** A response as the tool received it, with its size as received (decompressed, before gRPC framing). */
    record Received(DiscoveryResponse response, int size) {
    }

    /**
     * Each gRPC executor thread reads responses into one array it keeps: a response's resources
     * alias it only until the proxy's {@code onNext} returns (gRPC parses a message and hands it
     * over on the same thread, one at a time; what a proxy keeps, it copies out). A fresh array
     * per response had the tool allocate, zero and collect the whole fan-out (760 MB per change),
     * and touching heap it had not used before cost it up to 1.5 s of CPU in some windows.
     */
    private static final ThreadLocal<byte[]> RECEIVE_BUFFER = ThreadLocal.withInitial(() -> new byte[1 << 20]);

    /**
     * ADS as the simulated proxies call it. Requests carry names encoded once per subscription
     * (an EDS ACK repeats all 1,000). Responses are read into one array that their
     * resources alias instead of each being copied out again (protobuf's default), and their
     * size is taken as received instead of computed from the parsed message: the tool's CPU
     * shares the 2 cores with the server it measures, so it spends as little as it can.
     */
    static final MethodDescriptor<Outgoing, Received> ADS = AggregatedDiscoveryServiceGrpc
            .getStreamAggregatedResourcesMethod()
            .toBuilder(new MethodDescriptor.Marshaller<Outgoing>() {
                @Override
                public InputStream stream(Outgoing r) {
                    // in field order, as protobuf encoders (Envoy's too) write it: version_info and node, the
                    // names, then type_url, response_nonce and error_detail
                    DiscoveryRequest f = r.fields();
                    DiscoveryRequest head = f.toBuilder().clearTypeUrl().clearResponseNonce().clearErrorDetail().build();
                    DiscoveryRequest tail = DiscoveryRequest.newBuilder().setTypeUrl(f.getTypeUrl())
                            .setResponseNonce(f.getResponseNonce()).build();
                    if (f.hasErrorDetail()) {
                        tail = tail.toBuilder().setErrorDetail(f.getErrorDetail()).build();
                    }
                    return head.toByteString().concat(r.encodedNames()).concat(tail.toByteString()).newInput();
                }

                @Override
                public Outgoing parse(InputStream in) {
                    throw new UnsupportedOperationException("the tool only sends requests");
                }
            }, new MethodDescriptor.Marshaller<Received>() {
                @Override
                public InputStream stream(Received r) {
                    return r.response().toByteString().newInput();
                }

                @Override
                public Received parse(InputStream in) {
                    try {
                        // gRPC's message stream knows its length (a decompressing one is read to its end)
                        byte[] b;
                        int length;
                        if (in instanceof KnownLength) {
                            length = in.available();
                            b = RECEIVE_BUFFER.get();
                            if (b.length < length) {
                                b = new byte[Math.max(length, b.length * 2)];
                                RECEIVE_BUFFER.set(b);
                            }
                            if (in.readNBytes(b, 0, length) < length) {
                                throw new EOFException("response shorter than its length");
                            }
                        } else {
                            b = in.readAllBytes();
                            length = b.length;
                        }
                        CodedInputStream c = UnsafeByteOperations.unsafeWrap(b, 0, length).newCodedInput();
                        c.enableAliasing(true);
                        return new Received(DiscoveryResponse.parseFrom(c), length);
                    } catch (IOException e) {
                        throw io.grpc.Status.INTERNAL.withDescription("unreadable DiscoveryResponse: " + e.getMessage())
                                .withCause(e).asRuntimeException();
                    }
                }
            })
            .build();

    /** Whether a serialized Cluster's {@code type} (field 2) is EDS (3), read without building it. */
    static boolean edsCluster(ByteString cluster) throws IOException {
        CodedInputStream in = cluster.newCodedInput();
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (WireFormat.getTagFieldNumber(tag) == 2 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT) {
                return in.readEnum() == Cluster.DiscoveryType.EDS_VALUE;
            }
            in.skipField(tag);
        }
        return false; // STATIC, the default, is not sent
    }

    /** The name (field 1) of a serialized Cluster, read without building it. */
    static String name(ByteString cluster) throws IOException {
        CodedInputStream in = cluster.newCodedInput();
        int tag;
        while ((tag = in.readTag()) != 0) {
            if (WireFormat.getTagFieldNumber(tag) == 1 && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                return in.readStringRequireUtf8();
            }
            in.skipField(tag);
        }
        return "";
    }

    /**
     * What the fan-out check needs from a serialized ClusterLoadAssignment, read over its bytes
     * without building it or any String: the service of its cluster name (field 1) and the
     * ports at endpoints(2).lb_endpoints(2).endpoint(1).address(1).socket_address(1).port_value(3).
     * Each simulated proxy reads all 1,000 assignments of every EDS response in a fan-out, on
     * the cores the measured server runs on, so this is the tool's hottest loop.
     */
    static final class Ports {
        private static final int[] PORT_PATH = {2, 2, 1, 1, 1, 3};
        private final ByteBuffer in;
        private int pos;
        int service = -1;
        int count;
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;

        private Ports(ByteBuffer in) {
            this.in = in;
        }

        static Ports of(ByteString cla) throws IOException {
            Ports p = new Ports(cla.asReadOnlyByteBuffer());
            p.pos = p.in.position();
            p.walk(p.in.limit(), 0);
            return p;
        }

        private void walk(int end, int depth) throws IOException {
            while (pos < end) {
                int tag = (int) varint(end);
                int field = tag >>> 3;
                int wireType = tag & 7;
                if (field == 0) {
                    throw new IOException("invalid tag (field 0) at byte " + pos);
                }
                if (wireType == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
                    int length = (int) varint(end);
                    int next = pos + length;
                    if (length < 0 || length > end - pos) {
                        throw new IOException("length " + length + " runs past its message at byte " + pos);
                    }
                    if (depth == 0 && field == 1) {
                        service = serviceIndex(in, pos, next);
                    } else if (depth < PORT_PATH.length - 1 && field == PORT_PATH[depth]) {
                        walk(next, depth + 1);
                    }
                    pos = next;
                } else if (wireType == WireFormat.WIRETYPE_VARINT) {
                    long value = varint(end);
                    if (depth == PORT_PATH.length - 1 && field == PORT_PATH[depth]) {
                        count++;
                        min = Math.min(min, (int) value);
                        max = Math.max(max, (int) value);
                    }
                } else if (wireType == WireFormat.WIRETYPE_FIXED32 || wireType == WireFormat.WIRETYPE_FIXED64) {
                    pos += wireType == WireFormat.WIRETYPE_FIXED32 ? 4 : 8;
                    if (pos > end) {
                        throw new IOException("fixed-size field " + field + " runs past its message");
                    }
                } else {
                    throw new IOException("unexpected wire type " + wireType + " of field " + field);
                }
            }
        }

        private long varint(int end) throws IOException {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (pos >= end) {
                    throw new IOException("truncated varint at byte " + pos);
                }
                byte b = in.get(pos++);
                value |= (long) (b & 0x7f) << shift;
                if (b >= 0) {
                    return value;
                }
            }
            throw new IOException("malformed varint at byte " + pos);
        }
    }

    /** The service of a cluster {@code outbound|8080||svc-<i>.default.svc.cluster.local}, or -1. */
    static int serviceIndex(String cluster) {
        byte[] b = cluster.getBytes(StandardCharsets.UTF_8);
        return serviceIndex(ByteBuffer.wrap(b), 0, b.length);
    }

    private static final byte[] SERVICE_MARK = "||svc-".getBytes(StandardCharsets.US_ASCII);

    /** {@link #serviceIndex(String)} over the name's UTF-8 bytes in {@code [from, to)}. */
    static int serviceIndex(ByteBuffer b, int from, int to) {
        search:
        for (int i = from; i + SERVICE_MARK.length <= to; i++) {
            for (int k = 0; k < SERVICE_MARK.length; k++) {
                if (b.get(i + k) != SERVICE_MARK[k]) {
                    continue search;
                }
            }
            int value = 0;
            int digits = 0;
            for (int j = i + SERVICE_MARK.length; j < to; j++) {
                byte c = b.get(j);
                if (c == '.') {
                    return digits > 0 ? value : -1;
                }
                if (c < '0' || c > '9' || ++digits > 9) {
                    return -1;
                }
                value = value * 10 + (c - '0');
            }
            return -1;
        }
        return -1;
    }

    static String config(int services, int endpoints, int basePort) {
        StringBuilder y = new StringBuilder();
        for (int s = 0; s < services; s++) {
            y.append("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: svc-").append(s)
                    .append(", namespace: default}\nspec:\n  hosts: [svc-").append(s)
                    .append(".default.svc.cluster.local]\n  location: MESH_INTERNAL\n  resolution: STATIC\n")
                    .append("  ports: [{number: 8080, name: http, protocol: HTTP}]\n")
                    .append("  workloadSelector: {labels: {app: svc-").append(s).append("}}\n---\n");
            for (int e = 0; e < endpoints; e++) {
                y.append("apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: svc-").append(s)
                        .append("-").append(e).append(", namespace: default}\nspec: {address: 10.").append(s / 250)
                        .append(".").append(s % 250).append(".").append(e + 1).append(", ports: {http: ")
                        .append(basePort + e).append("}, labels: {app: svc-").append(s).append("}}\n---\n");
            }
        }
        return y.toString();
    }

    /** Both servers' JVM flags: the same heap for MeshPilot and java-control-plane. */
    static final List<String> SERVER_JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED", "-Xmx2g");

    static Process startServer(Path dir, String transport, int proxies, int grpcPort) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        String home = System.getProperty("meshpilot.home", ".");
        List<String> cmd = new ArrayList<>(SERVER_JVM_FLAGS);
        cmd.addFirst(java);
        cmd.addAll(List.of("-Dmeshpilot.home=" + home, "-jar", Path.of(home, "target/meshpilot.jar").toString(), "discovery",
                "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:" + grpcPort, "--secureGRPCAddr", "127.0.0.1:0",
                "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0", "--grpcTransport", transport,
                "--configDir", dir.resolve("config").toString(), "--meshConfig", dir.resolve("mesh").toString(),
                "--caStateDir", dir.resolve("ca").toString(), "--configStateDir", dir.resolve("state").toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        // a load test measures serving, not admission: let every simulated proxy in at once
        pb.environment().put("PILOT_MAX_REQUESTS_PER_SECOND", Integer.toString(Math.max(100, proxies * 2)));
        return pb.start();
    }

    /** Waits for MeshPilot's ports and readiness; its output goes on to {@code log}. */
    static int[] awaitPorts(Process p, Path log) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Writer w = Files.newBufferedWriter(log);
        Pattern servers = Pattern.compile("http=(\\d+) grpc=(\\d+) grpc-secure=\\d+ monitoring=(\\d+)");
        String line;
        int[] ports = null;
        while ((line = r.readLine()) != null) {
            w.write(line + "\n");
            Matcher m = servers.matcher(line);
            if (m.find()) {
                ports = new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
            }
            if (line.contains("\tready: started in ") && ports != null) {
                w.flush();
                Thread.ofPlatform().daemon().start(() -> copy(r, w, l -> false));
                return ports;
            }
        }
        w.close();
        throw new IllegalStateException("the server did not start; see " + log);
    }

    /** Copies a server's output lines to its log, flushed, until it ends; {@code taken} lines are not. */
    static void copy(BufferedReader from, Writer to, Predicate<String> taken) {
        try (to) {
            String l;
            while ((l = from.readLine()) != null) {
                if (!taken.test(l)) {
                    to.write(l + "\n");
                    to.flush();
                }
            }
        } catch (IOException e) {
            // the server was stopped: its output is closed
        }
    }

    /** SIGTERM, as a restart sends, and waits for the process to end; killed if it has not within a minute. */
    static void terminate(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    static long heapAfterGc(long pid, int monitoring) throws Exception {
        jcmdGc(pid);
        return sample(get(monitoring, "/metrics"), "memory_usedHeap_bytes");
    }

    /**
     * The value of the first series of {@code name} in Prometheus text (with labels or without;
     * Prometheus writes large values as {@code 1.2345E8}).
     */
    static long sample(String metrics, String name) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new IllegalStateException("the server does not export " + name);
    }

    static void jcmdGc(long pid) throws Exception {
        jcmd(pid, "GC.run");
    }

    static void jcmd(long pid, String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid)));
        cmd.addAll(List.of(command));
        new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(60, TimeUnit.SECONDS);
    }

    static String get(int port, String path) throws Exception {
        try (HttpClient c = HttpClient.newHttpClient()) {
            return c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        }
    }

    static String grep(String text, String prefix) {
        return Arrays.stream(text.split("\n")).filter(l -> l.startsWith(prefix)).findFirst().orElse(prefix + " (absent)");
    }

    static long pct(long[] sorted, int p) {
        if (sorted.length == 0) {
            return -1;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    static int intArg(String[] a, String name, int dflt) {
        String v = strArg(a, name, null);
        return v == null ? dflt : Integer.parseInt(v);
    }

    static String strArg(String[] a, String name, String dflt) {
        for (int i = 0; i < a.length - 1; i++) {
            if (a[i].equals(name)) {
                return a[i + 1];
            }
        }
        return dflt;
    }
}
