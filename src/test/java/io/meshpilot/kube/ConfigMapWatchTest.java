package io.meshpilot.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link KubeClient#watchConfigMap} on the controller kit, over the API server stand-in. */
class ConfigMapWatchTest {
    @TempDir
    Path dir;

    @Test
    void aHandlerThatFailsIsCalledAgainWithTheSameDataAndADeletionIsReported() throws Exception {
        try (FakeApiServer api = FakeApiServer.start()) {
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
            api.apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\n"
                    + "data: {mesh: \"a: 1\"}\n");
            AtomicInteger calls = new AtomicInteger();
            List<String> seen = new CopyOnWriteArrayList<>();
            try (KubeClient client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 100, 100))) {
                client.watchConfigMap("istio-system", "istio", (data, deleted) -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("a handler that fails once");
                    }
                    seen.add(data + (deleted ? " deleted" : ""));
                });
                assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
                Await.until("the data handed over again after the failure", Duration.ofSeconds(20),
                        () -> seen.contains("{mesh=a: 1}"));
                api.delete("v1", "ConfigMap", "istio-system", "istio");
                Await.until("the deletion handed over", Duration.ofSeconds(20), () -> seen.contains("{} deleted"));
            }
        }
    }
}
