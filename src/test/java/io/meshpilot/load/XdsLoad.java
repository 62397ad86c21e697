package io.meshpilot.load;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The xDS load tool ({@code bin/load}): starts MeshPilot as its own process with generated
 * config (S ServiceEntries x E WorkloadEntries), connects N simulated Envoy-like proxies
 * (state of the world: wildcard CDS, then EDS for every cluster it lists, ACKing every
 * response), and reports: time until every proxy has a complete config; after an endpoint
 * change in every service, time until every proxy has the new EDS; bytes sent; NACKs and
 * failed streams; the server's heap per connected proxy (after a GC, via jcmd).
 */
public final class XdsLoad {
    static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

    public static void main(String[] argv) throws Exception {
        int proxies = intArg(argv, "--proxies", 100);
        int services = intArg(argv, "--services", 100);
        int endpoints = intArg(argv, "--endpoints", 2);
        String transport = strArg(argv, "--grpcTransport", "helidon");
        Path dir = Files.createTempDirectory("meshpilot-load");
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("services.yaml"), config(services, endpoints, 19000));
        Process server = startServer(dir, transport, proxies);
        try {
            int[] ports = awaitPorts(server);
            int http = ports[0];
            int grpc = ports[1];
            int monitoring = ports[2];
            long heapIdle = heapAfterGc(server.pid(), monitoring);
            System.out.printf("load: %d proxies, %d services x %d endpoints, transport %s%n", proxies, services,
                    endpoints, transport);

            List<ManagedChannel> channels = new ArrayList<>();
            for (int i = 0; i < Math.max(1, proxies / 100); i++) {
                channels.add(NettyChannelBuilder.forAddress("127.0.0.1", grpc).usePlaintext()
                        .maxInboundMessageSize(64 * 1024 * 1024).build());
            }
            List<SimulatedProxy> sims = new ArrayList<>();
            CountDownLatch complete = new CountDownLatch(proxies);
            long t0 = System.nanoTime();
            for (int i = 0; i < proxies; i++) {
                SimulatedProxy p = new SimulatedProxy(i, channels.get(i % channels.size()), complete, t0, services);
                sims.add(p);
                p.start();
            }
            boolean all = complete.await(10, TimeUnit.MINUTES);
            long connectMs = (System.nanoTime() - t0) / 1_000_000;
            long[] firstConfig = sims.stream().mapToLong(s -> s.completeMs).filter(v -> v >= 0).sorted().toArray();
            System.out.printf("complete config: %d/%d proxies in %d ms (p50 %d ms, p99 %d ms, max %d ms)%n",
                    firstConfig.length, proxies, connectMs, pct(firstConfig, 50), pct(firstConfig, 99), pct(firstConfig, 100));
            long heapConnected = heapAfterGc(server.pid(), monitoring);
            System.out.printf("server heap: %.1f MB idle, %.1f MB with %d proxies: %.1f KiB per connected proxy%n",
                    heapIdle / 1048576.0, heapConnected / 1048576.0, proxies, (heapConnected - heapIdle) / 1024.0 / proxies);

            // an endpoint change in every service: one file rewrite, every WorkloadEntry's port moves
            CountDownLatch updated = new CountDownLatch(proxies);
            sims.forEach(s -> s.expectPort(20000, updated));
            long t1 = System.nanoTime();
            Path tmp = config.resolve(".services.tmp");
            Files.writeString(tmp, config(services, endpoints, 20000));
            Files.move(tmp, config.resolve("services.yaml"), StandardCopyOption.ATOMIC_MOVE);
            boolean fanned = updated.await(10, TimeUnit.MINUTES);
            long[] fanout = sims.stream().mapToLong(s -> s.updatedMs).filter(v -> v >= 0).sorted().toArray();
            System.out.printf("push fan-out after an endpoint change in every service: %d/%d proxies in %d ms "
                            + "(p50 %d ms, p99 %d ms; includes the file watch and %s debounce)%n",
                    fanout.length, proxies, (System.nanoTime() - t1) / 1_000_000, pct(fanout, 50), pct(fanout, 99),
                    "PILOT_DEBOUNCE_AFTER");
            long bytes = sims.stream().mapToLong(s -> s.bytes.get()).sum();
            long responses = sims.stream().mapToLong(s -> s.responses.get()).sum();
            long failed = sims.stream().filter(s -> s.failure != null).count();
            System.out.printf("traffic: %d responses, %.1f MB; NACKs sent 0; failed streams %d%n", responses,
                    bytes / 1048576.0, failed);
            sims.stream().filter(s -> s.failure != null).limit(3)
                    .forEach(s -> System.out.println("  failure: " + s.failure));
            String metrics = get(monitoring, "/metrics");
            System.out.println("server: " + grep(metrics, "pilot_xds{") + ", " + grep(metrics, "pilot_total_xds_rejects"));
            channels.forEach(ManagedChannel::shutdownNow);
            if (!all || !fanned) {
                System.exit(1);
            }
        } finally {
            server.destroy();
            server.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** One Envoy-like proxy on its own ADS stream. */
    static final class SimulatedProxy {
        final int id;
        final ManagedChannel channel;
        final CountDownLatch complete;
        final long t0;
        final int services;
        final AtomicLong bytes = new AtomicLong();
        final AtomicInteger responses = new AtomicInteger();
        volatile long completeMs = -1;
        volatile long updatedMs = -1;
        volatile int expectedPort;
        volatile CountDownLatch updated;
        volatile long updateStart;
        volatile Throwable failure;
        private StreamObserver<DiscoveryRequest> out;
        private List<String> clusters = List.of();

        SimulatedProxy(int id, ManagedChannel channel, CountDownLatch complete, long t0, int services) {
            this.id = id;
            this.channel = channel;
            this.complete = complete;
            this.t0 = t0;
            this.services = services;
        }

        void start() {
            out = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(new StreamObserver<>() {
                @Override
                public void onNext(DiscoveryResponse r) {
                    handle(r);
                }

                @Override
                public void onError(Throwable t) {
                    failure = t;
                    if (completeMs < 0) {
                        complete.countDown();
                    }
                }

                @Override
                public void onCompleted() {
                }
            });
            send(DiscoveryRequest.newBuilder().setTypeUrl(CDS)
                    .setNode(Node.newBuilder().setId("sidecar~10.200." + (id / 250) + "." + (id % 250)
                            + "~load-" + id + ".default~default.svc.cluster.local")).build());
        }

        synchronized void send(DiscoveryRequest r) {
            out.onNext(r);
        }

        void expectPort(int port, CountDownLatch latch) {
            updateStart = System.nanoTime();
            expectedPort = port;
            updated = latch;
        }

        private void handle(DiscoveryResponse r) {
            responses.incrementAndGet();
            bytes.addAndGet(r.getSerializedSize());
            try {
                if (r.getTypeUrl().equals(CDS)) {
                    List<String> names = new ArrayList<>();
                    for (var a : r.getResourcesList()) {
                        names.add(a.unpack(Cluster.class).getName());
                    }
                    send(ack(r, List.of()));
                    if (!names.equals(clusters)) {
                        clusters = names;
                        send(DiscoveryRequest.newBuilder().setTypeUrl(EDS).addAllResourceNames(names).build());
                    }
                } else if (r.getTypeUrl().equals(EDS)) {
                    send(ack(r, clusters));
                    if (completeMs < 0 && r.getResourcesCount() >= services) {
                        completeMs = (System.nanoTime() - t0) / 1_000_000;
                        complete.countDown();
                    }
                    CountDownLatch u = updated;
                    if (u != null && updatedMs < 0 && r.getResourcesCount() > 0) {
                        ClusterLoadAssignment cla = r.getResources(0).unpack(ClusterLoadAssignment.class);
                        if (cla.getEndpointsCount() > 0 && cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress()
                                .getSocketAddress().getPortValue() >= expectedPort) {
                            updatedMs = (System.nanoTime() - updateStart) / 1_000_000;
                            u.countDown();
                        }
                    }
                }
            } catch (InvalidProtocolBufferException e) {
                failure = e;
            }
        }

        private static DiscoveryRequest ack(DiscoveryResponse r, List<String> names) {
            return DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
                    .setResponseNonce(r.getNonce()).addAllResourceNames(names).build();
        }
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

    static Process startServer(Path dir, String transport, int proxies) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        String home = System.getProperty("meshpilot.home", ".");
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx2g",
                "-Dmeshpilot.home=" + home, "-jar", Path.of(home, "target/meshpilot.jar").toString(), "discovery",
                "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0", "--grpcTransport", transport,
                "--configDir", dir.resolve("config").toString(), "--meshConfig", dir.resolve("mesh").toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        // a load test measures serving, not admission: let every simulated proxy in at once
        pb.environment().put("PILOT_MAX_REQUESTS_PER_SECOND", Integer.toString(Math.max(100, proxies * 2)));
        return pb.start();
    }

    static int[] awaitPorts(Process p) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()));
        Pattern servers = Pattern.compile("http=(\\d+) grpc=(\\d+) grpc-secure=\\d+ monitoring=(\\d+)");
        String line;
        int[] ports = null;
        while ((line = r.readLine()) != null) {
            Matcher m = servers.matcher(line);
            if (m.find()) {
                ports = new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
            }
            if (line.contains("io.meshpilot.startup: ready") && ports != null) {
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        r.lines().forEach(l -> { });
                    } catch (java.io.UncheckedIOException e) {
                        // the server was stopped: its output is closed
                    }
                });
                return ports;
            }
        }
        throw new IllegalStateException("the server did not start");
    }

    static long heapAfterGc(long pid, int monitoring) throws Exception {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        new ProcessBuilder(jcmd, Long.toString(pid), "GC.run").redirectErrorStream(true).start().waitFor(60, TimeUnit.SECONDS);
        String m = grep(get(monitoring, "/metrics"), "memory_usedHeap_bytes");
        return (long) Double.parseDouble(m.substring(m.lastIndexOf(' ') + 1));
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
