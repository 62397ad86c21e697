package io.meshpilot.kube.leaderelection;

import io.meshpilot.kube.ElectionTimings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.extended.leaderelection.LeaderElector;
import io.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a leader election logs while the API server is down, and when it is closed: each
 * failed Lease request is one line with its cause, at ERROR as client-go's leader election
 * logs it for istiod ("error retrieving resource lock ...: ..."); losing the Lease is an INFO
 * line, as istiod's; no line carries a stack (those are for debug).
 */
class LeaderElectionLogTest {
    static final ElectionTimings FAST = ElectionTimings.fromTtl(Duration.ofSeconds(2));

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient client;
    final List<CapturedLog> logs = new ArrayList<>();
    CapturedLog library;
    CapturedLog ours;

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        library = capture(LeaderElector.class);
        ours = capture(LeaderElection.class);
        capture(LeaseLock.class);
        capture(RevisionLeaseLock.class);
    }

    CapturedLog capture(Class<?> source) {
        CapturedLog log = new CapturedLog(source);
        logs.add(log);
        return log;
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
        logs.forEach(CapturedLog::close);
    }

    List<String> linesWithStack() {
        return logs.stream().flatMap(l -> l.withStack().stream()).toList();
    }

    /** An election of this replica, started and leading. */
    LeaderElection leading() throws InterruptedException {
        LeaderElection election = new LeaderElection(client.apiClient(), "istio-system", LeaderElection.STATUS_CONTROLLER,
                "replica-a", FAST);
        election.start();
        Await.until("leading", Duration.ofSeconds(20), election::leading);
        return election;
    }

    long lockErrors() {
        return library.lines().stream().filter(l -> l.contains("resource lock")).count();
    }

    @Test
    void whileTheApiServerIsDownEachFailedLeaseRequestIsOneErrorLineWithItsCause() throws Exception {
        try (LeaderElection election = leading()) {
            api.stop();
            // renewing fails until the renew deadline, then acquiring fails at every retry
            Await.until("the lease lost and three failed requests logged", Duration.ofSeconds(20),
                    () -> !election.leading() && lockErrors() >= 3);
        }
        assertEquals(List.of(), linesWithStack());
        for (String line : library.lines().stream().filter(l -> l.contains("resource lock")).toList()) {
            assertTrue(line.startsWith("SEVERE ") && line.contains("istio-system/" + LeaderElection.STATUS_CONTROLLER)
                    && line.contains("ConnectException") && !line.contains("\n"), line);
        }
        assertTrue(ours.has("INFO", LeaderElection.STATUS_CONTROLLER, "lease lost"), ours.lines().toString());
    }

    String renewTime() {
        return api.get("coordination.k8s.io/v1", "Lease", "istio-system", LeaderElection.STATUS_CONTROLLER).orElseThrow()
                .getAsJsonObject("spec").get("renewTime").getAsString();
    }

    @Test
    void aLeaderClosedLogsNoStack() throws Exception {
        try (LeaderElection election = leading()) {
            // closed just after a renewal, while the elector waits for the next one
            String renewed = renewTime();
            Await.until("a renewal", Duration.ofSeconds(20), () -> !renewTime().equals(renewed));
        }
        assertEquals(List.of(), linesWithStack());
        assertEquals(List.of(), library.lines().stream().filter(l -> l.startsWith("SEVERE")).toList());
    }
}
