package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Registries and config sources are composed from --registries, --configDir and the mesh
 * config's configSources, as istiod chooses them; what this build cannot run fails start-up
 * with one line naming it, and the JVM can start a server right after.
 */
class ConfigAndRegistryChoiceTest {
    @TempDir
    Path dir;

    private MeshPilotServer.StartupFailure failure(List<String> flags) {
        MeshPilotServer.StartupFailure f = assertThrows(MeshPilotServer.StartupFailure.class,
                () -> MeshPilotServer.start(TestServers.args(flags, Map.of())).close());
        assertFalse(f.getMessage().contains("\n"), "one line: " + f.getMessage());
        return f;
    }

    private Path kubeconfig() throws Exception {
        return Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
    }

    @Test
    void aKubeconfigWithoutAClusterFailsStartUpNamingIt() throws Exception {
        Path kubeconfig = kubeconfig();
        MeshPilotServer.StartupFailure f = failure(TestServers.flags(dir, "--kubeconfig", kubeconfig.toString(),
                "--registries", "Mock"));
        assertTrue(f.getMessage().startsWith("kube-client: kubeconfig " + kubeconfig), f.getMessage());
        // nothing of the failed server is left holding the JVM's one HTTP host
        try (MeshPilotServer ok = TestServers.start(dir)) {
            assertTrue(ok.server().components().readiness().ready());
        }
    }

    @Test
    void meshConfigSourcesDecideWhereConfigComesFrom() throws Exception {
        Path other = Files.createDirectories(dir.resolve("other-config"));
        Files.writeString(other.resolve("se.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: from-fs-source, namespace: default}
                spec:
                  hosts: [fs.example.com]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.9.9.9}]
                """);
        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/se.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: from-config-dir, namespace: default}
                spec:
                  hosts: [dir.example.com]
                  ports: [{number: 80, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.9.9.8}]
                """);
        Files.writeString(dir.resolve("mesh"), "configSources:\n- address: fs://" + other.toAbsolutePath() + "\n");
        try (MeshPilotServer s = TestServers.start(dir)) {
            var services = s.server().components().discovery().currentPushContext().services().keySet();
            assertTrue(services.contains("fs.example.com"), services.toString());
            assertFalse(services.contains("dir.example.com"), "configSources win over --configDir, as in istiod");
            assertEquals(other.toAbsolutePath(), s.server().components().configs().files().root().toAbsolutePath());
        }

        Files.writeString(dir.resolve("mesh"), "configSources:\n- address: k8s://\n");
        MeshPilotServer.StartupFailure f = failure(TestServers.flags(dir));
        assertTrue(f.getMessage().startsWith("config-stores: mesh config configSources k8s://: no Kubernetes cluster "
                + "is configured"), f.getMessage());

        Files.writeString(dir.resolve("mesh"), "configSources:\n- address: xds://istiod.example:15010\n");
        f = failure(TestServers.flags(dir));
        assertTrue(f.getMessage().contains("xds://istiod.example:15010: unsupported config source"), f.getMessage());
    }
}
