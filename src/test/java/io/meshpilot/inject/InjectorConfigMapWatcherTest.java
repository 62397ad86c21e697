package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The injector's settings from the cluster's istio-sidecar-injector ConfigMap over the API
 * server stand-in: loaded, changed, a bad change keeps the previous settings and says where,
 * a deleted ConfigMap means the chart's defaults.
 */
class InjectorConfigMapWatcherTest {
    @TempDir
    Path dir;

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    /** The ConfigMap as istiod's chart writes it: config as YAML, values as JSON. */
    static String configMap(String config, String values) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: istio-sidecar-injector-canary, namespace: istio-system}
                data:
                  config: |
                %s
                  values: |
                %s
                """.formatted(config.indent(4).stripTrailing(), values.indent(4).stripTrailing());
    }

    @Test
    void theConfigMapIsWatchedAndABadChangeKeepsThePreviousSettings() throws Exception {
        assertEquals("istio-sidecar-injector", InjectorConfigMapWatcher.configMapName("default"));
        assertEquals("istio-sidecar-injector-canary", InjectorConfigMapWatcher.configMapName("canary"));
        try (FakeApiServer api = FakeApiServer.start();
             KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000))) {
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            api.apply(configMap("policy: disabled\ntemplates:\n  sidecar: \"{{ ... }}\"\n  gateway: \"{{ ... }}\"\n",
                    "{\"global\":{\"hub\":\"example.com/istio\",\"tag\":\"1.27.3\"}}"));
            InjectorConfigMapWatcher watcher = new InjectorConfigMapWatcher(client, "istio-system", "canary");
            assertTrue(watcher.start().contains("istio-system/istio-sidecar-injector-canary"));
            assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
            await("first settings", () -> watcher.get().config().policy().equals("disabled"));
            assertEquals("example.com/istio", watcher.get().values().string("global.hub"));
            assertEquals("15020", watcher.get().values().string("global.proxy.statusPort"), "chart defaults fill the rest");

            api.apply(configMap("policy: enabled\n", "{\"global\":{\"tag\":\"1.27.4\"}}"));
            await("changed settings", () -> watcher.get().values().string("global.tag").equals("1.27.4"));
            assertEquals("enabled", watcher.get().config().policy());

            api.apply(configMap("policy: disabled\nneverInjectSelector:\n- matchExpressions:\n  - {key: a, operator: Near}\n",
                    "{}"));
            await("the bad change reported", () -> watcher.lastRejection() != null);
            assertTrue(watcher.lastRejection().contains("key config"), watcher.lastRejection());
            assertTrue(watcher.lastRejection().contains("neverInjectSelector[0]"), watcher.lastRejection());
            assertEquals("enabled", watcher.get().config().policy(), "the previous settings stay");

            api.apply(configMap("policy: enabled\n", "not json"));
            await("the bad values reported", () -> watcher.lastRejection().contains("key values"));
            assertEquals("1.27.4", watcher.get().values().string("global.tag"));

            api.apply(configMap("policy: disabled\n", "{}"));
            await("fixed", () -> watcher.get().config().policy().equals("disabled"));
            assertNull(watcher.lastRejection());

            api.delete("v1", "ConfigMap", "istio-system", "istio-sidecar-injector-canary");
            await("defaults", () -> watcher.get().config().policy().equals("enabled"));
            assertEquals("docker.io/istio", watcher.get().values().string("global.hub"));
        }
    }
}
