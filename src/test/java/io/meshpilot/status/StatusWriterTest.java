package io.meshpilot.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.config.Config;
import io.meshpilot.config.kube.CrdConfigStore;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.xds.DistributionStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The status writer's budget, over the real config store and the API server stand-in: a pass
 * writes at most its number of statuses (the rest wait for the next pass), and the passes that
 * follow write the others, each once.
 */
class StatusWriterTest {
    static final Schemas SCHEMAS = Schemas.PILOT;
    static final Duration WITHIN = Duration.ofSeconds(20);
    static final List<String> NAMES = List.of("a", "b", "c");

    @TempDir
    Path dir;
    FakeApiServer api;
    CrdConfigStore store;
    /** What the test started, closed last first. */
    final Deque<AutoCloseable> started = new ArrayDeque<>();

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        started.push(api);
        api.installIstioCrds();
        for (String name : NAMES) {
            api.apply("""
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: %s, namespace: default}
                    spec: {hosts: [%s.example.com], http: [{route: [{destination: {host: %s}}]}]}
                    """.formatted(name, name, name));
        }
        KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        started.push(client);
        store = new CrdConfigStore(client, SCHEMAS, new ConfigParser(SCHEMAS));
        started.push(store);
        store.run();
        assertEquals(List.of(), client.runAndWait(WITHIN));
        Await.until("the store synced with its three objects", WITHIN,
                () -> store.hasSynced() && store.list("VirtualService", null).size() == NAMES.size());
    }

    @AfterEach
    void stop() throws Exception {
        while (!started.isEmpty()) {
            started.pop().close();
        }
    }

    /** Every object ACKed by one proxy, so each has a Reconciled condition to write. */
    static List<DistributionStatus> ackedByOneProxy(List<Config> configs) {
        return configs.stream().map(c -> new DistributionStatus(c.key().toString(), c.resourceVersion(), 1,
                List.of(new DistributionStatus.ProxyStatus("sidecar~10.0.0.1~app.default~default.svc.cluster.local",
                        "conn-1", "ACKED", "")))).toList();
    }

    long statusWrites() {
        return api.requestLog().stream().filter(r -> r.startsWith("PUT ") && r.contains("/status") && r.endsWith("-> 200"))
                .count();
    }

    long reconciled() {
        return NAMES.stream().filter(n -> api.get("networking.istio.io/v1", "VirtualService", "default", n).orElseThrow()
                .toString().contains("\"type\":\"Reconciled\"")).count();
    }

    @Test
    void aPassWritesAtMostItsBudgetAndTheNextPassesTheRest() throws Exception {
        // a pass an hour: within this term only the first pass runs, and its budget is one write
        StatusWriter slow = new StatusWriter(store, SCHEMAS.all(), StatusWriterTest::ackedByOneProxy,
                new PilotFeatures.Status(true, false, Duration.ofHours(1)), 1);
        try (AutoCloseable term = slow.lead()) {
            Await.until("the first status written", WITHIN, () -> statusWrites() >= 1);
        }
        assertEquals(1, statusWrites(), "the first pass wrote one status, the others wait for the next pass");
        assertEquals(1, reconciled());

        // passes every 50 ms with the same budget: the other two follow, each written once
        StatusWriter fast = new StatusWriter(store, SCHEMAS.all(), StatusWriterTest::ackedByOneProxy,
                new PilotFeatures.Status(true, false, Duration.ofMillis(50)), 1);
        try (AutoCloseable term = fast.lead()) {
            Await.until("every object reconciled", WITHIN, () -> reconciled() == NAMES.size());
        }
        assertEquals(NAMES.size(), statusWrites(), "each object's status written once");
    }
}
