package io.meshpilot.testing;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts MeshPilot in this JVM exactly as {@code pilot-discovery discovery} does (same flag
 * parsing, same start path), on ephemeral loopback ports, with mesh files in a test folder.
 */
public final class TestServers {
    private TestServers() {
    }

    /** Flags for ephemeral loopback listeners plus mesh files under {@code dir}, then {@code extra}. */
    public static List<String> flags(Path dir, String... extra) {
        List<String> f = new ArrayList<>(List.of(
                "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0",
                "--meshConfig", dir.resolve("mesh").toString(),
                "--networksConfig", dir.resolve("meshNetworks").toString(),
                "--configDir", dir.resolve("config").toString(),
                "--credentialsDir", dir.resolve("credentials").toString(),
                // REST writes kept per test, never in the installation's var/config
                "--configStateDir", dir.resolve("state").toString(),
                // each server its own CA root; EC keys are made in milliseconds, RSA 2048 can take a second
                "--caStateDir", dir.resolve("ca").toString(), "--caKeyType", "EC"));
        f.addAll(List.of(extra));
        return f;
    }

    /**
     * A server in Kubernetes mode on the cluster of {@code kubeconfig} with the Kubernetes
     * registry: every config from the cluster (no {@code --configDir}), as istiod reads it.
     */
    public static MeshPilotServer startKubernetes(Path dir, Path kubeconfig) throws MeshPilotServer.StartupFailure {
        List<String> f = flags(dir, "--kubeconfig", kubeconfig.toString(), "--registries", "Kubernetes");
        int at = f.indexOf("--configDir");
        f.subList(at, at + 2).clear();
        return MeshPilotServer.start(args(f, Map.of()));
    }

    /** Parses flags through the real CLI, with {@code env} as the whole environment. */
    /**
     * {@link #flags} for a server in Kubernetes mode reading everything from the cluster of
     * {@code kubeconfig}: the Kubernetes registry, no {@code --configDir} or {@code --credentialsDir}.
     */
    public static List<String> kubernetesFlags(Path dir, Path kubeconfig) {
        List<String> flags = new ArrayList<>(flags(dir, "--kubeconfig", kubeconfig.toString(), "--registries", "Kubernetes"));
        for (String flag : List.of("--configDir", "--credentialsDir")) {
            int at = flags.indexOf(flag);
            flags.remove(at + 1);
            flags.remove(at);
        }
        return flags;
    }

    public static PilotArgs args(List<String> flags, Map<String, String> env) {
        return Main.parseDiscoveryArgs(flags.toArray(String[]::new), env::get);
    }

    public static MeshPilotServer start(Path dir, String... extra) throws MeshPilotServer.StartupFailure {
        return MeshPilotServer.start(args(flags(dir, extra), Map.of()));
    }

    /** Copies the embedded default bookinfo config into {@code dir}/config (what {@link #flags} reads). */
    public static void copyBookinfo(Path dir) throws IOException {
        Path config = Files.createDirectories(dir.resolve("config"));
        Path home = Path.of(System.getProperty("meshpilot.home", "."));
        try (var files = Files.list(home.resolve("etc/config/bookinfo"))) {
            for (Path f : files.toList()) {
                Files.copy(f, config.resolve(f.getFileName()));
            }
        }
    }

    /** With environment variables (PILOT_* tunables) as the only environment. */
    public static MeshPilotServer start(Path dir, Map<String, String> env, String... extra)
            throws MeshPilotServer.StartupFailure {
        return MeshPilotServer.start(args(flags(dir, extra), env));
    }
}
