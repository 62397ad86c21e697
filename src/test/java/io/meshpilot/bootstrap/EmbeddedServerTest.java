package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.admin.DebugResourceNames;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.StartupRecorder;
import io.meshpilot.mesh.MeshConfigException;
import io.meshpilot.mesh.MeshWatcher;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One embedded server, started as the CLI starts it, checked from the outside over HTTP. */
class EmbeddedServerTest {
    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static final Jsonb JSON = JsonbBuilder.create();

    @BeforeAll
    static void start() throws Exception {
        Files.writeString(dir.resolve("mesh"), "trustDomain: first.example\n");
        server = TestServers.start(dir);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static int port(String listener) {
        return server.ports().get(listener);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> json(Http.Reply r) {
        return JSON.fromJson(r.body(), Map.class);
    }

    @Test
    void componentsStartInDesignOrder() {
        List<StartupRecorder.ComponentStart> starts = server.server().components().recorder().starts();
        // istiod's NewServer() order: every component's own step (named after it), each once
        List<Component> started = starts.stream().filter(s -> s.name().equals(s.component().label()))
                .map(StartupRecorder.ComponentStart::component).toList();
        assertEquals(Arrays.asList(Component.values()), started, "the enum is the documented order");
        // and every other init step and start function, timed under its own name
        assertEquals(List.of("args", "environment", "kube-client", "mesh-watchers", "ca", "config-stores",
                "config-validation", "sidecar-injector", "discovery-init", "service-registries", "discovery-server",
                "registry-event-handlers", "kube-controllers", "servers", "readiness-probes", "config-sync",
                "first-push", "metrics", "serving", "start-functions"),
                starts.stream().map(StartupRecorder.ComponentStart::name).toList());
    }

    @Test
    @SuppressWarnings("unchecked")
    void serverInfoReportsTheBoundPorts() throws Exception {
        Http.Reply r = Http.get(port("http"), "/api/v1/server");
        assertEquals(200, r.status());
        Map<String, Object> info = json(r);
        assertEquals("embedded", info.get("mode"));
        Map<String, Map<String, Object>> listeners = (Map<String, Map<String, Object>>) info.get("listeners");
        assertEquals(Set.of("http", "grpc", "grpc-secure", "monitoring", "webhook"), listeners.keySet());
        // in start-up order, as the start-up log line lists them (bin/load reads that line)
        assertEquals(List.of("http", "grpc", "grpc-secure", "monitoring", "webhook"), List.copyOf(server.ports().keySet()));
        for (var e : listeners.entrySet()) {
            int p = ((Number) e.getValue().get("port")).intValue();
            assertEquals(server.ports().get(e.getKey()), p);
            assertNotEquals(0, p, e.getKey() + " was asked for :0 and must report the real port");
            try (Socket s = new Socket("127.0.0.1", p)) {
                assertTrue(s.isConnected(), e.getKey() + " accepts connections on " + p);
            }
        }
        assertEquals(true, info.get("ready"));
        List<Map<String, Object>> comps = (List<Map<String, Object>>) info.get("components");
        assertEquals("args", comps.get(0).get("name"));
    }

    @Test
    void readinessAndHealthAgree() {
        Http.Reply ready = Http.get(port("http"), "/ready");
        assertEquals(200, ready.status());
        assertEquals(Map.of("status", "ready", "failing", List.of()), json(ready));
        Http.Reply health = Http.get(port("http"), "/health/ready");
        assertEquals(200, health.status());
        assertEquals("UP", json(health).get("status"));
        assertEquals(200, Http.get(port("http"), "/health/live").status());
    }

    @Test
    void listenersServeWhatIstiodServesThere() {
        assertEquals(200, Http.get(port("monitoring"), "/metrics").status());
        assertEquals(404, Http.get(port("http"), "/metrics").status(), "/metrics belongs to the monitoring port");
        assertEquals(200, Http.get(port("monitoring"), "/version").status());
        assertEquals(404, Http.get(port("monitoring"), "/health/ready").status(), "probes belong to the http port");
        for (String listener : List.of("http", "monitoring")) {
            Http.Reply list = Http.get(port(listener), "/debug/list");
            assertEquals(200, list.status());
            assertEquals(DebugResourceNames.names(), JSON.fromJson(list.body(), List.class));
        }
    }

    @Test
    void metricsParseStrictly() {
        Http.Reply r = Http.get(port("monitoring"), "/metrics");
        var families = PrometheusTextParser.parse(r.body());
        assertTrue(families.containsKey("istiod_uptime_seconds"), families.keySet().toString());
        assertTrue(families.containsKey("process_cpu_seconds_total"), families.keySet().toString());
        assertTrue(families.containsKey("process_open_fds"), families.keySet().toString());
        assertTrue(families.containsKey("memory_usedHeap_bytes"), "JVM metrics: " + families.keySet());
        var startup = families.get("meshpilot_component_start_seconds");
        assertTrue(startup.samples().stream().anyMatch(s -> "mesh-watchers".equals(s.labels().get("component"))));
        assertEquals("gauge", families.get("pilot_info").type());
    }

    @Test
    void istiodCountersAreTypedCounterUnderTheirOwnNames() {
        IstioCounter.of("meshpilot_test_typed_counter", "kind", "a counter for this test")
                .increment("x");
        var families = PrometheusTextParser.parse(Http.get(port("monitoring"), "/metrics").body());
        var counter = families.get("meshpilot_test_typed_counter");
        assertEquals("counter", counter == null ? null : counter.type(), families.keySet().toString());
        assertEquals(1.0, counter.samples().get(0).value());
        assertFalse(families.containsKey("meshpilot_test_typed_counter_total"), "no _total added, as istiod exports");
        long counters = families.values().stream().filter(f -> f.type().equals("counter")
                && IstioCounter.isCounter(f.name())).count();
        assertTrue(counters >= 1);
        families.values().stream().filter(f -> IstioCounter.isCounter(f.name()))
                .forEach(f -> assertEquals("counter", f.type(), f.name()));
        assertEquals("gauge", families.get("istiod_uptime_seconds").type(), "gauges stay gauges");
    }

    @Test
    void meshConfigChangesApplyAndBadChangesAreRejected() throws Exception {
        MeshWatcher watcher = server.server().components().meshWatcher();
        LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
        MeshWatcher.Listener l = new MeshWatcher.Listener() {
            @Override
            public void applied(MeshWatcher.Kind kind, Path file) {
                events.add(kind);
            }

            @Override
            public void rejected(MeshWatcher.Kind kind, Path file, MeshConfigException error) {
                events.add(error);
            }
        };
        watcher.addListener(l);
        try {
            int http = port("http");
            assertTrue(Http.get(http, "/debug/mesh").body().contains("\"trustDomain\":\"first.example\""));

            // a valid change: atomic replace, as editors and Kubernetes do
            Path tmp = dir.resolve(".mesh.tmp");
            Files.writeString(tmp, "trustDomain: second.example\nrootNamespace: ops\n");
            Files.move(tmp, dir.resolve("mesh"), StandardCopyOption.ATOMIC_MOVE);
            assertEquals(MeshWatcher.Kind.MESH, events.poll(30, TimeUnit.SECONDS));
            String mesh = Http.get(http, "/debug/mesh").body();
            assertTrue(mesh.contains("\"trustDomain\":\"second.example\""), mesh);
            assertTrue(mesh.contains("\"rootNamespace\":\"ops\""), mesh);

            // an invalid change: logged with file and line, previous config stays
            Files.writeString(dir.resolve("mesh"), "trustDomain: third.example\nproxyListenPort: nope\n");
            Object ev = events.poll(30, TimeUnit.SECONDS);
            assertTrue(ev instanceof MeshConfigException, String.valueOf(ev));
            MeshConfigException err = (MeshConfigException) ev;
            assertEquals(2, err.line());
            assertTrue(err.file().endsWith("mesh"));
            assertEquals(mesh, Http.get(http, "/debug/mesh").body(), "the previous mesh config stays in force");
            assertFalse(Http.get(http, "/debug/mesh").body().contains("third.example"));
            assertEquals(err, watcher.lastRejection());
        } finally {
            watcher.removeListener(l);
        }
    }
}
