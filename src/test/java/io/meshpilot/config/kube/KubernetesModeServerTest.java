package io.meshpilot.config.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.xds.TypeUrls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole server in Kubernetes mode (--kubeconfig to the API server stand-in): it becomes
 * ready once the cluster's config is listed, a real ADS client gets routes from a
 * VirtualService applied to the cluster and the change when it is re-applied, REST writes
 * land in the API server and a stale one gets the API server's 409.
 */
class KubernetesModeServerTest {
    static final String NAME = "echo.test.svc.cluster.local:7070";
    static final String VS_PATH = "/api/v1/configs/networking.istio.io/v1/virtualservices/test/";

    @TempDir
    Path dir;
    FakeApiServer api;

    @BeforeEach
    void startApiServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: test}\n");
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
    }

    @AfterEach
    void stopApiServer() {
        api.stop();
    }

    static String echoServiceEntry() {
        return """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  endpoints: [{address: 127.0.0.1}]
                """;
    }

    static String echoRoute(String user) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo]
                  http:
                  - match: [{headers: {user: {exact: %s}}}]
                    route: [{destination: {host: echo}}]
                """.formatted(user);
    }

    /**
     * Waits for a route configuration for {@link #NAME} whose first route matches header
     * {@code user} exactly {@code expected} (a push may first send one built before the change).
     */
    static void awaitRoutedUser(AdsClient client, String expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String seen = null;
        while (System.nanoTime() < deadline) {
            var response = client.await(TypeUrls.ROUTE, Duration.ofSeconds(20));
            client.ack(response, List.of(NAME));
            if (response.getResourcesCount() == 0) {
                seen = "(no route configuration yet)";
                continue;
            }
            RouteConfiguration rc;
            try {
                rc = response.getResources(0).unpack(RouteConfiguration.class);
            } catch (InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
            if (rc.getVirtualHostsCount() == 0 || rc.getVirtualHosts(0).getRoutesCount() == 0) {
                seen = "(no route yet)";
                continue;
            }
            var route = rc.getVirtualHosts(0).getRoutes(0);
            seen = route.getMatch().getHeadersCount() == 0 ? "(no header match)" : route.getMatch().getHeaders(0).getExactMatch();
            if (seen.equals(expected)) {
                return;
            }
        }
        throw new AssertionError("expected a route for user " + expected + ", last seen " + seen);
    }

    /** The VirtualService test/echo as the API server holds it. */
    String inCluster() {
        return api.get("networking.istio.io/v1", "VirtualService", "test", "echo").orElseThrow().toString();
    }

    /** Flags for Kubernetes mode against the stand-in, without --configDir (config only from CRDs). */
    List<String> kubernetesFlags(boolean withConfigDir) throws Exception {
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock"));
        if (!withConfigDir) {
            int at = flags.indexOf("--configDir");
            flags.remove(at + 1);
            flags.remove(at);
        }
        return flags;
    }

    @Test
    void readyAndServingAVirtualServiceAppliedToTheCluster() throws Exception {
        api.apply(echoServiceEntry());
        api.apply(echoRoute("jason"));
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(false), Map.of()));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            assertTrue(server.server().components().readiness().ready(), server.server().components().readiness().failing().toString());
            assertEquals(200, Http.get(server.ports().get("http"), "/ready").status());
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "jason");

            api.apply(echoRoute("alice"));
            awaitRoutedUser(grpc, "alice"); // the change applied to the cluster is pushed
            // istiod's pilot_k8s_cfg_events{type,event} (pilot/pkg/config/kube/crdclient/metrics.go): the CRD watch's events
            var events = PrometheusTextParser.parse(
                    Http.get(server.ports().get("monitoring"), "/metrics").body()).get("pilot_k8s_cfg_events");
            assertTrue(events != null && events.type().equals("counter"), String.valueOf(events));
            for (String event : List.of("add", "update")) {
                assertTrue(events.samples().stream().anyMatch(x -> "VirtualService".equals(x.labels().get("type"))
                        && event.equals(x.labels().get("event")) && x.value() >= 1), event + ": " + events);
            }

            // acceptance 3 over the API: an invalid change is reported where file errors are,
            // and the last good version keeps being served
            api.apply(echoRoute("alice").replace("hosts: [echo]", "hosts: [echo, echo]"));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            String errors = Http.get(server.ports().get("http"), "/api/v1/config-errors").body();
            while (!errors.contains("duplicate hosts") && System.nanoTime() < deadline) {
                Thread.sleep(50);
                errors = Http.get(server.ports().get("http"), "/api/v1/config-errors").body();
            }
            assertTrue(errors.contains("VirtualService") && errors.contains("spec.hosts[1]")
                    && errors.contains("duplicate hosts"), errors);
            assertEquals(1, server.server().components().configs().store().list("VirtualService", "test").size());
            assertEquals(List.of("echo"), ((VirtualService) server.server().components().configs()
                    .store().get("VirtualService", "test", "echo").orElseThrow().spec()).getHostsList());
        }
    }

    /**
     * Issue 29: the API server comes back rebuilt (its objects re-created, their resourceVersions
     * counted from the start again), then a VirtualService is patched with kubectl: the proxy
     * gets the patched route, and nothing is reported as not served.
     */
    @Test
    void afterTheApiServerComesBackWithResetResourceVersionsAKubectlPatchReachesTheProxy() throws Exception {
        Path binary = Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH"));
        api.apply(echoServiceEntry());
        for (int i = 0; i < 30; i++) {
            api.apply(echoRoute("user-" + i));
        }
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(false), Map.of()));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "user-29");
            long before = resourceVersionInCluster();

            int watching = api.openWatches();
            api.restartWithResetVersions();
            // a change made before the informers watch again could be skipped by a watch resumed from
            // the number it saw last (a number that now lies ahead), as on a real API server
            Await.until("the informers watching again", Duration.ofSeconds(20),
                    () -> api.openWatches() >= watching);
            Kubectl kubectl = new Kubectl(binary, api.writeKubeconfig(dir), dir.resolve("kubectl"));
            kubectl.run("patch", "virtualservice", "echo", "-n", "test", "--type=merge", "-p",
                    "{\"spec\":{\"http\":[{\"match\":[{\"headers\":{\"user\":{\"exact\":\"alice\"}}}],"
                            + "\"route\":[{\"destination\":{\"host\":\"echo\"}}]}]}}").ok();
            assertTrue(resourceVersionInCluster() < before, "the premise: the patch got a lower resourceVersion ("
                    + resourceVersionInCluster() + ") than the one served before (" + before + ")");
            awaitRoutedUser(grpc, "alice");
            assertEquals(String.valueOf(resourceVersionInCluster()), server.server().components().configs().store()
                    .get("VirtualService", "test", "echo").orElseThrow().resourceVersion());
            Http.Reply errors = Http.get(server.ports().get("http"), "/api/v1/config-errors");
            assertEquals(200, errors.status());
            assertFalse(errors.body().contains("echo"), errors.body());
        }
    }

    long resourceVersionInCluster() {
        return Long.parseLong(api.get("networking.istio.io/v1", "VirtualService", "test", "echo").orElseThrow()
                .getAsJsonObject("metadata").get("resourceVersion").getAsString());
    }

    @Test
    void restWritesLandInTheApiServerBesideTheConfigDir() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/echo-se.yaml"), echoServiceEntry());
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(true), Map.of()));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            int http = server.ports().get("http");
            Http.Reply created = Http.send(http, VS_PATH + "echo", "PUT", echoRoute("bob"), null);
            assertEquals(201, created.status(), created.body());
            String version = JsonParser.parseString(created.body()).getAsJsonObject().getAsJsonObject("metadata")
                    .get("resourceVersion").getAsString();
            assertTrue(inCluster().contains("bob"),
                    "the API server holds the write");
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "bob"); // the ServiceEntry from --configDir, the route from the cluster

            api.apply(echoRoute("carol")); // someone else changes it in the cluster
            awaitRoutedUser(grpc, "carol");
            String stale = echoRoute("dave").replace("namespace: test}", "namespace: test, resourceVersion: \"" + version + "\"}");
            Http.Reply conflict = Http.send(http, VS_PATH + "echo", "PUT", stale, null);
            assertEquals(409, conflict.status(), conflict.body());
            assertTrue(inCluster().contains("carol"),
                    "the stale write changed nothing");
        }
    }

    @Test
    void aK8sConfigSourceInTheMeshConfigReadsTheCrdsBesideAnFsOne() throws Exception {
        Path other = Files.createDirectories(dir.resolve("fs-source"));
        Files.writeString(other.resolve("echo-se.yaml"), echoServiceEntry());
        Files.writeString(dir.resolve("mesh"), "configSources:\n- address: k8s://\n- address: fs://" + other.toAbsolutePath() + "\n");
        api.apply(echoRoute("erin"));
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(true), Map.of()));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            assertEquals(other.toAbsolutePath(), server.server().components().configs().files().root());
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "erin"); // the ServiceEntry from fs://, the route from k8s://
        }
    }

    @Test
    void withTheApiServerDownAtStartReadinessNamesWhatIsNotSyncedUntilItIsBack() throws Exception {
        api.apply(echoServiceEntry());
        api.apply(echoRoute("frank"));
        Path cacerts = pluggedInCacerts();
        api.stop();
        // a short bounded wait: the server starts its listeners and stays not ready. The CA is
        // plugged in from files (as istiod's mounted cacerts): a self-signed root would wait for
        // istio-ca-secret, which needs the API server.
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(false),
                Map.of("MESHPILOT_KUBE_SYNC_TIMEOUT", "200ms", "ROOT_CA_DIR", cacerts.toString())));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            Http.Reply notReady = Http.get(server.ports().get("http"), "/ready");
            assertEquals(503, notReady.status());
            assertTrue(notReady.body().contains("kube-informer-synced:apiextensions.k8s.io/v1/customresourcedefinitions")
                    && notReady.body().contains("kube-informer-synced:configmap istio-system/istio")
                    && notReady.body().contains("config-synced"), notReady.body());

            api.restart();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!server.server().components().readiness().ready() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(200, Http.get(server.ports().get("http"), "/ready").status(),
                    server.server().components().readiness().failing().toString());
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "frank");
        }
    }

    /** istiod's cacerts files (a root and an intermediate) in a directory for ROOT_CA_DIR. */
    Path pluggedInCacerts() throws IOException {
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve("openssl")));
        ossl.root("root", "Plugged Root", "ec");
        ossl.issue("int", "Plugged Intermediate", "ec", "root", "v3_int", 730);
        Path cacerts = Files.createDirectories(dir.resolve("cacerts"));
        Files.copy(ossl.dir().resolve("int-cert.pem"), cacerts.resolve("ca-cert.pem"));
        Files.copy(ossl.dir().resolve("int-key.pem"), cacerts.resolve("ca-key.pem"));
        Files.writeString(cacerts.resolve("cert-chain.pem"), ossl.read("int-cert.pem") + ossl.read("root-cert.pem"));
        Files.copy(ossl.dir().resolve("root-cert.pem"), cacerts.resolve("root-cert.pem"));
        return cacerts;
    }

    // ---- meshConfig.discoverySelectors scope the cluster's Istio config

    static final String SELECT_MESH_ON = "discoverySelectors:\n- matchLabels: {mesh: \"on\"}\n";

    /** The HTTP status of reading the VirtualService test/echo through the REST API: 200 while it is served. */
    static int restStatus(int http) {
        return Http.get(http, VS_PATH + "echo").status();
    }

    static void awaitStatus(int http, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int seen;
        while ((seen = restStatus(http)) != expected) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + expected + " for test/echo, last seen " + seen);
            }
            Thread.sleep(20);
        }
    }

    @Test
    void discoverySelectorsLimitTheClustersConfigToSelectedNamespacesAndFollowLabelsAndTheMeshConfig() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        // from --configDir: not filtered by namespace, as istiod's file source
        Files.writeString(dir.resolve("config/echo-se.yaml"), echoServiceEntry());
        Files.writeString(dir.resolve("mesh"), SELECT_MESH_ON);
        api.apply(echoRoute("jason"));
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(true), Map.of()));
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            int http = server.ports().get("http");
            assertEquals(404, restStatus(http), "namespace test is not selected");
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            awaitRoutedUser(grpc, "(no header match)"); // the ServiceEntry's default route only

            // the namespace gets the label: the VirtualService is served and pushed
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: test, labels: {mesh: \"on\"}}\n");
            awaitRoutedUser(grpc, "jason");
            assertEquals(200, restStatus(http));

            // the label goes: withdrawn and pushed
            api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: test, labels: {}}\n");
            awaitRoutedUser(grpc, "(no header match)");
            assertEquals(404, restStatus(http));

            // the mesh config drops its selectors: every namespace is used again
            Files.writeString(dir.resolve("mesh"), "defaultConfig: {}\n");
            awaitRoutedUser(grpc, "jason");
            awaitStatus(http, 200);

            // and selects by another label again
            Files.writeString(dir.resolve("mesh"), SELECT_MESH_ON);
            awaitRoutedUser(grpc, "(no header match)");
            awaitStatus(http, 404);
        }
    }

    @Test
    void withEnhancedResourceScopingOffTheDiscoverySelectorsDoNotLimitTheConfig() throws Exception {
        Files.writeString(dir.resolve("mesh"), SELECT_MESH_ON);
        api.apply(echoServiceEntry());
        api.apply(echoRoute("jason"));
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(false),
                Map.of("ENABLE_ENHANCED_RESOURCE_SCOPING", "false")))) {
            assertEquals(200, restStatus(server.ports().get("http")), "served though namespace test is not selected");
        }
    }

    static String meshConfigMap(String mesh) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: istio, namespace: istio-system}
                data:
                  mesh: |
                %s
                """.formatted(mesh.indent(4).stripTrailing());
    }

    @Test
    void discoverySelectorsFromTheMeshConfigMapAreReevaluatedWhenItChanges() throws Exception {
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        api.apply(meshConfigMap(SELECT_MESH_ON)); // no mesh file: the istio ConfigMap is the mesh config
        api.apply(echoServiceEntry());
        api.apply(echoRoute("jason"));
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(kubernetesFlags(false), Map.of()))) {
            int http = server.ports().get("http");
            assertEquals(404, restStatus(http), "namespace test is not selected");
            api.apply(meshConfigMap("discoverySelectors:\n- matchExpressions: [{key: mesh, operator: DoesNotExist}]\n"));
            awaitStatus(http, 200);
        }
    }
}
