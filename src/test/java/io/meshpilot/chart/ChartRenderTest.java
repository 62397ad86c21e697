package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.testing.ServerProcess;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart rendered by Helm itself (helm-java, in process, offline): {@code helm lint
 * --strict}, then {@code helm template} with the chart's defaults and with an istiod values
 * file an operator already has. The rendered Deployment's arguments are parsed by MeshPilot's
 * own command line, the mesh config by its own loader.
 */
class ChartRenderTest {
    static final Path OPERATOR_VALUES = ServerProcess.home().resolve("src/test/resources/chart/istiod-operator-values.yaml");

    @Test
    void lintsStrictly() {
        LintResult lint = HelmChart.lint();
        assertFalse(lint.isFailed(), () -> "helm lint --strict: " + String.join("\n", lint.getMessages()));
    }

    @Test
    void defaultValuesRenderIstiodsObjects() throws Exception {
        HelmChart.Rendered r = HelmChart.render(null);
        Set<String> objects = new TreeSet<>();
        for (Map<String, Object> m : r.manifests()) {
            objects.add(m.get("kind") + "/" + Yamls.at(m, "metadata.name"));
        }
        Set<String> expected = new TreeSet<>(List.of("ServiceAccount/istiod", "ConfigMap/istio",
                "ConfigMap/istio-sidecar-injector", "ClusterRole/istiod-clusterrole-istio-system",
                "ClusterRoleBinding/istiod-clusterrole-istio-system", "Role/istiod", "RoleBinding/istiod",
                "Service/istiod", "Deployment/istiod", "HorizontalPodAutoscaler/istiod",
                "MutatingWebhookConfiguration/istio-sidecar-injector",
                "ValidatingWebhookConfiguration/istio-validator-istio-system"));
        for (Map<String, Object> crd : r.all("CustomResourceDefinition")) {
            expected.add("CustomResourceDefinition/" + Yamls.at(crd, "metadata.name"));
        }
        assertEquals(expected, objects, "one replica: no PodDisruptionBudget, as istiod's chart");
        assertFalse(r.text().contains("WARNING"), "no unsupported values set: no warning\n" + r.text());

        Map<String, Object> deployment = r.get("Deployment", "istiod");
        Map<String, Object> container = Yamls.map(deployment, "spec.template.spec.containers[0]");
        assertEquals("ghcr.io/meshpilot/meshpilot:" + ImageTest.chartAppVersion(), container.get("image"));
        List<String> args = strings(container.get("args"));
        assertEquals(List.of("discovery", "--monitoringAddr=:15014", "--log_output_level=default:info", "--domain",
                "cluster.local", "--keepaliveMaxServerConnectionAge", "30m"), args);
        PilotArgs parsed = parse(args, env(container));
        assertEquals(List.of(), parsed.ignoredArguments(), "every argument is one MeshPilot knows");
        assertEquals(15014, parsed.listeners().monitoring().port());
        assertEquals(Duration.ofMinutes(30), parsed.keepalive().maxServerConnectionAge());
        assertEquals(Path.of("/etc/istio/config/mesh"), parsed.meshConfigFile(),
                "the image's meshpilot.home (/) puts --meshConfig's default on the mounted istio ConfigMap");

        Map<String, Integer> ports = new LinkedHashMap<>();
        for (Object p : Yamls.list(container, "ports")) {
            ports.put((String) Yamls.at(p, "name"), (Integer) Yamls.at(p, "containerPort"));
        }
        assertEquals(Map.of("http-debug", 8080, "grpc-xds", 15010, "tls-xds", 15012, "https-webhooks", 15017,
                "http-monitoring", 15014), ports);
        assertEquals("/ready", Yamls.at(container, "readinessProbe.httpGet.path"));
        assertEquals(8080, Yamls.at(container, "readinessProbe.httpGet.port"));
        assertEquals("-Xmx1536m -XX:+ExitOnOutOfMemoryError", env(container).get("JAVA_TOOL_OPTIONS"),
                "no memory limit: the heap is 75% of the 2048Mi request");
        assertEquals("default", env(container).get("REVISION"));
        assertEquals(Boolean.TRUE, Yamls.at(container, "securityContext.runAsNonRoot"));
        assertEquals(Boolean.TRUE, Yamls.at(container, "securityContext.readOnlyRootFilesystem"));
        assertEquals(ImageTest.dockerfileUser(), Yamls.at(deployment, "spec.template.spec.securityContext.runAsUser"));

        Map<String, String> mounts = new HashMap<>();
        for (Object m : Yamls.list(container, "volumeMounts")) {
            mounts.put((String) Yamls.at(m, "name"), (String) Yamls.at(m, "mountPath"));
        }
        assertEquals("/etc/cacerts", mounts.get("cacerts"));
        assertEquals("/etc/istio/config", mounts.get("config-volume"));
        assertEquals("/var/run/secrets/tokens", mounts.get("istio-token"));
        Object volumes = Yamls.at(deployment, "spec.template.spec.volumes");
        assertEquals(Map.of("secretName", "cacerts", "optional", true), Yamls.named(volumes, "", "cacerts").get("secret"));
        assertEquals("istio", Yamls.at(Yamls.named(volumes, "", "config-volume"), "configMap.name"));
        assertEquals("istio-ca", Yamls.at(Yamls.named(volumes, "", "istio-token"),
                "projected.sources[0].serviceAccountToken.audience"));

        Map<String, Object> service = r.get("Service", "istiod");
        Map<String, List<Integer>> servicePorts = new LinkedHashMap<>();
        for (Object p : Yamls.list(service, "spec.ports")) {
            Object target = Yamls.at(p, "targetPort");
            servicePorts.put((String) Yamls.at(p, "name"), List.of((Integer) Yamls.at(p, "port"),
                    target == null ? (Integer) Yamls.at(p, "port") : (Integer) target));
        }
        assertEquals(Map.of("grpc-xds", List.of(15010, 15010), "https-dns", List.of(15012, 15012),
                "https-webhook", List.of(443, 15017), "http-monitoring", List.of(15014, 15014)), servicePorts);
        assertEquals(Map.of("app", "istiod", "istio", "pilot"), Yamls.at(service, "spec.selector"));

        Map<String, Object> validator = r.get("ValidatingWebhookConfiguration", "istio-validator-istio-system");
        List<Object> validators = Yamls.list(validator, "webhooks");
        assertEquals(List.of("rev.validation.istio.io", "validation.istio.io"),
                validators.stream().map(w -> Yamls.at(w, "name")).toList());
        for (Object w : validators) {
            assertEquals(Map.of("name", "istiod", "namespace", "istio-system", "path", "/validate", "port", 443),
                    Yamls.at(w, "clientConfig.service"));
            assertEquals("Ignore", Yamls.at(w, "failurePolicy"), "open until MeshPilot patches it");
            assertNull(Yamls.at(w, "clientConfig.caBundle"), "the caBundle is MeshPilot's to patch in");
        }
        List<Object> injectors = Yamls.list(r.get("MutatingWebhookConfiguration", "istio-sidecar-injector"), "webhooks");
        assertEquals(List.of("rev.namespace.sidecar-injector.istio.io", "rev.object.sidecar-injector.istio.io",
                "namespace.sidecar-injector.istio.io", "object.sidecar-injector.istio.io"),
                injectors.stream().map(w -> Yamls.at(w, "name")).toList());
        for (Object w : injectors) {
            assertEquals(Map.of("name", "istiod", "namespace", "istio-system", "path", "/inject", "port", 443),
                    Yamls.at(w, "clientConfig.service"));
        }

        MeshConfig mesh = mesh(r, "istio");
        assertEquals("istio-system", mesh.getRootNamespace());
        assertEquals("istiod.istio-system.svc:15012", mesh.getDefaultConfig().getDiscoveryAddress());
        assertTrue(mesh.getEnablePrometheusMerge().getValue());

        Map<String, Object> injector = r.get("ConfigMap", "istio-sidecar-injector");
        JsonObject values = JsonParser.parseString((String) Yamls.at(injector, "data.values")).getAsJsonObject();
        assertEquals("proxyv2", values.getAsJsonObject("global").getAsJsonObject("proxy").get("image").getAsString());
        assertEquals("docker.io/istio", values.getAsJsonObject("global").get("hub").getAsString());
        Map<String, Object> config = Yamls.map(HelmChart.yaml((String) Yamls.at(injector, "data.config")), "");
        assertEquals(List.of("sidecar"), config.get("defaultTemplates"));
        assertEquals("enabled", config.get("policy"));
        assertEquals(Map.of(), config.get("templates"), "no Go templates: MeshPilot renders istiod's sidecar natively");

        Map<String, Object> hpa = r.get("HorizontalPodAutoscaler", "istiod");
        assertEquals(1, Yamls.at(hpa, "spec.minReplicas"));
        assertEquals(5, Yamls.at(hpa, "spec.maxReplicas"));
        assertNull(Yamls.at(deployment, "spec.replicas"), "the HPA owns the replica count");
    }

    @Test
    void anOperatorsIstiodValuesFileRenders() throws Exception {
        HelmChart.Rendered r = HelmChart.render(OPERATOR_VALUES);
        Map<String, Object> deployment = r.get("Deployment", "istiod-canary");
        Map<String, Object> container = Yamls.map(deployment, "spec.template.spec.containers[0]");
        assertEquals("ghcr.io/meshpilot/meshpilot:" + ImageTest.chartAppVersion(), container.get("image"),
                "global.hub/tag name Istio's images (the sidecar's), not MeshPilot's");
        List<String> args = strings(container.get("args"));
        assertEquals(List.of("discovery", "--monitoringAddr=:15014", "--log_output_level=default:debug,ads:info",
                "--log_as_json", "--domain", "corp.local", "--keepaliveMaxServerConnectionAge", "10m"), args);
        Map<String, String> env = env(container);
        PilotArgs parsed = parse(args, env);
        assertEquals(List.of(), parsed.ignoredArguments());
        assertEquals("corp.local", parsed.domainSuffix());
        assertEquals("canary", parsed.revision());
        assertEquals("east", parsed.clusterId());
        assertEquals(Duration.ofMinutes(10), parsed.keepalive().maxServerConnectionAge());
        assertEquals("50", env.get("PILOT_PUSH_THROTTLE"));
        assertEquals("200ms", env.get("PILOT_DEBOUNCE_AFTER"));
        assertEquals(Duration.ofMillis(200), parsed.features().debounceAfter());
        assertEquals("-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError", env.get("JAVA_TOOL_OPTIONS"),
                "a memory limit: the JVM takes its share of the container's limit");
        assertEquals(Map.of("requests", Map.of("cpu", "1", "memory", "3Gi"), "limits", Map.of("memory", "4Gi")),
                container.get("resources"));
        assertEquals(3, Yamls.at(deployment, "spec.replicas"));
        assertEquals(Map.of("kubernetes.io/os", "linux"), Yamls.at(deployment, "spec.template.spec.nodeSelector"));
        assertEquals("mesh", Yamls.map(deployment, "spec.template.metadata.annotations").get("example.com/team"));
        assertEquals(Map.of("app", "istiod", "istio.io/rev", "canary"), Yamls.at(deployment, "spec.selector.matchLabels"));
        assertEquals("istio-canary", Yamls.at(Yamls.named(Yamls.at(deployment, "spec.template.spec.volumes"), "",
                "config-volume"), "configMap.name"));

        assertTrue(r.find("HorizontalPodAutoscaler", "istiod-canary").isEmpty(), "autoscaleEnabled: false");
        assertEquals(2, Yamls.at(r.get("PodDisruptionBudget", "istiod-canary"), "spec.minAvailable"));
        assertEquals(Map.of("app", "istiod", "istio.io/rev", "canary"), Yamls.at(r.get("Service", "istiod-canary"), "spec.selector"));

        List<Object> validators = Yamls.list(r.get("ValidatingWebhookConfiguration", "istio-validator-canary-istio-system"), "webhooks");
        assertEquals(List.of("rev.validation.istio.io"), validators.stream().map(w -> Yamls.at(w, "name")).toList(),
                "a revision validates only the objects labelled with it");
        assertEquals("istiod-canary", Yamls.at(validators.get(0), "clientConfig.service.name"));
        List<Object> injectors = Yamls.list(r.get("MutatingWebhookConfiguration", "istio-sidecar-injector-canary"), "webhooks");
        assertEquals(List.of("rev.namespace.sidecar-injector.istio.io", "rev.object.sidecar-injector.istio.io"),
                injectors.stream().map(w -> Yamls.at(w, "name")).toList());

        MeshConfig mesh = mesh(r, "istio-canary");
        assertEquals("/dev/stdout", mesh.getAccessLogFile());
        assertTrue(mesh.getDefaultConfig().getHoldApplicationUntilProxyStarts().getValue());
        assertEquals("istiod-canary.istio-system.svc:15012", mesh.getDefaultConfig().getDiscoveryAddress(),
                "meshConfig merges over the chart's defaults, it does not replace them");
        assertEquals("mesh1", mesh.getDefaultConfig().getMeshId());

        Map<String, Object> injector = r.get("ConfigMap", "istio-sidecar-injector-canary");
        JsonObject values = JsonParser.parseString((String) Yamls.at(injector, "data.values")).getAsJsonObject();
        JsonObject proxy = values.getAsJsonObject("global").getAsJsonObject("proxy");
        assertEquals("512Mi", proxy.getAsJsonObject("resources").getAsJsonObject("limits").get("memory").getAsString());
        assertEquals("info", proxy.get("logLevel").getAsString());
        assertEquals("1.27.3", values.getAsJsonObject("global").get("tag").getAsString());
        assertEquals("canary", values.get("revision").getAsString());
        assertEquals(50, values.getAsJsonObject("pilot").getAsJsonObject("env").get("PILOT_PUSH_THROTTLE").getAsInt());
        Map<String, Object> config = Yamls.map(HelmChart.yaml((String) Yamls.at(injector, "data.config")), "");
        assertEquals(List.of(Map.of("matchExpressions", List.of(Map.of("key", "openshift.io/build.name", "operator", "Exists")))),
                config.get("neverInjectSelector"));

        // the keys MeshPilot does not act on are named, with their values, and nothing else is
        assertEquals(List.of("taint.enabled=true"), warnings(r.text()));
    }

    /** The CSR rules of the ClusterRole: none without RA mode; approval only for the named signers. */
    @Test
    void certificateSigningRulesOnlyInRaModeAndOnlyForTheNamedSigners(@TempDir Path dir)
            throws Exception {
        assertFalse(rules(HelmChart.render(null)).contains("certificates.k8s.io"), "no CSR rights by default");
        Path ra = dir.resolve("ra.yaml");
        Files.writeString(ra, """
                pilot:
                  env:
                    EXTERNAL_CA: ISTIOD_RA_KUBERNETES_API
                    K8S_SIGNER: example.com/mesh
                global:
                  certSigners: [example.com/other]
                """);
        List<Map<String, Object>> rules = ruleList(HelmChart.render(ra));
        Map<String, Object> approve = rules.stream().filter(r -> List.of("signers").equals(r.get("resources")))
                .findFirst().orElseThrow(() -> new AssertionError("no signers rule: " + rules));
        assertEquals(List.of("approve"), approve.get("verbs"));
        assertEquals(Set.of("example.com/mesh", "example.com/other"), Set.copyOf((List<?>) approve.get("resourceNames")),
                "approval for the named signers only, never for any signer");
        assertTrue(rules.stream().anyMatch(r -> List.of("certificatesigningrequests").equals(r.get("resources"))));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> ruleList(HelmChart.Rendered r) {
        return (List<Map<String, Object>>) r.get("ClusterRole", "istiod-clusterrole-istio-system").get("rules");
    }

    private static String rules(HelmChart.Rendered r) {
        return String.valueOf(ruleList(r));
    }

    @Test
    void installNotesWarnAboutUnsupportedValues() {
        String notes = new Helm(HelmChart.dir()).install().withName(HelmChart.RELEASE).withNamespace(HelmChart.NAMESPACE)
                .withValuesFile(OPERATOR_VALUES).clientOnly().dryRun().call().getOutput();
        assertTrue(notes.contains("WARNING: MeshPilot does not support these istiod values; they are ignored:"), notes);
        assertTrue(notes.contains("taint.enabled=true"), notes);
    }

    @Test
    void theHeapFollowsTheMemoryRequestInEveryUnit() {
        Map<String, String> heaps = new LinkedHashMap<>();
        heaps.put("1Gi", "-Xmx768m");
        heaps.put("512Mi", "-Xmx384m");
        heaps.put("3G", "-Xmx2145m");
        heaps.put("2097152Ki", "-Xmx1536m");
        heaps.put("1073741824", "-Xmx768m");
        heaps.put("1.5Gi", "-XX:MaxRAMPercentage=75.0"); // a form the chart does not convert: the JVM's own sizing
        for (var e : heaps.entrySet()) {
            String text = new Helm(HelmChart.dir()).template().withName(HelmChart.RELEASE).withNamespace(HelmChart.NAMESPACE)
                    .set("resources.requests.memory", e.getKey()).call();
            Map<String, Object> container = Yamls.map(HelmChart.parse(text).get("Deployment", "istiod"),
                    "spec.template.spec.containers[0]");
            assertEquals(e.getValue() + " -XX:+ExitOnOutOfMemoryError", env(container).get("JAVA_TOOL_OPTIONS"),
                    "request " + e.getKey());
        }
    }

    /** The warning comment lines of {@code helm template}'s output. */
    static List<String> warnings(String text) {
        List<String> out = new ArrayList<>();
        boolean in = false;
        for (String line : text.lines().toList()) {
            if (line.startsWith("# WARNING: MeshPilot does not support")) {
                in = true;
            } else if (in && line.startsWith("#   ")) {
                out.add(line.substring(4).trim());
            } else {
                in = false;
            }
        }
        return out;
    }

    static MeshConfig mesh(HelmChart.Rendered r, String configMap) throws Exception {
        String text = (String) Yamls.at(r.get("ConfigMap", configMap), "data.mesh");
        MeshConfigLoader loader = new MeshConfigLoader();
        loader.parseNetworks("meshNetworks", (String) Yamls.at(r.get("ConfigMap", configMap), "data.meshNetworks"));
        return loader.parseMesh("ConfigMap " + configMap, text);
    }

    /** The Deployment's arguments through MeshPilot's command line (the leading "discovery" is the subcommand). */
    static PilotArgs parse(List<String> args, Map<String, String> env) {
        assertEquals("discovery", args.get(0));
        Map<String, String> all = new HashMap<>(env);
        all.put("KUBERNETES_SERVICE_HOST", "10.96.0.1"); // in a pod
        all.put("KUBERNETES_SERVICE_PORT", "443");
        all.put("POD_NAMESPACE", HelmChart.NAMESPACE);
        String home = System.getProperty("meshpilot.home");
        try {
            System.setProperty("meshpilot.home", "/"); // the image's (src/main/docker/Dockerfile)
            return TestServers.args(args.subList(1, args.size()), all);
        } finally {
            if (home == null) {
                System.clearProperty("meshpilot.home");
            } else {
                System.setProperty("meshpilot.home", home);
            }
        }
    }

    /** The container's literal environment (name -> value; valueFrom entries left out). */
    static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (Object e : Yamls.list(container, "env")) {
            Object value = Yamls.at(e, "value");
            if (value != null) {
                env.put((String) Yamls.at(e, "name"), value.toString());
            }
        }
        return env;
    }

    static List<String> strings(Object list) {
        return ((List<?>) list).stream().map(Object::toString).toList();
    }
}
