package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.ServerProcess;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * No debug answer gives away what the server was started with: a secret is planted in the
 * environment, in a {@code -D} system property and on the command line of a real
 * pilot-discovery process - which also runs an operator's flight recording of its own, whose
 * events share the recorder with ours - and every GET endpoint of openapi/openapi.yaml (the
 * contract {@code OpenApiContractTest} holds equal to what the server implements) is fetched
 * on each listener that serves it, plus ControlZ; each body is searched byte by byte, so a
 * string inside a binary JFR recording is found too.
 */
class DebugOutputSecretsIT {
    static final Duration START = Duration.ofSeconds(90);
    static final String PROXY = "sidecar~10.9.9.9~contract.default~default.svc.cluster.local";
    static final Pattern CONTROLZ = Pattern.compile("ControlZ available at [^:]+:(\\d+)");

    @Test
    void noDebugAnswerHoldsTheEnvironmentSystemPropertiesOrCommandLine(@TempDir Path dir) throws Exception {
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("environment", "planted-env-" + UUID.randomUUID());
        secrets.put("system property", "planted-prop-" + UUID.randomUUID());
        secrets.put("command line", "planted-arg-" + UUID.randomUUID());
        TestServers.copyBookinfo(dir);
        Path credentials = Files.createDirectories(dir.resolve(secrets.get("command line")));
        List<String> jvm = List.of("-Dmeshpilot.planted=" + secrets.get("system property"),
                "-XX:StartFlightRecording=settings=default,filename=" + dir.resolve("operator.jfr"));
        String[] args = ProcessLifecycleIT.flags(dir, "--credentialsDir", credentials.toString());
        try (ServerProcess server = ServerProcess.jar(List.of(), jvm, Map.of("PLANTED_SECRET", secrets.get("environment")), args)) {
            int controlz = Integer.parseInt(server.await(CONTROLZ, START).group(1)); // logged first
            Map<String, Integer> ports = server.awaitPorts(START);
            server.await(ProcessLifecycleIT.READY, START);
            assertPlanted(server.process().pid(), secrets);

            try (AdsClient proxy = new AdsClient(ports.get("grpc"), PROXY, Map.of("NAMESPACE", "default"))) {
                proxy.subscribe(TypeUrls.CLUSTER, List.of());
                proxy.await(TypeUrls.CLUSTER, Duration.ofSeconds(30));

                List<String> leaks = new ArrayList<>();
                int fetched = 0;
                for (String[] call : calls(ports, controlz)) {
                    HttpResponse<byte[]> r = get(Integer.parseInt(call[0]), call[1]);
                    assertTrue(r.statusCode() < 500, call[1] + " on " + call[0] + ": " + r.statusCode() + " "
                            + new String(r.body(), StandardCharsets.UTF_8));
                    secrets.forEach((where, secret) -> {
                        if (contains(r.body(), secret.getBytes(StandardCharsets.UTF_8))) {
                            leaks.add("the " + where + " secret in " + call[1] + " on port " + call[0]);
                        }
                    });
                    fetched++;
                }
                assertEquals(List.of(), leaks);
                System.out.println("searched " + fetched + " debug answers for the planted secrets");
            }
        }
    }

    /** The secrets did reach the process (Linux's view of it), so their absence below means something. */
    static void assertPlanted(long pid, Map<String, String> secrets) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        assumeTrue(Files.isDirectory(proc), "needs /proc to check the secrets were planted");
        byte[] environ = Files.readAllBytes(proc.resolve("environ"));
        byte[] cmdline = Files.readAllBytes(proc.resolve("cmdline"));
        assertTrue(contains(environ, secrets.get("environment").getBytes(StandardCharsets.UTF_8)));
        assertTrue(contains(cmdline, secrets.get("system property").getBytes(StandardCharsets.UTF_8)));
        assertTrue(contains(cmdline, secrets.get("command line").getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * {port, path} for every documented GET on every listener serving it (with its documented
     * example, else the bare path and again with the connected proxy named), ControlZ's scopes,
     * and the disconnect last since it ends the proxy's stream.
     */
    @SuppressWarnings("unchecked")
    static List<String[]> calls(Map<String, Integer> ports, int controlz) throws IOException {
        Map<String, Object> spec = new Yaml().load(Files.readString(ServerProcess.home().resolve("openapi/openapi.yaml")));
        List<String[]> calls = new ArrayList<>();
        List<String[]> last = new ArrayList<>();
        ((Map<String, Map<String, Object>>) spec.get("paths")).forEach((path, item) -> {
            if (!item.containsKey("get")) {
                return;
            }
            Object example = item.get("x-meshpilot-example");
            List<String> urls = example != null ? List.of((String) example)
                    : path.contains("{") ? List.of() : List.of(path, path + "?proxyID=contract.default");
            assertTrue(!urls.isEmpty(), path + " is templated and has no x-meshpilot-example to call");
            for (String listener : (List<String>) item.get("x-meshpilot-listeners")) {
                for (String url : urls) {
                    String[] call = {Integer.toString(ports.get(listener)), url};
                    (path.equals("/debug/force_disconnect") ? last : calls).add(call);
                }
            }
        });
        calls.add(new String[] {Integer.toString(controlz), "/scopej/"});
        calls.addAll(last);
        return calls;
    }

    static HttpResponse<byte[]> get(int port, String path) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static boolean contains(byte[] haystack, byte[] needle) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return true;
            }
        }
        return false;
    }
}
