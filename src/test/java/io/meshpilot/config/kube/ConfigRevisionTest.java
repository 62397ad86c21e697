package io.meshpilot.config.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigRevision;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Config selection by {@code istio.io/rev}, as istiod's crdclient filters its informers
 * ({@code inRevision}: {@code pkg/config/model.go LabelsInRevision}): an object labelled
 * {@code istio.io/rev=<r>} is read only by the control plane of revision {@code r}; an
 * unlabelled one by every revision. istiod compares the label with its own revision only, not
 * with the tags pointing at it, so an object labelled with a tag's name is read by no
 * revisioned control plane. Two revisions in one JVM (one hosts the HTTP listeners), against
 * the API server stand-in, changed with kubectl; each revision's push context is what its
 * proxies get.
 */
class ConfigRevisionTest {
    private static final String INSTALL = """
            apiVersion: admissionregistration.k8s.io/v1
            kind: MutatingWebhookConfiguration
            metadata:
              name: istio-revision-tag-prod
              labels: {istio.io/rev: a, istio.io/tag: prod}
            webhooks: []
            ---
            %s
            ---
            %s
            ---
            %s
            ---
            %s
            """.formatted(gateway("shared", null), gateway("for-a", "a"), gateway("for-b", "b"), gateway("on-tag", "prod"));

    @TempDir
    Path dir;

    static String gateway(String name, String revision) {
        return """
                apiVersion: networking.istio.io/v1
                kind: Gateway
                metadata:
                  name: %s
                  namespace: shop%s
                spec:
                  selector: {istio: ingressgateway}
                  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["%s.example.com"]}]
                """.formatted(name, revision == null ? "" : "\n  labels: {istio.io/rev: " + revision + "}", name);
    }

    @Test
    void theLabelIsComparedWithTheRevisionAsIstiodsLabelsInRevision() {
        ConfigRevision a = new ConfigRevision("a");
        assertTrue(a.selects(null), "no labels: every revision's");
        assertTrue(a.selects(Map.of("app", "x")), "no istio.io/rev: every revision's");
        assertTrue(a.selects(Map.of("istio.io/rev", "a")));
        assertFalse(a.selects(Map.of("istio.io/rev", "b")));
        assertFalse(a.selects(Map.of("istio.io/rev", "")), "an empty label names no revision");
        assertTrue(ConfigRevision.ANY.selects(Map.of("istio.io/rev", "b")), "the default install reads everything");
    }

    @Test
    void eachRevisionServesTheConfigLabelledWithItAndTheUnlabelledAndRelabellingMovesIt() throws Exception {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH");
        try (FakeApiServer api = FakeApiServer.start()) {
            api.installIstioCrds();
            Path kubeconfig = api.writeKubeconfig(dir);
            Kubectl kubectl = new Kubectl(binary.get(), kubeconfig, dir.resolve("kubectl"));
            kubectl.run("create", "namespace", "istio-system").ok();
            kubectl.run("create", "namespace", "shop").ok();
            kubectl.runWithInput(INSTALL, "apply", "-f", "-").ok();
            try (MeshPilotServer revisionA = MeshPilotServer.start(TestServers.args(flags("a", kubeconfig),
                    Map.of("REVISION", "a")));
                 MeshPilotServer revisionB = MeshPilotServer.startGrpcOnly(TestServers.args(flags("b", kubeconfig),
                         Map.of("REVISION", "b")))) {
                awaitGateways(revisionA, Set.of("shared", "for-a"));
                awaitGateways(revisionB, Set.of("shared", "for-b"));
                assertEquals(Optional.empty(), revisionA.server().components().configs().store()
                        .get("Gateway", "shop", "on-tag"), "istiod reads the label as a revision, never as a tag");

                // the object moves to revision b: a withdraws it, b serves it, each with a push
                kubectl.run("label", "gateways.networking.istio.io", "for-a", "-n", "shop", "istio.io/rev=b",
                        "--overwrite").ok();
                awaitGateways(revisionA, Set.of("shared"));
                awaitGateways(revisionB, Set.of("shared", "for-a", "for-b"));

                // the label removed: every revision reads it
                kubectl.run("label", "gateways.networking.istio.io", "for-b", "-n", "shop", "istio.io/rev-").ok();
                awaitGateways(revisionA, Set.of("shared", "for-b"));
                awaitGateways(revisionB, Set.of("shared", "for-a", "for-b"));
            }
        }
    }

    private List<String> flags(String revision, Path kubeconfig) throws Exception {
        Path home = Files.createDirectories(dir.resolve(revision));
        List<String> flags = new ArrayList<>(TestServers.flags(home, "--kubeconfig", kubeconfig.toString(),
                "--registries", "Mock"));
        int at = flags.indexOf("--configDir"); // config from the cluster's CRDs only
        flags.remove(at + 1);
        flags.remove(at);
        return flags;
    }

    /** Waits until {@code server}'s push context (what its proxies are pushed) has exactly {@code names}. */
    private static void awaitGateways(MeshPilotServer server, Set<String> names) throws InterruptedException {
        String revision = server.args().revision();
        try {
            Await.until("revision " + revision + " pushes the gateways " + names, Duration.ofSeconds(20),
                    () -> gatewayNames(server).equals(new TreeSet<>(names)));
        } catch (AssertionError timedOut) {
            assertEquals(new TreeSet<>(names), gatewayNames(server), "revision " + revision + "'s gateways");
            throw timedOut;
        }
    }

    private static Set<String> gatewayNames(MeshPilotServer server) {
        return server.server().components().discovery().currentPushContext().gateways().stream()
                .map(Config::name).collect(Collectors.toCollection(TreeSet::new));
    }
}
