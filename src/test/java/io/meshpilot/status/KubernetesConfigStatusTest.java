package io.meshpilot.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.Config;
import io.meshpilot.kube.leaderelection.LeaderElection;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Config status written back in Kubernetes mode (PILOT_ENABLE_STATUS, PILOT_ENABLE_ANALYSIS):
 * a VirtualService applied with kubectl gets istiod's Reconciled condition and its
 * observedGeneration once the connected proxies (real ADS clients) ACK it, follows an update,
 * shows a NACKing proxy, carries its validation warning as a validationMessage, keeps another
 * writer's condition, and is left alone between changes. A replica that does not hold the
 * istio-status-leader Lease writes nothing.
 */
class KubernetesConfigStatusTest {
    static final String INTERVAL = "100ms";

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    final List<AdsClient> clients = new ArrayList<>();

    @BeforeEach
    void startApiServer() {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH: the VirtualService cannot be applied with it");
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: test}\n");
        kubectl = new Kubectl(binary.get(), api.writeKubeconfig(dir), dir.resolve("kubectl"));
    }

    @AfterEach
    void stop() {
        clients.forEach(AdsClient::close);
        if (api != null) {
            api.stop();
        }
    }

    static String echoRoute(String user, boolean deprecatedMirrorPercent) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  http:
                  - match: [{headers: {user: {exact: %s}}}]
                    route: [{destination: {host: echo.test.svc.cluster.local}}]
                """.formatted(user) + (deprecatedMirrorPercent ? """
                    mirror: {host: echo.test.svc.cluster.local}
                    mirrorPercent: 50
                """ : "");
    }

    void kubectlApply(String yaml) throws Exception {
        Path file = Files.writeString(dir.resolve("vs-" + System.nanoTime() + ".yaml"), yaml);
        kubectl.run("apply", "-f", file.toString()).ok();
    }

    MeshPilotServer startServer(String podName) throws Exception {
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock"));
        int at = flags.indexOf("--configDir");
        flags.remove(at + 1);
        flags.remove(at);
        Map<String, String> env = new HashMap<>(Map.of("POD_NAME", podName, "MESHPILOT_LEADER_ELECTION_TTL", "2s",
                "PILOT_ENABLE_STATUS", "true", "PILOT_ENABLE_ANALYSIS", "true", "PILOT_STATUS_UPDATE_INTERVAL", INTERVAL));
        return MeshPilotServer.start(TestServers.args(flags, env));
    }

    /** A sidecar that watches every listener and cluster and answers each response: ACK, or NACK with {@code nack}. */
    AdsClient proxy(MeshPilotServer server, String ip, String nack) {
        AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~" + ip + "~app-" + ip + ".test~test.svc.cluster.local",
                Map.of("NAMESPACE", "test"));
        clients.add(c);
        c.autoAnswer(nack);
        c.subscribe(TypeUrls.CLUSTER, List.of());
        c.subscribe(TypeUrls.LISTENER, List.of());
        return c;
    }

    Optional<JsonObject> virtualService() {
        return api.get("networking.istio.io/v1", "VirtualService", "test", "echo");
    }

    static JsonObject status(JsonObject vs) {
        return vs.has("status") ? vs.getAsJsonObject("status") : new JsonObject();
    }

    static Optional<JsonObject> condition(JsonObject vs, String type) {
        JsonElement list = status(vs).get("conditions");
        if (list == null || !list.isJsonArray()) {
            return Optional.empty();
        }
        for (JsonElement c : list.getAsJsonArray()) {
            if (c.getAsJsonObject().get("type").getAsString().equals(type)) {
                return Optional.of(c.getAsJsonObject());
            }
        }
        return Optional.empty();
    }

    static String generation(JsonObject vs) {
        return vs.getAsJsonObject("metadata").get("generation").getAsString();
    }

    static String observedGeneration(JsonObject vs) {
        JsonElement g = status(vs).get("observedGeneration");
        return g == null ? "" : g.getAsString();
    }

    /** Reconciled with {@code status} and {@code message}, for the object's current generation. */
    static Predicate<JsonObject> reconciled(String status, String message) {
        return vs -> observedGeneration(vs).equals(generation(vs)) && condition(vs, IstioStatus.RECONCILED)
                .map(c -> c.get("status").getAsString().equals(status) && c.get("message").getAsString().startsWith(message))
                .orElse(false);
    }

    JsonObject awaitStatus(String what, Predicate<JsonObject> wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        JsonObject seen = null;
        while (System.nanoTime() < deadline) {
            seen = virtualService().orElse(null);
            if (seen != null && wanted.test(seen)) {
                return seen;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("timed out waiting for " + what + "; last seen status: "
                + (seen == null ? "(no object)" : status(seen)));
    }

    @Test
    void reconciledFollowsTheProxiesAndTheGeneration() throws Exception {
        kubectlApply(echoRoute("jason", false));
        // another controller's condition, which the status writer must keep
        kubectl.run("patch", "virtualservice", "echo", "-n", "test", "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"conditions\":[{\"type\":\"Accepted\",\"status\":\"True\",\"reason\":\"Elsewhere\"}]}}").ok();
        try (MeshPilotServer server = startServer("istiod-1")) {
            proxy(server, "10.0.0.2", null);
            proxy(server, "10.0.0.3", null);

            JsonObject vs = awaitStatus("Reconciled=True for both proxies", reconciled("True", "2/2 proxies up to date."));
            assertEquals("1", observedGeneration(vs));
            assertEquals("2/2 proxies up to date.", condition(vs, IstioStatus.RECONCILED).orElseThrow().get("message").getAsString());
            assertEquals("Elsewhere", condition(vs, "Accepted").orElseThrow().get("reason").getAsString(),
                    "another writer's condition is kept: " + status(vs));
            assertFalse(status(vs).has("validationMessages"), "no warnings, no messages: " + status(vs));

            // nothing changes: the status is not written again and the status write pushed nothing
            String resourceVersion = vs.getAsJsonObject("metadata").get("resourceVersion").getAsString();
            long pushVersion = server.server().components().discovery().currentPushContext().version();
            Thread.sleep(10 * 100); // ten status passes
            JsonObject later = virtualService().orElseThrow();
            assertEquals(resourceVersion, later.getAsJsonObject("metadata").get("resourceVersion").getAsString(),
                    "status rewritten although nothing changed: " + status(later));
            assertEquals(pushVersion, server.server().components().discovery().currentPushContext().version(),
                    "a status write must not push");
            Config served = server.server().components().configs().store().get("VirtualService", "test", "echo").orElseThrow();
            assertEquals(2, server.server().components().discovery().status(served).count("ACKED"),
                    "the served revision with its new status still counts as distributed");

            // an update: the generation moves, the status follows; its deprecated field is a validation message
            kubectlApply(echoRoute("alice", true));
            vs = awaitStatus("Reconciled=True for generation 2", reconciled("True", "2/2 proxies up to date.")
                    .and(v -> generation(v).equals("2")));
            assertEquals("2", observedGeneration(vs));
            JsonArray messages = awaitStatus("validationMessages", v -> status(v).has("validationMessages"))
                    .getAsJsonObject("status").getAsJsonArray("validationMessages");
            assertEquals(1, messages.size(), messages.toString());
            JsonObject message = messages.get(0).getAsJsonObject();
            assertEquals("IST0133", message.getAsJsonObject("type").get("code").getAsString());
            assertEquals("SchemaWarning", message.getAsJsonObject("type").get("name").getAsString());
            assertEquals("WARNING", message.get("level").getAsString());
            assertTrue(message.get("documentationUrl").getAsString().endsWith("/ist0133/?ref=status-controller"), message.toString());
            assertTrue(message.get("message").getAsString().contains("mirrorPercent is deprecated"), message.toString());

            // a proxy that rejects what it is sent: not reconciled, and the rejection is visible
            AdsClient nacking = proxy(server, "10.0.0.4", "listener rejected by test");
            // (until the new proxy answers, the same message without a reason says it is not up to date yet)
            vs = awaitStatus("Reconciled=False with the NACK", reconciled("False", "2/3 proxies up to date.")
                    .and(v -> condition(v, IstioStatus.RECONCILED).map(c -> c.has("reason")).orElse(false)));
            JsonObject rejected = condition(vs, IstioStatus.RECONCILED).orElseThrow();
            assertEquals(IstioStatus.REJECTED, rejected.get("reason").getAsString());
            assertTrue(rejected.get("message").getAsString().contains("1 rejected it: sidecar~10.0.0.4")
                    && rejected.get("message").getAsString().contains("listener rejected by test"), rejected.toString());
            assertTrue(Instant.parse(rejected.get("lastTransitionTime").getAsString()) != null);

            // it goes away: reconciled again
            nacking.close();
            awaitStatus("Reconciled=True once the NACKing proxy left", reconciled("True", "2/2 proxies up to date."));
            assertEquals("Elsewhere", condition(virtualService().orElseThrow(), "Accepted").orElseThrow().get("reason")
                    .getAsString());
        }
    }

    /** Another replica holding the status Lease: renews it every 200ms (electors judge expiry by renewals seen). */
    void holdStatusLease(String holder, Instant acquired) {
        Instant now = Instant.now();
        api.apply("""
                apiVersion: coordination.k8s.io/v1
                kind: Lease
                metadata: {name: %s, namespace: istio-system}
                spec:
                  holderIdentity: %s
                  leaseDurationSeconds: 2
                  leaseTransitions: 0
                  acquireTime: "%s"
                  renewTime: "%s"
                """.formatted(LeaderElection.STATUS_CONTROLLER, holder, micro(acquired), micro(now)));
    }

    @Test
    void aReplicaThatDoesNotLeadWritesNothing() throws Exception {
        Instant acquired = Instant.now();
        holdStatusLease("istiod-elsewhere", acquired);
        var renewer = Executors.newSingleThreadScheduledExecutor();
        renewer.scheduleAtFixedRate(() -> holdStatusLease("istiod-elsewhere", acquired), 200, 200, TimeUnit.MILLISECONDS);
        kubectlApply(echoRoute("jason", true));
        try (MeshPilotServer server = startServer("istiod-2")) {
            proxy(server, "10.0.0.2", null);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Config served;
            do {
                Thread.sleep(20);
                served = server.server().components().configs().store().get("VirtualService", "test", "echo").orElseThrow();
            } while (server.server().components().discovery().status(served).count("ACKED") < 1 && System.nanoTime() < deadline);
            assertEquals(1, server.server().components().discovery().status(served).count("ACKED"));
            Thread.sleep(10 * 100); // ten status passes, had it led
            assertFalse(virtualService().orElseThrow().has("status"), virtualService().orElseThrow().toString());
            assertEquals("istiod-elsewhere", api.get("coordination.k8s.io/v1", "Lease", "istio-system",
                    LeaderElection.STATUS_CONTROLLER).orElseThrow().getAsJsonObject("spec").get("holderIdentity").getAsString());
        } finally {
            renewer.shutdownNow();
        }
    }

    private static String micro(Instant t) {
        return DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
                .withZone(ZoneOffset.UTC).format(t);
    }
}
