package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.ServerProcess;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart installed as {@code helm install} would, against the test API server: Helm
 * (helm-java, in process) renders it, kubectl applies the CRDs and the manifests, and the real
 * pilot-discovery process starts in-cluster style, as the Deployment's pod would: the
 * Deployment's arguments and environment, {@code KUBERNETES_SERVICE_HOST/PORT} pointing at the
 * API server's HTTPS listener, a service-account token and ca.crt, the istio ConfigMap's mesh
 * config where the kubelet mounts it. It becomes ready, and every request it sent is one the
 * chart's ClusterRole and Role allow.
 *
 * <p>Test-only changes to the pod's command line, each because a test process is not a pod:
 * listeners on free loopback ports (a pod has its own network), the mounted files' directory
 * ({@code --meshConfig}: a pod's /etc/istio/config), ControlZ on a free port.
 */
class ChartInstallIT {
    static final Duration START = Duration.ofSeconds(120);

    /** A started installation: what further checks (e.g. the webhook caBundle) read. */
    record Installation(FakeApiServer api, ServerProcess process, Map<String, Integer> ports,
                        HelmChart.Rendered rendered, int firstServerRequest) {
        /** The API requests the server sent, as the test API server logged them. */
        List<String> serverRequests() {
            List<String> log = api.requestLog();
            return log.subList(Math.min(firstServerRequest, log.size()), log.size());
        }
    }

    @Test
    void theRenderedChartInstallsAndMeshPilotBecomesReadyInCluster(@TempDir Path dir) throws Exception {
        HelmChart.Rendered rendered = HelmChart.render(null);
        try (FakeApiServer api = FakeApiServer.start()) {
            // the Gateway API installed too, as Istio's guides do first: its controller's requests are checked as well
            try (var crds = Files.list(Path.of("src/test/resources/kube/gateway-api/standard"))) {
                for (Path crd : crds.sorted().toList()) {
                    api.installCrds(Files.readString(crd));
                }
            }
            Installation installation = install(api, rendered, dir);
            try (ServerProcess p = installation.process()) {
                assertReady(installation);
                // the Gateway API controller runs: istiod's default GatewayClass is made
                long classDeadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (api.get("gateway.networking.k8s.io/v1", "GatewayClass", null, "istio").isEmpty()
                        && System.nanoTime() < classDeadline) {
                    Thread.sleep(200);
                }
                assertTrue(api.get("gateway.networking.k8s.io/v1", "GatewayClass", null, "istio").isPresent(),
                        "the istio GatewayClass was created\n" + installation.process().output());
                // the webhook controller puts the CA root into the caBundle of the chart's two
                // webhook configurations (the validator's as the leader, the injector's on every replica)
                for (String[] config : new String[][] {{"ValidatingWebhookConfiguration", "istio-validator-istio-system"},
                        {"MutatingWebhookConfiguration", "istio-sidecar-injector"}}) {
                    Map<String, String> bundles = caBundles(api, config[0], config[1]);
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (bundles.values().stream().anyMatch(String::isEmpty) && System.nanoTime() < deadline) {
                        Thread.sleep(200);
                        bundles = caBundles(api, config[0], config[1]);
                    }
                    assertTrue(!bundles.isEmpty(), config[1] + " has webhooks");
                    for (var e : bundles.entrySet()) {
                        String pem = new String(Base64.getDecoder().decode(e.getValue()),
                                StandardCharsets.US_ASCII);
                        assertTrue(pem.startsWith("-----BEGIN CERTIFICATE-----"), config[1] + "/" + e.getKey()
                                + " caBundle: " + e.getValue() + "\n" + installation.process().output());
                    }
                }
                // the chart's objects as the API server stores them
                assertTrue(api.get("apps/v1", "Deployment", HelmChart.NAMESPACE, "istiod").isPresent());
                assertTrue(api.get("v1", "Service", HelmChart.NAMESPACE, "istiod").isPresent());
                assertTrue(api.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", null,
                        "istio-validator-istio-system").isPresent());
                assertTrue(api.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", null,
                        "istio-sidecar-injector").isPresent());
            }
            // a watch is logged when it ends: ended here, the process being gone
            api.closeWatches();
            awaitNoOpenWatches(api);
            assertTrue(api.requestLog().stream().anyMatch(l -> l.contains("watch=true")), "the server watched");
            assertEveryRequestIsAllowedByTheChartsRbac(installation);
        }
    }

    /** The operator's values (revision canary, a PodDisruptionBudget, no HPA) apply as cleanly, kubectl validating strictly. */
    @Test
    void anOperatorsIstiodValuesRenderingApplies(@TempDir Path dir) throws Exception {
        HelmChart.Rendered rendered = HelmChart.render(ChartRenderTest.OPERATOR_VALUES);
        try (FakeApiServer api = FakeApiServer.start()) {
            applyChart(api, rendered, dir);
            assertTrue(api.get("policy/v1", "PodDisruptionBudget", HelmChart.NAMESPACE, "istiod-canary").isPresent());
            assertTrue(api.get("apps/v1", "Deployment", HelmChart.NAMESPACE, "istiod-canary").isPresent());
            assertTrue(api.get("v1", "ConfigMap", HelmChart.NAMESPACE, "istio-canary").isPresent());
        }
    }

    /** Waits until every watch stream has ended (and is logged). */
    static void awaitNoOpenWatches(FakeApiServer api) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (api.openWatches() > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(api.openWatches() + " watches still open");
            }
            Thread.sleep(50);
        }
    }

    /**
     * {@code helm install}'s order: the CRDs of chart/crds, then the rendered manifests (kubectl
     * apply), then the pod's process.
     */
    static Installation install(FakeApiServer api, HelmChart.Rendered rendered, Path dir) throws Exception {
        applyChart(api, rendered, dir);
        return start(api, rendered, dir);
    }

    /** {@code kubectl create namespace istio-system}, then the CRDs, then the rendered manifests: each created. */
    static void applyChart(FakeApiServer api, HelmChart.Rendered rendered, Path dir) {
        Path binary = Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH"));
        Kubectl kubectl = new Kubectl(binary, api.writeKubeconfig(dir), dir.resolve("kubectl"));
        kubectl.run("create", "namespace", HelmChart.NAMESPACE).ok();
        kubectl.run("apply", "-f", HelmChart.dir().resolve("crds").toString()).ok();
        Path manifests;
        try {
            manifests = Files.writeString(dir.resolve("rendered.yaml"), rendered.text());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Kubectl.Result applied = kubectl.run("apply", "-f", manifests.toString()).ok();
        for (Map<String, Object> m : rendered.manifests()) {
            String line = m.get("kind").toString().toLowerCase(Locale.ROOT);
            assertTrue(applied.stdout().contains("/" + Yamls.at(m, "metadata.name") + " created")
                    && applied.stdout().contains(line), "kubectl created " + line + " " + Yamls.at(m, "metadata.name")
                    + ":\n" + applied.stdout() + applied.stderr());
        }
    }

    /** The pod's process, in-cluster style, against {@code api}. */
    static Installation start(FakeApiServer api, HelmChart.Rendered rendered, Path dir) throws Exception {
        Map<String, Object> deployment = rendered.get("Deployment", "istiod");
        Map<String, Object> container = Yamls.map(deployment, "spec.template.spec.containers[0]");

        // the pod's service account and the API server's serving certificate
        OpenSsl ossl = new OpenSsl(Files.createDirectories(dir.resolve("apiserver-pki")));
        ossl.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                "-keyout", "apiserver.key", "-out", "apiserver.crt", "-subj", "/CN=kube-apiserver",
                "-addext", "subjectAltName=IP:127.0.0.1");
        ossl.run("pkcs12", "-export", "-in", "apiserver.crt", "-inkey", "apiserver.key", "-out", "apiserver.p12",
                "-passout", "pass:test");
        int tlsPort = api.serveTls(sslContext(ossl.dir().resolve("apiserver.p12")));
        Path serviceAccount = Files.createDirectories(dir.resolve("serviceaccount"));
        Files.writeString(serviceAccount.resolve("token"), "istiod-service-account-token");
        Files.copy(ossl.dir().resolve("apiserver.crt"), serviceAccount.resolve("ca.crt"));
        Files.writeString(serviceAccount.resolve("namespace"), HelmChart.NAMESPACE);

        // the istio ConfigMap where the kubelet mounts it (volume config-volume)
        Map<String, Object> meshConfigMap = rendered.get("ConfigMap", "istio");
        Path mounted = Files.createDirectories(dir.resolve("etc/istio/config"));
        Files.writeString(mounted.resolve("mesh"), (String) Yamls.at(meshConfigMap, "data.mesh"));
        Files.writeString(mounted.resolve("meshNetworks"), (String) Yamls.at(meshConfigMap, "data.meshNetworks"));

        Map<String, String> env = new LinkedHashMap<>(ChartRenderTest.env(container));
        env.put("POD_NAME", "istiod-7d9c5b7b9-x2x7q");
        env.put("POD_NAMESPACE", HelmChart.NAMESPACE);
        env.put("SERVICE_ACCOUNT", (String) Yamls.at(deployment, "spec.template.spec.serviceAccountName"));
        env.put("KUBERNETES_SERVICE_HOST", "127.0.0.1");
        env.put("KUBERNETES_SERVICE_PORT", Integer.toString(tlsPort));
        env.put("MESHPILOT_SERVICE_ACCOUNT_DIR", serviceAccount.toString());

        List<String> args = new ArrayList<>();
        for (String arg : ChartRenderTest.strings(container.get("args"))) {
            args.add(arg.startsWith("--monitoringAddr=") ? "--monitoringAddr=127.0.0.1:0" : arg);
        }
        args.addAll(List.of("--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0",
                "--httpsAddr", "127.0.0.1:0", "--ctrlz_port", "0",
                "--meshConfig", mounted.resolve("mesh").toString(),
                "--networksConfig", mounted.resolve("meshNetworks").toString()));
        int first = api.requestLog().size();
        ServerProcess process = ServerProcess.jar(env, args.toArray(String[]::new));
        Map<String, Integer> ports = process.awaitPorts(START);
        return new Installation(api, process, ports, rendered, first);
    }

    /** The readiness probe's request: GET /ready on the http port answers 200. */
    static void assertReady(Installation installation) throws InterruptedException {
        int http = installation.ports().get("http");
        long deadline = System.nanoTime() + START.toNanos();
        Http.Reply reply = null;
        while (System.nanoTime() < deadline) {
            reply = Http.get(http, "/ready");
            if (reply.status() == 200) {
                break;
            }
            Thread.sleep(200);
        }
        assertEquals(200, reply == null ? -1 : reply.status(), () -> "/ready: " + installation.process().output());
        String output = installation.process().output();
        assertTrue(output.contains("in-cluster, service account"), "connected in-cluster style:\n" + output);
    }

    /** Every API request the server sent is allowed by the chart's ClusterRole, or its Role in istiod's namespace. */
    static void assertEveryRequestIsAllowedByTheChartsRbac(Installation installation) {
        HelmChart.Rendered r = installation.rendered();
        List<Object> clusterRules = Yamls.list(r.all("ClusterRole").get(0), "rules");
        List<Object> namespaceRules = Yamls.list(r.get("Role", "istiod"), "rules");
        List<String> requests = installation.serverRequests();
        // what start-up needs at least: the registry's and config store's informers, the CA root, leader election
        for (String expected : List.of("GET /api/v1/services?", "GET /apis/networking.istio.io/v1/virtualservices?",
                "POST /api/v1/namespaces/istio-system/secrets ", "POST /apis/coordination.k8s.io/v1/namespaces/istio-system/leases ")) {
            assertTrue(requests.stream().anyMatch(l -> l.startsWith(expected)), "no " + expected + " in " + requests);
        }
        List<String> denied = new ArrayList<>();
        for (String request : requests) {
            ApiRequest a = ApiRequest.parse(request);
            if (a == null) {
                continue; // discovery and other non-resource paths: every authenticated user may read them
            }
            boolean allowed = allows(clusterRules, a)
                    || (HelmChart.NAMESPACE.equals(a.namespace()) && allows(namespaceRules, a));
            if (!allowed) {
                denied.add(a + " (" + request + ")");
            }
        }
        assertEquals(List.of(), denied, "requests the chart's RBAC would deny");
    }

    static boolean allows(List<Object> rules, ApiRequest a) {
        for (Object rule : rules) {
            List<?> groups = Yamls.list(rule, "apiGroups");
            List<?> resources = Yamls.list(rule, "resources");
            List<?> verbs = Yamls.list(rule, "verbs");
            boolean group = groups.contains(a.group()) || groups.contains("*");
            boolean resource = resources.contains(a.resource()) || resources.contains("*") && !a.resource().contains("/")
                    || a.resource().contains("/") && resources.contains("*/" + a.resource().substring(a.resource().indexOf('/') + 1));
            boolean verb = verbs.contains(a.verb()) || verbs.contains("*");
            if (group && resource && verb) {
                return true;
            }
        }
        return false;
    }

    /** One logged request as RBAC sees it: verb, API group, resource (with subresource), namespace. */
    record ApiRequest(String verb, String group, String resource, String namespace) {
        static final Pattern LINE = Pattern.compile("^(\\w+) (\\S+) -> \\d+$");

        static ApiRequest parse(String logLine) {
            Matcher m = LINE.matcher(logLine);
            if (!m.matches()) {
                throw new AssertionError("unexpected request log line: " + logLine);
            }
            URI uri = URI.create("http://x" + m.group(2));
            List<String> parts = new ArrayList<>(List.of(uri.getPath().substring(1).split("/")));
            String group;
            if (parts.size() >= 3 && parts.get(0).equals("api")) {
                group = "";
                parts = parts.subList(2, parts.size());
            } else if (parts.size() >= 4 && parts.get(0).equals("apis")) {
                group = parts.get(1);
                parts = parts.subList(3, parts.size());
            } else {
                return null;
            }
            String namespace = null;
            if (parts.size() >= 3 && parts.get(0).equals("namespaces")) {
                namespace = parts.get(1);
                parts = parts.subList(2, parts.size());
            }
            String resource = parts.get(0);
            String name = parts.size() > 1 ? parts.get(1) : null;
            if (parts.size() > 2) {
                resource = resource + "/" + parts.get(2);
            }
            Map<String, String> query = new HashMap<>();
            if (uri.getRawQuery() != null) {
                for (String kv : uri.getRawQuery().split("&")) {
                    int eq = kv.indexOf('=');
                    query.put(eq < 0 ? kv : kv.substring(0, eq), eq < 0 ? "" : kv.substring(eq + 1));
                }
            }
            String verb = switch (m.group(1)) {
                case "GET" -> name != null ? "get" : "true".equals(query.get("watch")) ? "watch" : "list";
                case "POST" -> "create";
                case "PUT" -> "update";
                case "PATCH" -> "patch";
                case "DELETE" -> name != null ? "delete" : "deletecollection";
                default -> m.group(1).toLowerCase(Locale.ROOT);
            };
            return new ApiRequest(verb, group, resource, namespace);
        }
    }

    static SSLContext sslContext(Path p12) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(p12)) {
            keys.load(in, "test".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, "test".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return context;
    }

    /** The caBundle of each webhook of a webhook configuration (empty string when not set). */
    static Map<String, String> caBundles(FakeApiServer api, String kind, String name) {
        JsonObject config = api.get("admissionregistration.k8s.io/v1", kind, null, name)
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
        Map<String, String> out = new LinkedHashMap<>();
        for (var w : config.getAsJsonArray("webhooks")) {
            JsonObject hook = w.getAsJsonObject();
            JsonObject client = hook.getAsJsonObject("clientConfig");
            out.put(hook.get("name").getAsString(), client.has("caBundle") ? client.get("caBundle").getAsString() : "");
        }
        return out;
    }
}
