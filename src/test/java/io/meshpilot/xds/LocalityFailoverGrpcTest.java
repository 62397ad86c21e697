package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Locality failover with grpc-java's real xDS client (priority load balancing over our EDS
 * priorities): a client in r1/z1 calls a service with one real backend in its own zone, one in
 * r1/z2 and one in r2/z1, under a DestinationRule with outlier detection (istiod sets EDS
 * priorities by locality only then). Every call goes to the local backend; when its endpoint
 * goes away, to the one in the same region; when that goes too, to the other region.
 */
class LocalityFailoverGrpcTest {
    static final String HOST = XdsClientScenario.HOST;

    @TempDir
    Path dir;
    MeshPilotServer server;
    ManagedChannel channel;
    XdsNameResolverProvider resolver;
    final List<Server> backends = new ArrayList<>();

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (resolver != null) {
            NameResolverRegistry.getDefaultRegistry().deregister(resolver);
        }
        if (server != null) {
            server.close();
        }
        backends.forEach(Server::shutdownNow);
    }

    /** A WorkloadEntry file for backend {@code name} in {@code locality}. */
    Path workload(String name, String locality) throws Exception {
        Server backend = ProxylessGrpcTest.backend(name);
        backends.add(backend);
        return Files.writeString(dir.resolve("config/" + name + ".yaml"), """
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: %s, namespace: test}
                spec: {address: 127.0.0.1, ports: {grpc: %d}, labels: {app: echo}, locality: %s}
                """.formatted(name, backend.getPort(), locality));
    }

    /** Which backends answer {@code calls} sequential calls, and how often. */
    Map<String, Integer> spread(int calls) {
        Map<String, Integer> out = new TreeMap<>();
        for (int i = 0; i < calls; i++) {
            out.merge(ClientCalls.blockingUnaryCall(channel, ProxylessGrpcTest.WHO,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who"), 1, Integer::sum);
        }
        return out;
    }

    @Test
    void callsStayInTheLocalityAndFailOverWhenItsEndpointsGoAway() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/echo.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  workloadSelector: {labels: {app: echo}}
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: echo, namespace: test}
                spec:
                  host: echo
                  trafficPolicy: {outlierDetection: {consecutive5xxErrors: 5}}
                """);
        Path local = workload("local", "r1/z1");
        Path sameRegion = workload("same-region", "r1/z2");
        workload("other-region", "r2/z1");
        server = TestServers.start(dir);
        resolver = XdsNameResolverProvider.createForTest("xds-locality",
                XdsClientScenario.bootstrap(server.ports().get("grpc"), ProxylessGrpcTest.NODE_ID)); // in r1/z1
        NameResolverRegistry.getDefaultRegistry().register(resolver);
        channel = Grpc.newChannelBuilder("xds-locality:///" + HOST + ":7070", InsecureChannelCredentials.create())
                .build();

        assertEquals(Map.of("local", 30), spread(30), "priority 0 is the client's own zone");

        Files.delete(local);
        Await.until("calls fail over to the same region", Duration.ofSeconds(30),
                () -> spread(1).containsKey("same-region"));
        assertEquals(Map.of("same-region", 30), spread(30), "priority 0 is now the same region's zone");

        Files.delete(sameRegion);
        Await.until("calls fail over to the other region", Duration.ofSeconds(30),
                () -> spread(1).containsKey("other-region"));
        assertEquals(Map.of("other-region", 30), spread(30));
    }
}
