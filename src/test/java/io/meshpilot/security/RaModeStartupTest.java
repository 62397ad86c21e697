package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RA mode that cannot work stops start-up with one line saying what is missing. */
class RaModeStartupTest {
    @TempDir
    Path dir;

    private static String failure(List<String> flags, Map<String, String> env) {
        MeshPilotServer.StartupFailure f = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> MeshPilotServer.start(TestServers.args(flags, env)).close());
        assertFalse(f.getMessage().contains("\n"), "one line: " + f.getMessage());
        return f.getMessage();
    }

    @Test
    void raModeWithoutKubernetesFailsStartUp() {
        String message = failure(TestServers.flags(dir),
                Map.of("EXTERNAL_CA", "ISTIOD_RA_KUBERNETES_API", "K8S_SIGNER", "example.com/s"));
        assertTrue(message.startsWith("ca: EXTERNAL_CA=ISTIOD_RA_KUBERNETES_API needs Kubernetes mode"), message);
    }

    @Test
    void raModeWithoutASignerFailsStartUp() {
        try (FakeApiServer api = FakeApiServer.start()) {
            api.installIstioCrds();
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
            String message = failure(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                    "--registries", "Mock"), Map.of("EXTERNAL_CA", "ISTIOD_RA_KUBERNETES_API"));
            assertTrue(message.startsWith("ca: EXTERNAL_CA=ISTIOD_RA_KUBERNETES_API needs K8S_SIGNER"), message);
        }
    }
}
