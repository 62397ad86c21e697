package io.meshpilot.testing.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Real kubectl processes against the API server stand-in: the one on the PATH (1.32 on the
 * machine image) and the oldest of the Google Cloud SDK's (1.27), with their default
 * client-side apply and validation. Skipped, saying so, where no kubectl is installed.
 */
class FakeApiServerKubectlTest {
    @TempDir
    Path dir;

    static Stream<Path> kubectls() {
        List<Path> binaries = new ArrayList<>();
        Kubectl.onPath().ifPresent(binaries::add);
        List<Path> sdk = Kubectl.cloudSdkVersions();
        if (!sdk.isEmpty()) {
            binaries.add(sdk.get(0));
        }
        // an empty source fails JUnit; one placeholder becomes a skipped run instead
        return binaries.isEmpty() ? Stream.of(Path.of("kubectl-not-installed")) : binaries.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kubectls")
    void appliesGetsPatchesAndDeletesBookinfoAndIstioConfig(Path binary) throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(binary),
                "no kubectl on the PATH nor under the Google Cloud SDK's bin/: the stand-in is not checked against kubectl");
        try (FakeApiServer server = FakeApiServer.start()) {
            server.installIstioCrds();
            Kubectl kubectl = new Kubectl(binary, server.writeKubeconfig(dir), dir.resolve("kubectl"));
            Path bookinfo = sample("bookinfo-kube.yaml");
            Path virtualServices = sample("virtual-service-all-v1.yaml");

            Kubectl.Result created = kubectl.run("apply", "-f", bookinfo.toString()).ok();
            assertTrue(created.stdout().contains("service/productpage created"), created.stdout());
            assertTrue(created.stdout().contains("deployment.apps/reviews-v3 created"), created.stdout());
            assertEquals("", created.stderr().strip(), "kubectl apply warned");
            assertEquals(List.of("details", "productpage", "ratings", "reviews"), names(server.list("v1", "Service", "default")));
            assertEquals(6, server.list("apps/v1", "Deployment", "default").size());
            assertEquals(4, server.list("v1", "ServiceAccount", "default").size());
            String clusterIp = Json.string(server.get("v1", "Service", "default", "productpage").orElseThrow(),
                    "spec", "clusterIP");
            assertTrue(clusterIp != null && clusterIp.startsWith("10.96."), "a cluster IP allocated: " + clusterIp);

            kubectl.run("apply", "-f", virtualServices.toString()).ok();
            assertEquals(List.of("details", "productpage", "ratings", "reviews"),
                    names(server.list("networking.istio.io/v1", "VirtualService", "default")));

            // get -o json: the object as served, in the version asked for
            JsonObject reviews = Json.parse(kubectl.run("get", "virtualservices.v1beta1.networking.istio.io", "reviews",
                    "-o", "json").ok().stdout()).getAsJsonObject();
            assertEquals("networking.istio.io/v1beta1", Json.string(reviews, "apiVersion"));
            assertEquals("v1", Json.string(reviews.getAsJsonObject("spec").getAsJsonArray("http").get(0).getAsJsonObject()
                    .getAsJsonArray("route").get(0).getAsJsonObject(), "destination", "subset"));
            JsonObject deployments = Json.parse(kubectl.run("get", "deployments", "-o", "json").ok().stdout())
                    .getAsJsonObject();
            assertEquals(6, deployments.getAsJsonArray("items").size());

            // apply again with one change: kubectl computes a strategic merge patch for that one only
            String changed = Files.readString(bookinfo).replaceFirst("(?s)(name: reviews-v2.*?replicas: )1", "$12");
            Kubectl.Result configured = kubectl.runWithInput(changed, "apply", "-f", "-").ok();
            assertTrue(configured.stdout().contains("deployment.apps/reviews-v2 configured"), configured.stdout());
            assertTrue(configured.stdout().contains("deployment.apps/reviews-v1 unchanged"), configured.stdout());
            assertTrue(configured.stdout().contains("service/productpage unchanged"), configured.stdout());
            assertEquals(clusterIp, Json.string(server.get("v1", "Service", "default", "productpage").orElseThrow(),
                    "spec", "clusterIP"), "the allocated cluster IP kept");
            JsonObject reviewsV2 = server.get("apps/v1", "Deployment", "default", "reviews-v2").orElseThrow();
            assertEquals(2, reviewsV2.getAsJsonObject("spec").get("replicas").getAsInt());
            assertEquals(2, reviewsV2.getAsJsonObject("metadata").get("generation").getAsInt());
            assertTrue(server.requestLog().stream().anyMatch(
                    r -> r.startsWith("PATCH /apis/apps/v1/namespaces/default/deployments/reviews-v2")), "no PATCH sent");

            // patch: merge patch on a custom resource, strategic merge on a Deployment, JSON patch on a Service
            kubectl.run("patch", "virtualservice", "reviews", "--type", "merge", "-p",
                    "{\"spec\":{\"http\":[{\"route\":[{\"destination\":{\"host\":\"reviews\",\"subset\":\"v2\"}}]}]}}").ok();
            JsonObject patched = server.get("networking.istio.io/v1", "VirtualService", "default", "reviews").orElseThrow();
            assertTrue(patched.toString().contains("\"subset\":\"v2\""), patched.toString());
            assertEquals(2, patched.getAsJsonObject("metadata").get("generation").getAsInt());
            kubectl.run("patch", "deployment", "reviews-v3", "-p",
                    "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"reviews\",\"image\":\"reviews:test\"}]}}}}")
                    .ok();
            JsonObject container = server.get("apps/v1", "Deployment", "default", "reviews-v3").orElseThrow()
                    .getAsJsonObject("spec").getAsJsonObject("template").getAsJsonObject("spec")
                    .getAsJsonArray("containers").get(0).getAsJsonObject();
            assertEquals("reviews:test", Json.string(container, "image"));
            assertTrue(container.has("ports"), "strategic merge by container name kept the ports: " + container);
            kubectl.run("patch", "service", "ratings", "--type", "json", "-p",
                    "[{\"op\":\"add\",\"path\":\"/metadata/labels/tier\",\"value\":\"backend\"}]").ok();
            assertEquals("backend", Json.string(server.get("v1", "Service", "default", "ratings").orElseThrow(),
                    "metadata", "labels", "tier"));

            // a stale resourceVersion is refused (409), as the object moved on since it was read
            Kubectl.Result stale = kubectl.runWithInput(reviews.toString(), "replace", "-f", "-");
            assertNotEquals(0, stale.exit());
            assertTrue(stale.stderr().contains("the object has been modified"), stale.stderr());

            // label selectors
            Kubectl.Result selected = kubectl.run("get", "deployments", "-l", "app=reviews,version in (v1,v3)",
                    "-o", "name").ok();
            assertEquals(List.of("deployment.apps/reviews-v1", "deployment.apps/reviews-v3"),
                    selected.stdout().strip().lines().toList());

            // kubectl's generators send built-in kinds as protobuf
            kubectl.run("create", "namespace", "istio-system").ok();
            kubectl.run("-n", "istio-system", "create", "configmap", "istio", "--from-literal=mesh=defaultConfig: {}").ok();
            JsonObject mesh = server.get("v1", "ConfigMap", "istio-system", "istio").orElseThrow();
            assertEquals("defaultConfig: {}", Json.string(mesh, "data", "mesh"));
            assertFalse(mesh.getAsJsonObject("metadata").has("generateName"), mesh.toString());
            kubectl.run("expose", "deployment", "reviews-v1", "--name", "reviews-exposed", "--port", "80",
                    "--target-port", "9080").ok();
            JsonObject port = server.get("v1", "Service", "default", "reviews-exposed").orElseThrow()
                    .getAsJsonObject("spec").getAsJsonArray("ports").get(0).getAsJsonObject();
            assertEquals(9080, port.get("targetPort").getAsInt());

            // delete (kubectl waits for the object to be gone through a watch)
            kubectl.run("delete", "virtualservice", "ratings").ok();
            kubectl.run("delete", "deployment", "ratings-v1").ok();
            assertFalse(server.get("networking.istio.io/v1", "VirtualService", "default", "ratings").isPresent());
            assertFalse(server.get("apps/v1", "Deployment", "default", "ratings-v1").isPresent());
            Kubectl.Result missing = kubectl.run("get", "vs", "ratings");
            assertNotEquals(0, missing.exit());
            assertTrue(missing.stderr().contains("(NotFound)") && missing.stderr().contains("\"ratings\" not found"),
                    missing.stderr());
        }
    }

    private Path sample(String name) throws IOException {
        try (InputStream in = getClass().getResourceAsStream("/golden/samples/" + name)) {
            Path file = dir.resolve(name);
            Files.writeString(file, new String(in.readAllBytes(), StandardCharsets.UTF_8));
            return file;
        }
    }

    /**
     * Server-side apply removes what a field manager applied before and no longer applies (the
     * API server does it through managed fields), and leaves what another manager applied.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("kubectls")
    void serverSideApplyRemovesWhatTheSameManagerNoLongerApplies(Path binary) throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(binary), "no kubectl on the PATH nor under the Google Cloud SDK's bin/");
        try (FakeApiServer server = FakeApiServer.start()) {
            Kubectl kubectl = new Kubectl(binary, server.writeKubeconfig(dir), dir.resolve("kubectl"));
            String service = """
                    apiVersion: v1
                    kind: Service
                    metadata: {name: web, namespace: default, labels: %s}
                    spec:
                      selector: {app: web}
                      ports: %s
                    """;
            kubectl.runWithInput(service.formatted("{owner: one}",
                    "[{name: http, port: 80}, {name: https, port: 443}]"),
                    "apply", "--server-side", "--field-manager=one", "-f", "-").ok();
            kubectl.runWithInput("""
                    apiVersion: v1
                    kind: Service
                    metadata: {name: web, namespace: default}
                    spec:
                      ports: [{name: admin, port: 9000}]
                    """, "apply", "--server-side", "--field-manager=two", "-f", "-").ok();
            kubectl.runWithInput(service.formatted("{}", "[{name: http, port: 80}]"),
                    "apply", "--server-side", "--field-manager=one", "-f", "-").ok();

            JsonObject web = server.get("v1", "Service", "default", "web").orElseThrow();
            List<String> ports = new ArrayList<>();
            web.getAsJsonObject("spec").getAsJsonArray("ports")
                    .forEach(p -> ports.add(Json.string(p.getAsJsonObject(), "name")));
            assertEquals(List.of("http", "admin"), ports, "https withdrawn by its manager, admin kept");
            assertFalse(Json.object(Json.object(web, "metadata"), "labels").has("owner"), web.toString());
        }
    }

    private static List<String> names(List<JsonObject> objects) {
        return objects.stream().map(o -> Json.string(o, "metadata", "name")).toList();
    }
}
