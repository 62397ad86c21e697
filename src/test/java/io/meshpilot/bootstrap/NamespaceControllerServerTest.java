package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.security.kube.NamespaceController;
import io.meshpilot.kube.leaderelection.LeaderElection;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two whole servers in Kubernetes mode against one API server. They share one CA root (kept
 * in istio-ca-secret), so who writes istio-ca-root-cert is told by the Lease and by a
 * namespace created after the leader stopped: only the replica holding the
 * namespace-controller Lease publishes, and once it stops the other does; a change of the
 * trust bundle (MeshConfig caCertificates) reaches the ConfigMaps.
 */
class NamespaceControllerServerTest {
    @TempDir
    Path a;
    @TempDir
    Path b;

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(30), condition);
    }

    static List<String> kubernetesFlags(Path dir, FakeApiServer api) {
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock"));
        int at = flags.indexOf("--configDir");
        flags.remove(at + 1);
        flags.remove(at);
        return flags;
    }

    @Test
    void theLeadersRootIsPublishedAndTheOtherReplicaTakesOver() throws Exception {
        try (FakeApiServer api = FakeApiServer.start()) {
            api.installIstioCrds();
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n");
            MeshPilotServer first = MeshPilotServer.start(TestServers.args(kubernetesFlags(a, api),
                    Map.of("POD_NAME", "istiod-1", "MESHPILOT_LEADER_ELECTION_TTL", "2s")));
            try (MeshPilotServer second = MeshPilotServer.startGrpcOnly(TestServers.args(kubernetesFlags(b, api),
                    Map.of("POD_NAME", "istiod-2", "MESHPILOT_LEADER_ELECTION_TTL", "2s")))) {
                String root = first.server().components().certificates().trustBundle().pem();
                assertEquals(root, second.server().components().certificates().trustBundle().pem(), "one root for both replicas");
                // the first replica competed alone for a while: it holds the Lease
                await("istio-ca-root-cert from the leader", () -> rootCert(api, "apps").equals(Optional.of(root)));
                assertEquals(Optional.of("istiod-1"), holder(api));
                first.close();
                api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: later}\n");
                await("istio-ca-root-cert from the new leader", () -> holder(api).equals(Optional.of("istiod-2"))
                        && rootCert(api, "later").equals(Optional.of(root)));

                OpenSsl ossl = new OpenSsl(Files.createDirectories(b.resolve("extra-pki")));
                ossl.root("extra", "Extra Root", "ec");
                String extra = ossl.read("extra-cert.pem");

                // the trust bundle changes (MeshConfig caCertificates): the leader rewrites the ConfigMaps
                api.apply("""
                        apiVersion: v1
                        kind: ConfigMap
                        metadata: {name: istio, namespace: istio-system}
                        data:
                          mesh: |
                            caCertificates:
                            - pem: |
                        %s
                        """.formatted(extra.indent(8).stripTrailing()));
                await("istio-ca-root-cert following the trust bundle", () -> rootCert(api, "apps")
                        .map(pem -> pem.startsWith(root) && pem.contains(extra.trim())).orElse(false));
            } finally {
                first.close();
            }
        }
    }

    static Optional<String> rootCert(FakeApiServer api, String namespace) {
        return api.get("v1", "ConfigMap", namespace, NamespaceController.CONFIG_MAP)
                .map(cm -> cm.getAsJsonObject("data").get(NamespaceController.KEY).getAsString());
    }

    static Optional<String> holder(FakeApiServer api) {
        return api.get("coordination.k8s.io/v1", "Lease", "istio-system", LeaderElection.NAMESPACE_CONTROLLER)
                .map(l -> l.getAsJsonObject("spec").get("holderIdentity")) // absent while nobody holds it
                .filter(h -> h != null && !h.isJsonNull()).map(h -> h.getAsString());
    }
}
