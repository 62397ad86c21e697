package io.meshpilot.testing.kube;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real kubectl binary run as a process against a kubeconfig: output to files, a bounded wait,
 * its own HOME (so its discovery cache is the test's own).
 */
public record Kubectl(Path binary, Path kubeconfig, Path workDir) {
    private static final long TIMEOUT_SECONDS = 60;

    /** What one run printed and returned. */
    public record Result(int exit, String stdout, String stderr) {
        public Result ok() {
            if (exit != 0) {
                throw new AssertionError("kubectl failed (exit " + exit + "): " + stderr + stdout);
            }
            return this;
        }
    }

    /** kubectl on the PATH, if any. */
    public static Optional<Path> onPath() {
        String path = System.getenv().getOrDefault("PATH", "");
        return Stream.of(path.split(File.pathSeparator)).map(p -> Path.of(p, "kubectl"))
                .filter(Files::isExecutable).findFirst();
    }

    /** kubectl on the PATH against the API stand-in {@code api}: its kubeconfig and kubectl's work directory under {@code dir}. */
    public static Kubectl against(FakeApiServer api, Path dir) {
        return new Kubectl(onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH")),
                api.writeKubeconfig(dir), dir.resolve("kubectl"));
    }

    /** The Google Cloud SDK's versioned kubectl binaries ({@code kubectl.1.27} ...), oldest first. */
    public static List<Path> cloudSdkVersions() {
        List<Path> out = new ArrayList<>();
        for (String root : List.of("/usr/lib/google-cloud-sdk/bin", "/opt/google-cloud-sdk/bin",
                "/usr/share/google-cloud-sdk/bin")) {
            Path dir = Path.of(root);
            if (Files.isDirectory(dir)) {
                try (Stream<Path> files = Files.list(dir)) {
                    files.filter(f -> f.getFileName().toString().matches("kubectl\\.1\\.\\d+"))
                            .filter(Files::isExecutable)
                            .sorted(Comparator.comparingInt(
                                    f -> Integer.parseInt(f.getFileName().toString().substring("kubectl.1.".length()))))
                            .forEach(out::add);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            if (!out.isEmpty()) {
                break;
            }
        }
        return out;
    }

    public Result run(String... args) {
        return runWithInput(null, args);
    }

    /** Runs kubectl with {@code stdin} (may be null) as its standard input. */
    public Result runWithInput(String stdin, String... args) {
        try {
            Files.createDirectories(workDir);
            Path home = Files.createDirectories(workDir.resolve("home"));
            String stamp = Long.toString(System.nanoTime());
            Path out = workDir.resolve("kubectl-" + stamp + ".out");
            Path err = workDir.resolve("kubectl-" + stamp + ".err");
            List<String> cmd = new ArrayList<>();
            cmd.add(binary.toString());
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().put("KUBECONFIG", kubeconfig.toString());
            pb.environment().put("HOME", home.toString());
            if (stdin != null) {
                Path in = workDir.resolve("kubectl-" + stamp + ".in");
                Files.writeString(in, stdin);
                pb.redirectInput(in.toFile());
            }
            Process p = pb.start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in "
                        + TIMEOUT_SECONDS + " s; stderr: " + Files.readString(err));
            }
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
