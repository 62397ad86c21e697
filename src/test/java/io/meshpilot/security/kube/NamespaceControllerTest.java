package io.meshpilot.security.kube;

import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.meshpilot.kube.leaderelection.DefaultRevision;
import io.meshpilot.kube.ElectionTimings;
import io.meshpilot.kube.leaderelection.LeaderElection;
import io.meshpilot.kube.leaderelection.RevisionPriority;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.util.LabelSelector;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The namespace controller under istiod's namespace-controller election, over the API server
 * stand-in with real Kubernetes clients: istio-ca-root-cert appears in a new namespace, comes
 * back after deletion, follows the trust bundle, skips Kubernetes' own namespaces but
 * kube-system, those discoverySelectors leave out and those RBAC forbids; of two replicas only the Lease holder writes, and when it
 * stops (or loses the Lease) the other takes the duty over.
 */
class NamespaceControllerTest {
    /** Short timings for the test; istiod's are 30s/15s/7.5s. */
    static final ElectionTimings FAST = ElectionTimings.fromTtl(Duration.ofSeconds(2));

    @TempDir
    Path dir;
    FakeApiServer api;

    @BeforeEach
    void start() {
        api = FakeApiServer.start();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: kube-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: apps}
                """);
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    /** One replica: its client, controller and election. */
    final class Replica implements AutoCloseable {
        final KubeClient client;
        final NamespaceController controller;
        final LeaderElection election;
        final AtomicReference<String> pem;

        Replica(String identity, String firstPem) throws Exception {
            this(identity, firstPem, null);
        }

        /** @param revision with istiod's prioritized election for this revision; null: without */
        Replica(String identity, String firstPem, String revision) throws Exception {
            Path config = Files.createDirectories(dir.resolve(identity));
            client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(config), 1000, 1000));
            pem = new AtomicReference<>(firstPem);
            controller = new NamespaceController(client, pem::get);
            election = new LeaderElection(client.apiClient(), "istio-system", LeaderElection.NAMESPACE_CONTROLLER,
                    identity, FAST, revision == null ? null
                            : new RevisionPriority(revision, new DefaultRevision(client.apiClient())))
                    .addDuty("namespace controller", controller::lead);
            assertTrue(client.runAndWait(Duration.ofSeconds(20)).isEmpty());
            election.start();
        }

        @Override
        public void close() {
            election.close();
            client.close();
        }
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(30), condition);
    }

    /** Another holder's renewal of the namespace controller's Lease. */
    void renewAsIntruder() {
        JsonObject lease = api.get("coordination.k8s.io/v1", "Lease", "istio-system",
                LeaderElection.NAMESPACE_CONTROLLER).orElseThrow();
        JsonObject spec = lease.getAsJsonObject("spec");
        spec.addProperty("holderIdentity", "intruder");
        spec.addProperty("renewTime", DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.MICROS)));
        lease.getAsJsonObject("metadata").remove("resourceVersion");
        api.apply(lease);
    }

    Optional<String> rootCert(String namespace) {
        return api.get("v1", "ConfigMap", namespace, NamespaceController.CONFIG_MAP)
                .map(cm -> cm.getAsJsonObject("data").get(NamespaceController.KEY).getAsString());
    }

    Optional<String> leaseHolder() {
        return api.get("coordination.k8s.io/v1", "Lease", "istio-system", LeaderElection.NAMESPACE_CONTROLLER)
                .map(l -> l.getAsJsonObject("spec").get("holderIdentity").getAsString());
    }

    void namespace(String name, Map<String, String> labels) {
        StringBuilder yaml = new StringBuilder("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n");
        if (!labels.isEmpty()) {
            yaml.append("  labels:\n");
            labels.forEach((k, v) -> yaml.append("    ").append(k).append(": ").append(v).append('\n'));
        }
        api.apply(yaml.toString());
    }

    @Test
    void theRootCertIsInEveryNamespaceComesBackAndFollowsTheTrustBundle() throws Exception {
        try (Replica r = new Replica("istiod-a", "ROOT-1")) {
            await("istio-ca-root-cert in apps and istio-system",
                    () -> rootCert("apps").isPresent() && rootCert("istio-system").isPresent());
            assertEquals(Optional.of("ROOT-1"), rootCert("apps"));
            JsonObject cm = api.get("v1", "ConfigMap", "apps", NamespaceController.CONFIG_MAP).orElseThrow();
            assertEquals("true", cm.getAsJsonObject("metadata").getAsJsonObject("labels").get("istio.io/config").getAsString());

            namespace("fresh", Map.of());
            await("istio-ca-root-cert in a new namespace", () -> rootCert("fresh").equals(Optional.of("ROOT-1")));

            assertTrue(api.delete("v1", "ConfigMap", "apps", NamespaceController.CONFIG_MAP));
            await("istio-ca-root-cert back after deletion", () -> rootCert("apps").equals(Optional.of("ROOT-1")));

            api.apply("""
                    apiVersion: v1
                    kind: ConfigMap
                    metadata: {name: istio-ca-root-cert, namespace: fresh}
                    data: {root-cert.pem: tampered}
                    """);
            await("an edited istio-ca-root-cert written back", () -> rootCert("fresh").equals(Optional.of("ROOT-1")));

            r.pem.set("ROOT-2");
            r.controller.trustBundleChanged();
            await("istio-ca-root-cert following the trust bundle", () -> rootCert("apps").equals(Optional.of("ROOT-2"))
                    && rootCert("fresh").equals(Optional.of("ROOT-2")) && rootCert("istio-system").equals(Optional.of("ROOT-2")));

            // discoverySelectors: only labelled namespaces from now on
            r.client.discoveryNamespaces().setSelectors(List.of(new LabelSelector(Map.of("mesh", "enabled"), List.of())));
            namespace("outside", Map.of());
            namespace("inside", Map.of("mesh", "enabled"));
            await("istio-ca-root-cert in a selected namespace", () -> rootCert("inside").isPresent());
            namespace("outside", Map.of("mesh", "enabled"));
            await("istio-ca-root-cert once the namespace is selected", () -> rootCert("outside").isPresent());
        }
    }

    /**
     * istiod's opt-outs: Kubernetes' own namespaces but kube-system (ztunnel may run there), and
     * a namespace where RBAC forbids the write, refused once and not retried in a loop.
     */
    @Test
    void kubeSystemIsWrittenKubesOtherNamespacesAndForbiddenOnesAreLeftAlone() throws Exception {
        api.forbidWrites("configmaps", "locked");
        namespace("locked", Map.of());
        namespace("local-path-storage", Map.of());
        try (Replica r = new Replica("istiod-a", "ROOT-1")) {
            await("istio-ca-root-cert in kube-system and apps",
                    () -> rootCert("kube-system").isPresent() && rootCert("apps").isPresent());
            namespace("later", Map.of());
            await("istio-ca-root-cert in a later namespace", () -> rootCert("later").isPresent());
            // every namespace known from the start has been reconciled by now; a retry loop would
            // go on asking for the forbidden one (once a second before)
            Thread.sleep(3000);
            long creates = api.requestLog().stream()
                    .filter(line -> line.startsWith("POST /api/v1/namespaces/locked/configmaps")).count();
            assertTrue(creates >= 1 && creates <= 2, creates + " creates in the forbidden namespace");
            for (String ns : List.of("kube-public", "kube-node-lease", "local-path-storage", "locked")) {
                assertFalse(rootCert(ns).isPresent(), "istio-ca-root-cert written in " + ns);
            }
        }
    }

    @Test
    void onlyTheLeaderWritesAndTheDutyMovesWhenItStops() throws Exception {
        try (Replica a = new Replica("istiod-a", "ROOT-A"); Replica b = new Replica("istiod-b", "ROOT-B")) {
            await("a leader", () -> leaseHolder().isPresent() && rootCert("apps").isPresent());
            String holder = leaseHolder().orElseThrow();
            Replica leader = holder.equals("istiod-a") ? a : b;
            Replica follower = leader == a ? b : a;
            String leaderRoot = leader.pem.get();
            await("the leader's root everywhere", () -> rootCert("apps").equals(Optional.of(leaderRoot))
                    && rootCert("istio-system").equals(Optional.of(leaderRoot)));
            assertTrue(leader.election.leading());
            assertFalse(follower.election.leading());

            // the follower sees the deletion too, but only the leader writes
            api.delete("v1", "ConfigMap", "apps", NamespaceController.CONFIG_MAP);
            follower.controller.trustBundleChanged();
            await("the leader's root back", () -> rootCert("apps").equals(Optional.of(leaderRoot)));
            // longer than a lease: a live leader keeps the Lease, the follower neither leads nor writes
            Thread.sleep(FAST.leaseDuration().toMillis() * 2);
            assertEquals(Optional.of(holder), leaseHolder());
            assertFalse(follower.election.leading());
            assertEquals(Optional.of(leaderRoot), rootCert("apps"));
            assertEquals(Optional.of(leaderRoot), rootCert("istio-system"));

            Instant stopped = Instant.now();
            leader.close(); // a replica killed: the Lease is not released, it expires
            String followerRoot = follower.pem.get();
            namespace("after", Map.of());
            await("the other replica leading and writing", () -> follower.election.leading()
                    && rootCert("apps").equals(Optional.of(followerRoot)) && rootCert("after").equals(Optional.of(followerRoot)));
            assertEquals(Optional.of(follower == a ? "istiod-a" : "istiod-b"), leaseHolder());
            // for the record (not asserted): how long the duty was without a leader
            Files.writeString(Path.of("target", "namespace-controller-failover.txt"), "lease " + FAST.leaseDuration().toMillis()
                    + " ms, failover " + Duration.between(stopped, Instant.now()).toMillis() + " ms\n");
        }
    }

    /**
     * istiod's PRIORITIZED_LEADER_ELECTION: the default revision (istioctl tag set default)
     * takes the Lease from a live holder of another revision; a replica of the holder's own
     * revision does not, nor does the old revision take it back.
     */
    @Test
    void theDefaultRevisionTakesTheElectionOverFromAnotherRevision() throws Exception {
        api.apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: istio-revision-tag-default
                  labels: {istio.io/tag: default, istio.io/rev: red}
                webhooks: []
                """);
        try (Replica green = new Replica("istiod-green", "ROOT-GREEN", "green")) {
            await("green leading", () -> green.election.leading() && rootCert("apps").equals(Optional.of("ROOT-GREEN")));
            try (Replica red = new Replica("istiod-red", "ROOT-RED", "red")) {
                await("red, the default revision, leading while green still runs", () -> red.election.leading()
                        && rootCert("apps").equals(Optional.of("ROOT-RED")));
                await("green stepping down", () -> !green.election.leading());
                JsonObject lease = api.get("coordination.k8s.io/v1", "Lease", "istio-system",
                        LeaderElection.NAMESPACE_CONTROLLER).orElseThrow();
                assertEquals("red", lease.getAsJsonObject("metadata").getAsJsonObject("annotations").get("leader.istio.io/holder-key").getAsString());
                try (Replica red2 = new Replica("istiod-red-2", "ROOT-RED-2", "red")) {
                    // longer than a lease: neither another red replica nor green takes a live Lease
                    Thread.sleep(FAST.leaseDuration().toMillis() * 2);
                    assertEquals(Optional.of("istiod-red"), leaseHolder());
                    assertFalse(red2.election.leading());
                    assertFalse(green.election.leading());
                }
            }
        }
    }

    @Test
    void aReplicaThatLosesTheLeaseStopsItsDuties() throws Exception {
        try (Replica a = new Replica("istiod-a", "ROOT-A")) {
            await("leading", () -> a.election.leading());
            // another holder takes the Lease over and keeps renewing it: istiod-a can no longer renew
            await("istiod-a stops leading after losing its Lease", () -> {
                renewAsIntruder();
                return !a.election.leading();
            });
            api.delete("v1", "ConfigMap", "apps", NamespaceController.CONFIG_MAP);
            Thread.sleep(FAST.renewDeadline().toMillis());
            assertFalse(rootCert("apps").isPresent() && leaseHolder().equals(Optional.of("intruder")),
                    "a replica without the Lease wrote the ConfigMap");
        }
    }
}
