package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two servers in one JVM, each with its own config, ports, CA and state: one hosts the HTTP
 * listeners (Helidon MP's one container per JVM), the other serves gRPC only. Each proxy gets
 * the clusters of its own server's config, and a change on one server reaches only its proxies.
 */
class TwoServersTest {
    private static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    private static final String NODE = "sidecar~10.0.0.9~app.default~default.svc.cluster.local";

    @TempDir
    Path a;
    @TempDir
    Path b;

    private static void serviceEntry(Path dir, String file, String host) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        Path tmp = dir.resolve(file + ".tmp");
        Files.writeString(tmp, """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata:
                  name: %s
                  namespace: default
                spec:
                  hosts: [%s]
                  ports:
                  - {number: 80, name: http, protocol: HTTP}
                  resolution: STATIC
                  endpoints:
                  - address: 10.1.2.3
                """.formatted(host.replace('.', '-'), host));
        Files.move(tmp, dir.resolve("config").resolve(file), StandardCopyOption.ATOMIC_MOVE);
    }

    private static Set<String> outboundHosts(DiscoveryResponse r) throws Exception {
        Set<String> hosts = new TreeSet<>();
        for (var any : r.getResourcesList()) {
            String name = any.unpack(Cluster.class).getName();
            if (name.startsWith("outbound|80||") && name.endsWith(".example.com")) {
                hosts.add(name.substring("outbound|80||".length()));
            }
        }
        return hosts;
    }

    private static DiscoveryResponse clustersWith(AdsClient c, Set<String> expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        DiscoveryResponse last = null;
        while (System.nanoTime() < deadline) {
            DiscoveryResponse r = c.await(CDS, Duration.ofSeconds(20));
            if (r == null) {
                break;
            }
            c.ack(r, List.of());
            last = r;
            if (outboundHosts(r).equals(expected)) {
                return r;
            }
        }
        throw new AssertionError("expected clusters for " + expected + ", last CDS: "
                + (last == null ? "none" : outboundHosts(last)));
    }

    @Test
    void twoServersServeIndependentConfig() throws Exception {
        serviceEntry(a, "alpha.yaml", "alpha.example.com");
        serviceEntry(b, "beta.yaml", "beta.example.com");
        try (MeshPilotServer first = TestServers.start(a);
             MeshPilotServer second = MeshPilotServer.startGrpcOnly(TestServers.args(TestServers.flags(b), Map.of()))) {
            int grpcA = first.ports().get("grpc");
            int grpcB = second.ports().get("grpc");
            assertNotEquals(grpcA, grpcB);
            assertFalse(second.ports().containsKey("http"), "the gRPC-only server binds no HTTP listener: "
                    + second.ports());
            assertEquals(200, Http.get(first.ports().get("http"), "/ready").status());
            assertTrue(second.server().components().readiness().ready(), second.server().components().readiness().failing().toString());
            assertNotEquals(first.server().components().certificates().material().root(), second.server().components().certificates().material().root(),
                    "each server has its own CA");

            try (AdsClient proxyA = new AdsClient(grpcA, NODE, Map.of());
                 AdsClient proxyB = new AdsClient(grpcB, NODE, Map.of())) {
                proxyA.subscribe(CDS, List.of());
                proxyB.subscribe(CDS, List.of());
                clustersWith(proxyA, Set.of("alpha.example.com"));
                clustersWith(proxyB, Set.of("beta.example.com"));

                // a change on the second server's config reaches its proxy, not the first server's
                serviceEntry(b, "gamma.yaml", "gamma.example.com");
                clustersWith(proxyB, Set.of("beta.example.com", "gamma.example.com"));
                Set<String> hostsOfFirst = new TreeSet<>(first.server().components().discovery().currentPushContext().services().keySet());
                assertTrue(hostsOfFirst.contains("alpha.example.com"), hostsOfFirst.toString());
                assertFalse(hostsOfFirst.contains("beta.example.com") || hostsOfFirst.contains("gamma.example.com"),
                        "the first server knows only its own services: " + hostsOfFirst);
            }
        }
    }

    @Test
    void aSecondHttpHostInOneJvmIsRefusedWithOneLine() throws Exception {
        try (MeshPilotServer first = TestServers.start(a)) {
            MeshPilotServer.StartupFailure failure = assertThrows(MeshPilotServer.StartupFailure.class,
                    () -> TestServers.start(b).close());
            assertTrue(failure.getMessage().contains("one server per JVM"), failure.getMessage());
            assertFalse(failure.getMessage().contains("\n"), failure.getMessage());
            assertEquals(200, Http.get(first.ports().get("http"), "/ready").status(), "the first server keeps serving");
        }
    }
}
