package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.SchemaCheck;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Application;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * openapi/openapi.yaml is the contract: every admin endpoint we implement is documented on
 * the listener that serves it, every documented endpoint answers there, and the answers match
 * the documented status codes and schemas.
 */
class OpenApiContractTest {
    @TempDir
    static java.nio.file.Path dir;
    static MeshPilotServer server;
    static AdsClient proxy;
    static Map<String, Object> spec;
    static final Jsonb JSON = JsonbBuilder.create();

    /** Endpoints Helidon serves for us by configuration rather than JAX-RS classes. */
    static final Set<String> PROVIDED = Set.of("GET /metrics monitoring", "GET /health/ready http",
            "GET /health/live http", "GET /openapi http");

    @BeforeAll
    static void start() throws Exception {
        spec = new Yaml().load(Files.readString(java.nio.file.Path.of(System.getProperty("meshpilot.home", "."),
                "openapi/openapi.yaml")));
        // the embedded default config, so the config endpoints answer with real objects
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        // a connected proxy, so the proxy endpoints have something to show
        proxy = new AdsClient(server.ports().get("grpc"),
                "sidecar~10.9.9.9~contract.default~default.svc.cluster.local", Map.of("NAMESPACE", "default"));
        proxy.subscribe(TypeUrls.CLUSTER, List.of());
        proxy.await(TypeUrls.CLUSTER, Duration.ofSeconds(20));
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** "METHOD /path listener" for every JAX-RS method of our applications. */
    static Set<String> implemented() {
        Set<String> out = new TreeSet<>(PROVIDED);
        Map<String, Application> apps = Map.of("http", new HttpApplication(), "monitoring", new MonitoringApplication());
        apps.forEach((listener, app) -> {
            for (Class<?> resource : app.getClasses()) {
                if (resource.getAnnotation(Path.class) == null) {
                    continue; // a provider (filter), not a resource
                }
                String base = resource.getAnnotation(Path.class).value();
                for (Method m : resource.getDeclaredMethods()) {
                    String verb = m.isAnnotationPresent(GET.class) ? "GET" : m.isAnnotationPresent(PUT.class) ? "PUT"
                            : m.isAnnotationPresent(POST.class) ? "POST" : m.isAnnotationPresent(DELETE.class) ? "DELETE" : null;
                    if (verb == null) {
                        continue;
                    }
                    Path sub = m.getAnnotation(Path.class);
                    String path = sub == null ? base : base + "/" + sub.value();
                    out.add(verb + " " + path.replace("//", "/") + " " + listener);
                }
            }
        });
        return out;
    }

    @SuppressWarnings("unchecked")
    static Set<String> documented() {
        Set<String> out = new TreeSet<>();
        ((Map<String, Map<String, Object>>) spec.get("paths")).forEach((path, item) -> {
            List<String> listeners = (List<String>) item.get("x-meshpilot-listeners");
            assertTrue(listeners != null && !listeners.isEmpty(), path + " must say which listener serves it");
            for (String verb : List.of("get", "put", "post", "delete", "patch")) {
                if (item.containsKey(verb)) {
                    listeners.forEach(l -> out.add(verb.toUpperCase() + " " + path + " " + l));
                }
            }
        });
        return out;
    }

    @Test
    void everyImplementedEndpointIsDocumentedAndViceVersa() {
        assertEquals(implemented(), documented());
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyDocumentedEndpointAnswersAsDocumented() {
        SchemaCheck schemas = new SchemaCheck(spec);
        Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) spec.get("paths");
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (String entry : documented()) {
            String[] parts = entry.split(" ");
            if (!parts[0].equals("GET")) {
                continue; // writes are exercised against their documented responses in ConfigApiTest
            }
            String path = parts[1];
            if (path.equals("/debug/force_disconnect")) {
                continue; // a GET that ends the proxy's stream, as istiod's: DebugJsonShapesTest calls it
            }
            if (path.equals("/debug/clusterz")) {
                continue; // istiod's 400 without Kubernetes (OperatorPagesTest); KubeMulticlusterTest checks the list
            }
            int port = server.ports().get(parts[2]);
            Object example = paths.get(path).get("x-meshpilot-example");
            String url = example != null ? (String) example : path;
            assertTrue(url != null, path + " is templated: it needs an x-meshpilot-example to call");
            Http.Reply reply = Http.get(port, url);
            assertTrue(reply.status() >= 200 && reply.status() < 300,
                    entry + " should answer 2xx on the embedded config, got " + reply.status() + ": " + reply.body());
            Map<String, Object> op = (Map<String, Object>) paths.get(path).get(parts[0].toLowerCase());
            Map<String, Object> responses = (Map<String, Object>) op.get("responses");
            Object documentedResponse = responses.get(Integer.toString(reply.status()));
            if (documentedResponse == null) {
                problems.add(entry + ": status " + reply.status() + " is not documented");
                continue;
            }
            Map<String, Object> response = schemas.resolve((Map<String, Object>) documentedResponse);
            Map<String, Object> content = (Map<String, Object>) response.get("content");
            if (content != null && content.containsKey("application/json")) {
                assertTrue(reply.contentType().startsWith("application/json"), entry + ": " + reply.contentType());
                Map<String, Object> schema = (Map<String, Object>) ((Map<String, Object>) content.get("application/json"))
                        .get("schema");
                Object body = JSON.fromJson(reply.body(), Object.class);
                schemas.check(body, schema).forEach(p -> problems.add(entry + ": " + p));
            } else if (content != null && content.containsKey("text/plain")) {
                assertTrue(reply.contentType().startsWith("text/plain"), entry + ": " + reply.contentType());
            }
            checked++;
        }
        assertEquals(List.of(), problems);
        assertNotEquals(0, checked);
    }

    @Test
    void theServedDocumentIsTheContract() {
        Http.Reply served = Http.get(server.ports().get("http"), "/openapi");
        assertEquals(200, served.status());
        Map<String, Object> doc = new Yaml().load(served.body());
        assertEquals(((Map<?, ?>) spec.get("paths")).keySet(), ((Map<?, ?>) doc.get("paths")).keySet());
        assertEquals(((Map<?, ?>) spec.get("info")).get("title"), ((Map<?, ?>) doc.get("info")).get("title"));
    }
}
