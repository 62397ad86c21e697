package io.meshpilot.load;

import com.google.protobuf.ByteString;
import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.DecompressorRegistry;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * {@code bin/load --kubernetes}: MeshPilot in Kubernetes mode under load. The API server
 * stand-in ({@link KubeLoadCluster}, its own process) holds S Services with an EndpointSlice of
 * E endpoints each, their Pods and a hundred Nodes; MeshPilot starts as its own process with
 * {@code --registries Kubernetes --kubeconfig} and reads them through its informers. Measured:
 * time from the server's start to ready and its heap after a GC; then N simulated sidecars (ADS
 * over a connection each, as {@link XdsLoad}'s proxies: its ADS marshalling and byte-level
 * assignment reads) each watch the EDS of W services; then EndpointSlices change through the
 * API server (merge patches over HTTP) at a fixed rate for a while, and for every change the
 * time from the API write until every proxy watching that service has ACKed an EDS response
 * carrying it (p50, p99, max), with the CPU seconds of the server, the stand-in and the tool
 * over the churn window.
 *
 * <p>Change k moves every endpoint of one service's slice ({@link Options#stride}) to port 20000+k: a proxy
 * holding port 20000+k (or a later change's) for that service has it, whatever pushes carried it
 * (a debounced push may merge several changes).
 */
public final class KubeLoad {
    static final int MARKER_BASE = 20000;

    private KubeLoad() {
    }

    /** What to run: the sizes, and the churn's rate (changes per second) and duration (seconds). */
    record Options(int services, int endpoints, int proxies, int watch, int rate, int duration, boolean edsDebounce) {
        static Options parse(String[] argv) {
            int services = XdsLoad.intArg(argv, "--services", 5000);
            Options o = new Options(services, XdsLoad.intArg(argv, "--endpoints", 10), XdsLoad.intArg(argv, "--proxies", 1000),
                    Math.min(services, XdsLoad.intArg(argv, "--watch", 500)), XdsLoad.intArg(argv, "--rate", 50),
                    XdsLoad.intArg(argv, "--duration", 60), !"false".equals(XdsLoad.strArg(argv, "--edsDebounce", "true")));
            if ((long) o.proxies * o.watch < o.services) {
                throw new IllegalArgumentException("--proxies x --watch (" + o.proxies + " x " + o.watch
                        + ") must cover every service (" + o.services + "): a change nobody watches measures nothing");
            }
            if (o.changes() > 65535 - MARKER_BASE) {
                throw new IllegalArgumentException("--rate x --duration: at most " + (65535 - MARKER_BASE)
                        + " changes (each moves a slice to its own port)");
            }
            return o;
        }

        int changes() {
            return rate * duration;
        }

        /**
         * Change k is made to service k x stride mod S: a stride coprime to S near S/phi, so that a
         * run with fewer changes than services still touches them all over, not the first blocks only.
         */
        int stride() {
            int step = Math.max(1, (int) (services * 0.618));
            while (BigInteger.valueOf(step).gcd(BigInteger.valueOf(services)).intValue() != 1) {
                step++;
            }
            return step;
        }

        /** The j-th service proxy p watches: consecutive blocks, so every service has about N*W/S watchers. */
        int watched(int p, int j) {
            return (int) (((long) p * watch + j) % services);
        }
    }

    /** What a run measured; latencies in ms, sorted. */
    record Result(long readyMs, long heapReady, long heapConnected, long completeMs, int changes, int changesSeen,
                  long expectedAcks, long acks, long[] latencies, long[] writeLatencies, long[] watchLatencies, long writeErrors,
                  double serverCpu, double clusterCpu, long failedStreams, long nacks) {
        boolean ok() {
            return changesSeen == changes && acks == expectedAcks && writeErrors == 0 && failedStreams == 0 && nacks == 0;
        }
    }

    public static void main(String[] argv) throws Exception {
        Options o;
        try {
            o = Options.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("load --kubernetes: " + e.getMessage());
            System.exit(2);
            return;
        }
        Result r = run(o, Files.createTempDirectory("meshpilot-kube-load"), System.out);
        System.exit(r.ok() ? 0 : 1);
    }

    /** Runs it with the stand-in's and the server's files (kubeconfig, logs, CA) in {@code dir}. */
    static Result run(Options o, Path dir, PrintStream out) throws Exception {
        out.printf("load --kubernetes: %d services x %d endpoints (EndpointSlices, Pods, %d Nodes); %d proxies each watching "
                        + "%d services' EDS; churn %d changes/s for %d s; PILOT_ENABLE_EDS_DEBOUNCE=%s%n", o.services(), o.endpoints(),
                KubeLoadCluster.NODES, o.proxies(), o.watch(), o.rate(), o.duration(), o.edsDebounce());
        try (Cluster cluster = Cluster.start(o, dir, out); Server server = Server.start(cluster, dir, o, out)) {
            return measure(o, cluster, server, out);
        }
    }

    private static Result measure(Options o, Cluster cluster, Server server, PrintStream out) throws Exception {
        out.printf("ready (/ready answers 200): %d ms from the server's process start, %d objects listed through the "
                        + "informers and converted (its log's \"ready: started\" came at %d ms)%n", server.readyMs,
                KubeLoadCluster.NODES + o.services() * (2L + o.endpoints()), server.startedMs);
        long heapReady = server.heapAfterGc();
        out.printf("server heap after GC, ready: %.1f MB%n", heapReady / 1048576.0);

        Changes changes = new Changes(o);
        CountDownLatch complete = new CountDownLatch(o.proxies());
        List<ManagedChannel> channels = new ArrayList<>();
        List<Sidecar> sidecars = new ArrayList<>();
        XdsLoad.Cpu cpu = new XdsLoad.Cpu(server.process.pid());
        long t0 = System.nanoTime();
        try {
            for (int p = 0; p < o.proxies(); p++) {
                ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.grpc).usePlaintext()
                        .maxInboundMessageSize(64 * 1024 * 1024)
                        .decompressorRegistry(DecompressorRegistry.emptyInstance().with(Codec.Identity.NONE, true))
                        .build();
                channels.add(ch);
                Sidecar s = new Sidecar(p, o, ch, changes, complete);
                sidecars.add(s);
                s.start();
            }
            boolean all = complete.await(10, TimeUnit.MINUTES);
            long completeMs = (System.nanoTime() - t0) / 1_000_000;
            out.printf("EDS complete: %d/%d proxies hold all %d endpoints of their %d services in %d ms%s%n",
                    o.proxies() - complete.getCount(), o.proxies(), o.endpoints(), o.watch(), completeMs,
                    all ? "" : " (gave up waiting)");
            out.println("  " + cpu.phase());
            long heapConnected = server.heapAfterGc();
            out.printf("server heap after GC, %d proxies connected: %.1f MB%n", o.proxies(), heapConnected / 1048576.0);

            // the churn: fixed-rate merge patches, each timed from just before it is sent
            System.gc();
            cpu.phase();
            long clusterCpu0 = XdsLoad.Cpu.cpuNanos(cluster.process.toHandle());
            long responses0 = sidecars.stream().mapToLong(s -> s.responses.get()).sum();
            long bytes0 = sidecars.stream().mapToLong(s -> s.bytes.get()).sum();
            SliceWatch watch = SliceWatch.start(cluster.port, o.changes());
            Writes writes = new Writes(cluster.port, o.changes());
            long start = System.nanoTime();
            long interval = 1_000_000_000L / o.rate();
            for (int k = 0; k < o.changes(); k++) {
                long due = start + k * interval;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                int service = changes.serviceOf[k];
                changes.written[k] = System.nanoTime();
                writes.patch(k, service, MARKER_BASE + k);
            }
            long lastWrite = System.nanoTime();
            boolean seen = changes.allSeen.await(60, TimeUnit.SECONDS);
            long drainMs = (System.nanoTime() - lastWrite) / 1_000_000;
            writes.await();
            String cpuLine = cpu.phase();
            double clusterCpu = (XdsLoad.Cpu.cpuNanos(cluster.process.toHandle()) - clusterCpu0) / 1e9;
            long responses = sidecars.stream().mapToLong(s -> s.responses.get()).sum() - responses0;
            long bytes = sidecars.stream().mapToLong(s -> s.bytes.get()).sum() - bytes0;
            long[] watchLatencies = watch.latencies(changes.written);
            watch.close();
            long[] latencies = changes.latencies();
            long[] writeLatencies = writes.latencies();
            long failed = sidecars.stream().filter(s -> s.failure != null).count();
            long nacks = sidecars.stream().mapToLong(s -> s.nacks.get()).sum();
            out.printf("churn: %d changes in %.1f s; %d/%d seen by every watching proxy%s (%d/%d ACKs), the last %d ms "
                            + "after the last write%n", o.changes(), (lastWrite - start) / 1e9, latencies.length, o.changes(),
                    seen ? "" : " (gave up after 60 s)", changes.acks.get(), changes.expectedAcks, drainMs);
            out.printf("  API write to every watching proxy's ACK: p50 %d ms, p99 %d ms, max %d ms (%d watchers per change "
                            + "on average)%n", XdsLoad.pct(latencies, 50), XdsLoad.pct(latencies, 99),
                    XdsLoad.pct(latencies, 100), changes.expectedAcks / Math.max(1, o.changes()));
            out.printf("  the stand-in's answer to the patch: p50 %d ms, p99 %d ms, max %d ms; %d failed writes%n",
                    XdsLoad.pct(writeLatencies, 50), XdsLoad.pct(writeLatencies, 99), XdsLoad.pct(writeLatencies, 100),
                    writes.errors.get());
            out.printf("  API write to the stand-in's watch event at another watcher (the tool's): p50 %d ms, p99 %d ms, "
                            + "max %d ms (%d/%d events)%n", XdsLoad.pct(watchLatencies, 50), XdsLoad.pct(watchLatencies, 99),
                    XdsLoad.pct(watchLatencies, 100), watchLatencies.length, o.changes());
            out.printf("  %s; API server stand-in %.1f s%n", cpuLine, clusterCpu);
            out.printf("  server CPU per change %.1f ms; %d EDS responses to the proxies (%.1f per change), %.1f MB%n",
                    cpu.lastServerSeconds * 1000 / o.changes(), responses, (double) responses / o.changes(),
                    bytes / 1048576.0);
            out.println("  server: " + server.pushes());
            out.printf("failed streams %d, NACKs %d%n", failed, nacks);
            sidecars.stream().filter(s -> s.failure != null).limit(3).forEach(s -> out.println("  failure: " + s.failure));
            return new Result(server.readyMs, heapReady, heapConnected, completeMs, o.changes(), latencies.length,
                    changes.expectedAcks, changes.acks.get(), latencies, writeLatencies, watchLatencies, writes.errors.get(),
                    cpu.lastServerSeconds, clusterCpu, failed, nacks);
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    /**
     * Per change: when it was written, how many watching proxies have yet to ACK it, and when
     * the last did. A proxy that moves from port m1 to m2 for a service has every change of that
     * service with a marker in (m1, m2].
     */
    static final class Changes {
        final Options o;
        final long[] written;
        final long[] done;
        final AtomicIntegerArray remaining;
        final CountDownLatch allSeen;
        final AtomicLong acks = new AtomicLong();
        final long expectedAcks;
        /** Per change, its service; per service, the changes made to it, in order. */
        final int[] serviceOf;
        final int[][] changesOf;

        Changes(Options o) {
            this.o = o;
            int[] watchers = new int[o.services()];
            for (int p = 0; p < o.proxies(); p++) {
                for (int j = 0; j < o.watch(); j++) {
                    watchers[o.watched(p, j)]++;
                }
            }
            written = new long[o.changes()];
            done = new long[o.changes()];
            remaining = new AtomicIntegerArray(o.changes());
            long expected = 0;
            List<List<Integer>> of = new ArrayList<>();
            for (int s = 0; s < o.services(); s++) {
                of.add(new ArrayList<>());
            }
            serviceOf = new int[o.changes()];
            int stride = o.stride();
            for (int k = 0; k < o.changes(); k++) {
                int s = (int) ((long) k * stride % o.services());
                serviceOf[k] = s;
                remaining.set(k, watchers[s]);
                expected += watchers[s];
                of.get(s).add(k);
            }
            changesOf = of.stream().map(l -> l.stream().mapToInt(Integer::intValue).toArray()).toArray(int[][]::new);
            expectedAcks = expected;
            allSeen = new CountDownLatch(o.changes());
        }

        /** One proxy about to ACK {@code service} on port {@code to}, having held {@code from}. */
        void seen(int service, int from, int to, long now) {
            for (int k : changesOf[service]) {
                int marker = MARKER_BASE + k;
                if (marker > from && marker <= to) {
                    acks.incrementAndGet();
                    if (remaining.decrementAndGet(k) == 0) {
                        done[k] = now;
                        allSeen.countDown();
                    }
                }
            }
        }

        long[] latencies() {
            return IntStream.range(0, written.length).filter(k -> remaining.get(k) == 0)
                    .mapToLong(k -> (done[k] - written[k]) / 1_000_000).sorted().toArray();
        }
    }

    /** A sidecar on its own connection and ADS stream, subscribed to the EDS of its services (no CDS: only EDS churns). */
    static final class Sidecar {
        final int id;
        final Options o;
        final ManagedChannel channel;
        final Changes changes;
        final CountDownLatch complete;
        /** Per service: the endpoint port this proxy holds (0: none yet); written by the stream's thread only. */
        final int[] port;
        final AtomicInteger responses = new AtomicInteger();
        final AtomicLong bytes = new AtomicLong();
        final AtomicInteger nacks = new AtomicInteger();
        int pendingInitial;
        volatile Throwable failure;
        private StreamObserver<XdsLoad.Outgoing> out;
        private ByteString names = ByteString.EMPTY;

        Sidecar(int id, Options o, ManagedChannel channel, Changes changes, CountDownLatch complete) {
            this.id = id;
            this.o = o;
            this.channel = channel;
            this.changes = changes;
            this.complete = complete;
            this.port = new int[o.services()];
            Arrays.fill(port, -1);
        }

        void start() {
            List<String> clusters = new ArrayList<>();
            for (int j = 0; j < o.watch(); j++) {
                int s = o.watched(id, j);
                if (port[s] < 0) {
                    port[s] = 0;
                    clusters.add("outbound|8080||svc-" + s + ".default.svc.cluster.local");
                }
            }
            pendingInitial = clusters.size();
            names = DiscoveryRequest.newBuilder().addAllResourceNames(clusters).build().toByteString();
            out = ClientCalls.asyncBidiStreamingCall(channel.newCall(XdsLoad.ADS, CallOptions.DEFAULT), new StreamObserver<>() {
                @Override
                public void onNext(XdsLoad.Received r) {
                    bytes.addAndGet(r.size());
                    handle(r.response());
                }

                @Override
                public void onError(Throwable t) {
                    failure = t;
                    if (pendingInitial > 0) {
                        pendingInitial = 0;
                        complete.countDown();
                    }
                }

                @Override
                public void onCompleted() {
                }
            });
            send(DiscoveryRequest.newBuilder().setTypeUrl(XdsLoad.EDS)
                    .setNode(Node.newBuilder().setId("sidecar~10.200." + (id / 250) + "." + (id % 250)
                            + "~load-" + id + ".default~default.svc.cluster.local")).build());
        }

        private synchronized void send(DiscoveryRequest r) {
            out.onNext(new XdsLoad.Outgoing(r, names));
        }

        private void handle(DiscoveryResponse r) {
            responses.incrementAndGet();
            long now = System.nanoTime();
            try {
                for (var a : r.getResourcesList()) {
                    XdsLoad.Ports p = XdsLoad.Ports.of(a.getValue());
                    // a slice's endpoints share its port: all E on one port is a state the tool wrote
                    if (p.service < 0 || port[p.service] < 0 || p.count != o.endpoints() || p.min != p.max) {
                        continue;
                    }
                    int held = port[p.service];
                    if (held == 0 && --pendingInitial == 0) {
                        complete.countDown();
                    }
                    if (p.min > held) {
                        if (held >= MARKER_BASE || p.min >= MARKER_BASE) {
                            changes.seen(p.service, held, p.min, now);
                        }
                        port[p.service] = p.min;
                    }
                }
                send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
                        .setResponseNonce(r.getNonce()).build());
            } catch (IOException e) {
                nacks.incrementAndGet();
                send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setResponseNonce(r.getNonce())
                        .setErrorDetail(Status.newBuilder().setCode(3).setMessage(String.valueOf(e.getMessage())))
                        .build());
            }
        }
    }

    /**
     * The stand-in's own share of the latency: a watch of every EndpointSlice, as an informer
     * has, in the tool, noting when each change's event arrives (its port names the change).
     */
    static final class SliceWatch implements AutoCloseable {
        private static final Pattern PORT = Pattern.compile("\"port\"\\s*:\\s*(\\d+)");
        private static final Pattern RESOURCE_VERSION = Pattern.compile("\"resourceVersion\"\\s*:\\s*\"(\\d+)\"");
        final AtomicLongArray received;
        final HttpClient http;

        private SliceWatch(AtomicLongArray received, HttpClient http) {
            this.received = received;
            this.http = http;
        }

        /** Watches from the current resourceVersion: only what the churn writes arrives. */
        static SliceWatch start(int port, int changes) throws Exception {
            String base = "http://127.0.0.1:" + port + "/apis/discovery.k8s.io/v1/endpointslices";
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String list = http.send(HttpRequest.newBuilder(URI.create(base + "?limit=1")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher rv = RESOURCE_VERSION.matcher(list);
            if (!rv.find()) {
                throw new IllegalStateException("no resourceVersion in the stand-in's list: " + list);
            }
            AtomicLongArray received = new AtomicLongArray(changes);
            http.sendAsync(HttpRequest.newBuilder(URI.create(base + "?watch=true&resourceVersion=" + rv.group(1))).build(),
                    HttpResponse.BodyHandlers.ofLines()).thenAccept(r -> r.body().forEach(line -> {
                        long now = System.nanoTime();
                        Matcher m = PORT.matcher(line);
                        if (m.find()) {
                            int k = Integer.parseInt(m.group(1)) - MARKER_BASE;
                            if (k >= 0 && k < changes) {
                                received.set(k, now);
                            }
                        }
                    }));
            return new SliceWatch(received, http);
        }

        long[] latencies(long[] written) {
            return IntStream.range(0, written.length).filter(k -> received.get(k) != 0)
                    .mapToLong(k -> (received.get(k) - written[k]) / 1_000_000).sorted().toArray();
        }

        @Override
        public void close() {
            http.shutdownNow();
        }
    }

    /** The churn's writes: merge patches of EndpointSlices over HTTP, sent without waiting for each other. */
    static final class Writes {
        final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        final int port;
        final long[] latency;
        final AtomicLong errors = new AtomicLong();
        final CountDownLatch answered;

        Writes(int port, int count) {
            this.port = port;
            this.latency = new long[count];
            this.answered = new CountDownLatch(count);
        }

        void patch(int k, int service, int slicePort) {
            long t = System.nanoTime();
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                            + "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/svc-" + service))
                    .header("Content-Type", "application/merge-patch+json")
                    .method("PATCH", HttpRequest.BodyPublishers.ofString(KubeLoadCluster.slicePatch(slicePort))).build();
            http.sendAsync(req, HttpResponse.BodyHandlers.discarding()).whenComplete((resp, err) -> {
                latency[k] = (System.nanoTime() - t) / 1_000_000;
                if (err != null || resp.statusCode() != 200) {
                    errors.incrementAndGet();
                }
                answered.countDown();
            });
        }

        /** Waits for the answers still out, then lets the client's connections go. */
        void await() throws InterruptedException {
            answered.await(60, TimeUnit.SECONDS);
            http.shutdownNow();
        }

        long[] latencies() {
            return Arrays.stream(latency).sorted().toArray();
        }
    }

    /** The API server stand-in's process ({@link KubeLoadCluster}). */
    static final class Cluster implements AutoCloseable {
        final Process process;
        final int port;
        final Path kubeconfig;

        private Cluster(Process process, int port, Path kubeconfig) {
            this.process = process;
            this.port = port;
            this.kubeconfig = kubeconfig;
        }

        static Cluster start(Options o, Path dir, PrintStream out) throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> cmd = List.of(java, "-Xmx3g", "-cp", System.getProperty("java.class.path"),
                    KubeLoadCluster.class.getName(), Integer.toString(o.services()), Integer.toString(o.endpoints()),
                    dir.toString());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            Path log = dir.resolve("cluster.log");
            out.println("(the API server stand-in's output: " + log + ")");
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            Writer w = Files.newBufferedWriter(log);
            Pattern started = Pattern.compile("kube-load cluster: port=(\\d+) kubeconfig=(\\S+) objects=(\\d+) loaded in (\\d+) ms");
            String line;
            while ((line = r.readLine()) != null) {
                w.write(line + "\n");
                Matcher m = started.matcher(line);
                if (m.find()) {
                    w.flush();
                    out.printf("API server stand-in: %s objects loaded in %s ms (not measured)%n", m.group(3), m.group(4));
                    Thread.ofPlatform().daemon().start(() -> XdsLoad.copy(r, w, l -> false));
                    return new Cluster(p, Integer.parseInt(m.group(1)), Path.of(m.group(2)));
                }
            }
            w.close();
            p.destroy();
            throw new IllegalStateException("the API server stand-in did not start; see " + log);
        }

        @Override
        public void close() throws Exception {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroy();
            }
        }
    }

    /** MeshPilot from its jar in Kubernetes mode, against the stand-in. */
    static final class Server implements AutoCloseable {
        final Process process;
        final int grpc;
        final int monitoring;
        final long readyMs;
        final long startedMs;

        private Server(Process process, int grpc, int monitoring, long readyMs, long startedMs) {
            this.process = process;
            this.grpc = grpc;
            this.monitoring = monitoring;
            this.readyMs = readyMs;
            this.startedMs = startedMs;
        }

        static Server start(Cluster cluster, Path dir, Options o, PrintStream out) throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            String home = System.getProperty("meshpilot.home", ".");
            List<String> cmd = new ArrayList<>(XdsLoad.SERVER_JVM_FLAGS);
            cmd.addFirst(java);
            cmd.addAll(List.of("-Dmeshpilot.home=" + home, "-jar", Path.of(home, "target/meshpilot.jar").toString(),
                    "discovery", "--registries", "Kubernetes", "--kubeconfig", cluster.kubeconfig.toString(),
                    "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                    "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0",
                    "--meshConfig", dir.resolve("mesh").toString(), "--caStateDir", dir.resolve("ca").toString(),
                    "--configStateDir", dir.resolve("state").toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            // a load test measures serving, not admission: let every simulated proxy in at once
            pb.environment().put("PILOT_MAX_REQUESTS_PER_SECOND", Integer.toString(Math.max(100, o.proxies() * 2)));
            // istiod's default (true) holds endpoint pushes while changes keep coming, up to
            // PILOT_DEBOUNCE_MAX: under steady churn that, not the server's work, sets the latency
            pb.environment().put("PILOT_ENABLE_EDS_DEBOUNCE", Boolean.toString(o.edsDebounce()));
            Path log = dir.resolve("server.log");
            out.println("(MeshPilot's output: " + log + ")");
            long t0 = System.nanoTime();
            Process p = pb.start();
            try {
                int[] ports = XdsLoad.awaitPorts(p, log);
                long startedMs = (System.nanoTime() - t0) / 1_000_000;
                // "ready: started" is logged when start-up is done; readiness (/ready, what a kubelet
                // probes) also waits for the registries to convert what the informers listed
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
                while (!readyAnswer(ports[0]) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                long readyMs = (System.nanoTime() - t0) / 1_000_000;
                return new Server(p, ports[1], ports[2], readyMs, startedMs);
            } catch (Exception e) {
                p.destroy();
                throw e;
            }
        }

        private static boolean readyAnswer(int http) throws InterruptedException {
            try (HttpClient c = HttpClient.newHttpClient()) {
                return c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/ready")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        }

        long heapAfterGc() throws Exception {
            return XdsLoad.heapAfterGc(process.pid(), monitoring);
        }

        String pushes() throws Exception {
            String metrics = XdsLoad.get(monitoring, "/metrics");
            return Arrays.stream(metrics.split("\n")).filter(l -> l.startsWith("pilot_xds_pushes{"))
                    .map(l -> l.replaceAll(",?mp_scope=\"[a-z]+\",?", "")).collect(Collectors.joining(", "));
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
