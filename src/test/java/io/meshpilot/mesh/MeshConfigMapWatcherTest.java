package io.meshpilot.mesh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.model.Environment;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mesh config from the cluster's {@code istio} ConfigMap (istio-&lt;rev&gt; for a revision),
 * over the API server stand-in: loaded, changed, an invalid change keeps the previous config
 * and says why, a deleted ConfigMap means the defaults.
 */
class MeshConfigMapWatcherTest {
    @TempDir
    Path dir;

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    static String configMap(String name, String mesh) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: %s, namespace: istio-system}
                data:
                  mesh: |
                %s
                  meshNetworks: |
                    networks:
                      network1:
                        endpoints: [{fromRegistry: Kubernetes}]
                        gateways: [{address: 1.2.3.4, port: 15443}]
                """.formatted(name, mesh.indent(4).stripTrailing());
    }

    @Test
    void theRevisionsConfigMapIsWatchedAndABadChangeKeepsThePreviousConfig() throws Exception {
        assertEquals("istio", MeshConfigMapWatcher.configMapName(""));
        assertEquals("istio", MeshConfigMapWatcher.configMapName("default"));
        assertEquals("istio-canary", MeshConfigMapWatcher.configMapName("canary"));
        try (FakeApiServer api = FakeApiServer.start();
             KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000))) {
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            api.apply(configMap("istio", "trustDomain: not-this-revision.example"));
            api.apply(configMap("istio-canary", "trustDomain: first.example"));
            Environment env = new Environment("cluster.local", "Kubernetes");
            env.setMesh(new MeshConfigLoader().defaults());
            MeshConfigMapWatcher watcher = new MeshConfigMapWatcher(env, client, "istio-system", "canary");
            assertTrue(watcher.start().contains("istio-system/istio-canary"));
            assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
            await("first config and networks", () -> env.mesh().getTrustDomain().equals("first.example")
                    && env.networks().getNetworksCount() == 1);

            api.apply(configMap("istio-canary", "trustDomain: second.example"));
            await("changed config", () -> env.mesh().getTrustDomain().equals("second.example"));

            api.apply(configMap("istio-canary", "trustDomain: \"\""));
            await("the bad change reported", () -> watcher.lastRejection() != null);
            assertTrue(watcher.lastRejection().getMessage().contains("trustDomain"), watcher.lastRejection().getMessage());
            assertTrue(watcher.lastRejection().getMessage().contains("ConfigMap istio-system/istio-canary"),
                    watcher.lastRejection().getMessage());
            assertEquals("second.example", env.mesh().getTrustDomain(), "the previous config stays");

            api.apply(configMap("istio-canary", "trustDomain: third.example"));
            await("fixed", () -> env.mesh().getTrustDomain().equals("third.example"));
            assertNull(watcher.lastRejection());

            api.delete("v1", "ConfigMap", "istio-system", "istio-canary");
            await("defaults", () -> env.mesh().getTrustDomain().equals("cluster.local"));
            watcher.close();
        }
    }
}
