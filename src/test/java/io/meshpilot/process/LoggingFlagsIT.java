package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.ServerProcess;
import io.meshpilot.xds.TypeUrls;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's logging flags on the real process: {@code --log_as_json} lines, per-scope levels,
 * a level changed at run time through ControlZ's {@code /scopej/}, and bad values refused at
 * start. Before these flags were read, pilot-discovery ignored all of them ("unknown argument
 * ignored") and wrote SimpleFormatter text.
 */
class LoggingFlagsIT {
    static final Duration START = ProcessLifecycleIT.START;
    static final Pattern TIME = Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
    static final Pattern CONTROLZ = Pattern.compile("ControlZ available at 127\\.0\\.0\\.1:(\\d+)");
    static final Pattern ADS_DEBUG_REQ = Pattern.compile("^\\{\"level\":\"debug\",\"time\":\"[^\"]+\",\"scope\":\"ads\",\"msg\":\"ADS:\\w+: REQ ");
    static final String NODE = "sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local";

    /** Every output line as a JSON object with istiod's keys; fails naming the first line that is not. */
    static List<JsonObject> jsonLines(ServerProcess p) {
        return p.output().lines().map(line -> {
            JsonObject o;
            try {
                o = JsonParser.parseString(line).getAsJsonObject();
            } catch (JsonParseException | IllegalStateException e) {
                throw new AssertionError("not one JSON object: " + line + "\noutput:\n" + p.output(), e);
            }
            assertTrue(o.has("level") && o.has("time") && o.has("msg"), line);
            assertTrue(TIME.matcher(o.get("time").getAsString()).matches(), line);
            assertTrue(List.of("debug", "info", "warn", "error").contains(o.get("level").getAsString()), line);
            return o;
        }).toList();
    }

    @Test
    void jsonLinesAndAScopeLevelChangedAtRunTime(@TempDir Path dir) throws Exception {
        try (ServerProcess p = ServerProcess.jar(Map.of(), ProcessLifecycleIT.flags(dir, "--log_as_json"))) {
            Matcher z = p.await(CONTROLZ, START);
            int controlz = Integer.parseInt(z.group(1));
            Map<String, Integer> ports = p.awaitPorts(START);
            p.await(ProcessLifecycleIT.READY, START);

            try (AdsClient ads = new AdsClient(ports.get("grpc"), NODE, Map.of())) {
                ads.subscribe(TypeUrls.CLUSTER, List.of());
                assertNotNull(ads.await(TypeUrls.CLUSTER, START));
                // the request was logged, if at all, before its response was sent
                assertFalse(p.output().contains("REQ "), "ads is at info until changed:\n" + p.output());

                Http.Reply put = Http.send(controlz, "/scopej/ads", "PUT", "{\"name\":\"ads\",\"output_level\":\"debug\"}", null);
                assertEquals(202, put.status(), put.body());
                ads.subscribe(TypeUrls.LISTENER, List.of());
                assertNotNull(ads.await(TypeUrls.LISTENER, START));
                p.await(ADS_DEBUG_REQ, START);
            }
            JsonObject ads = JsonParser.parseString(Http.get(controlz, "/scopej/ads").body()).getAsJsonObject();
            assertEquals("debug", ads.get("output_level").getAsString());

            List<JsonObject> lines = jsonLines(p);
            assertTrue(lines.stream().anyMatch(o -> o.get("msg").getAsString().startsWith("ready: started in")
                    && !o.has("scope")), "default-scope lines carry no scope key, as istiod's");
            assertTrue(lines.stream().anyMatch(o -> o.has("scope") && o.get("scope").getAsString().equals("ads")
                    && o.get("level").getAsString().equals("info")), p.output());
        }
    }

    @Test
    void outputLevelFlagGivesAdsDebugAndNoDefaultInfo(@TempDir Path dir) throws Exception {
        // default:warn hides the info line that names the bound ports, so the test chooses them;
        // another process may take a chosen port before the server binds it, hence the retries.
        for (int attempt = 1; ; attempt++) {
            int grpc;
            int http;
            try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                grpc = a.getLocalPort();
                http = b.getLocalPort();
            }
            String[] args = ProcessLifecycleIT.flags(dir, "--log_as_json", "--log_output_level=ads:debug,default:warn");
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--grpcAddr")) {
                    args[i + 1] = "127.0.0.1:" + grpc;
                } else if (args[i].equals("--httpAddr")) {
                    args[i + 1] = "127.0.0.1:" + http;
                }
            }
            try (ServerProcess p = ServerProcess.jar(Map.of(), args)) {
                long deadline = System.nanoTime() + START.toNanos();
                while (!ready(http)) {
                    if (!p.process().isAlive() && attempt < 3 && p.output().contains("Address already in use")) {
                        break;
                    }
                    assertTrue(p.process().isAlive() && System.nanoTime() < deadline, "not ready:\n" + p.output());
                    Thread.sleep(100);
                }
                if (!p.process().isAlive()) {
                    continue;
                }
                try (AdsClient ads = new AdsClient(grpc, NODE, Map.of())) {
                    ads.subscribe(TypeUrls.CLUSTER, List.of());
                    assertNotNull(ads.await(TypeUrls.CLUSTER, START));
                    p.await(ADS_DEBUG_REQ, START);
                }
                List<JsonObject> lines = jsonLines(p);
                assertFalse(lines.stream().anyMatch(o -> !o.has("scope") && o.get("level").getAsString().equals("info")),
                        "default:warn: no default info line\n" + p.output());
                return;
            }
        }
    }

    private static boolean ready(int port) {
        try {
            return Http.get(port, "/ready").status() == 200;
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Test
    void badValuesStopStartUpWithOneLineNamingTheFlag(@TempDir Path dir) throws Exception {
        Map<String, String> bad = Map.of(
                "--log_output_level", "ads:loud",
                "--log_stacktrace_level", "a:b:c",
                "--log_as_json", "maybe",
                "--log_target", dir.resolve("no/such/dir/pilot.log").toString(),
                "--ctrlz_port", "70000");
        for (var e : bad.entrySet()) {
            String flag = e.getKey();
            List<String> args = new ArrayList<>(List.of(ProcessLifecycleIT.flags(dir)));
            int given = args.indexOf(flag);
            if (given >= 0) { // picocli takes a single-value flag once
                args.subList(given, given + 2).clear();
            }
            args.add(flag + "=" + e.getValue());
            try (ServerProcess p = ServerProcess.jar(Map.of(), args.toArray(String[]::new))) {
                assertEquals(2, p.awaitExit(START), p.output());
                assertTrue(p.lastLine().startsWith("pilot-discovery: invalid arguments: " + flag + " "),
                        flag + ": " + p.output());
                assertFalse(p.output().contains("started in"), "nothing started:\n" + p.output());
            }
        }
    }
}
