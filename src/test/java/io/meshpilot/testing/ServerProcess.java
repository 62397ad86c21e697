package io.meshpilot.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real pilot-discovery process (the packaged jar, or bin/pilot-discovery), with its output
 * collected line by line so tests wait for what it says instead of sleeping.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Pattern SERVERS_LINE = Pattern.compile("component=servers started in .*?: (.*?) grpcTransport");

    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> all = Collections.synchronizedList(new ArrayList<>());

    private final Thread reader;

    private ServerProcess(Process process) {
        this.process = process;
        this.reader = Thread.ofPlatform().daemon().name("server-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    all.add(line);
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
    }

    /** {@code java -jar target/meshpilot.jar <args>}. */
    public static ServerProcess jar(Map<String, String> env, String... args) throws IOException {
        return jar(List.of(), env, args);
    }

    /** {@code <launcher...> java -jar target/meshpilot.jar <args>}: e.g. setpriv, to run with fewer privileges. */
    public static ServerProcess jar(List<String> launcher, Map<String, String> env, String... args) throws IOException {
        return jar(launcher, List.of(), env, args);
    }

    /** {@code <launcher...> java <jvmOptions...> -jar target/meshpilot.jar <args>}: e.g. system properties. */
    public static ServerProcess jar(List<String> launcher, List<String> jvmOptions, Map<String, String> env,
                                    String... args) throws IOException {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("--enable-native-access=ALL-UNNAMED");
        if (Runtime.version().feature() >= 23) {
            cmd.add("--sun-misc-unsafe-memory-access=allow");
        }
        cmd.addAll(jvmOptions);
        cmd.add("-Dmeshpilot.home=" + home());
        cmd.add("-jar");
        cmd.add(System.getProperty("meshpilot.jar", home().resolve("target/meshpilot.jar").toString()));
        cmd.addAll(List.of(args));
        return start(cmd, env);
    }

    /** {@code bin/pilot-discovery <args>}: the README's run command. */
    public static ServerProcess script(Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(home().resolve("bin/pilot-discovery").toString());
        cmd.addAll(List.of(args));
        return start(cmd, env);
    }

    private static ServerProcess start(List<String> cmd, Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("KUBECONFIG");
        pb.environment().remove("KUBERNETES_SERVICE_HOST");
        pb.environment().putAll(env);
        return new ServerProcess(pb.start());
    }

    public static Path home() {
        return Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
    }

    /** Waits for a line matching {@code pattern}; fails with the output so far. */
    public Matcher await(Pattern pattern, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    return m;
                }
            } else if (!process.isAlive() && lines.isEmpty()) {
                break;
            }
        }
        throw new AssertionError("no line matching " + pattern + " within " + timeout + "; output:\n" + output());
    }

    /** Waits until the servers component logged its bound ports; returns them by listener. */
    public Map<String, Integer> awaitPorts(Duration timeout) throws InterruptedException {
        Matcher m = await(SERVERS_LINE, timeout);
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (String kv : m.group(1).trim().split(" ")) {
            String[] p = kv.split("=");
            ports.put(p[0], Integer.parseInt(p[1]));
        }
        return ports;
    }

    public String output() {
        synchronized (all) {
            return String.join("\n", all);
        }
    }

    /** The last non-blank output line (the one-line failure reason). */
    public String lastLine() {
        synchronized (all) {
            for (int i = all.size() - 1; i >= 0; i--) {
                if (!all.get(i).isBlank()) {
                    return all.get(i);
                }
            }
        }
        return "";
    }

    public Process process() {
        return process;
    }

    /** Waits for exit; returns the exit code, or fails with the output. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process did not exit within " + timeout + "; output:\n" + output());
        }
        reader.join(5000); // the last lines, e.g. the failure reason
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
