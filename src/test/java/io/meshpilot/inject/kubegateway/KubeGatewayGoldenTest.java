package io.meshpilot.inject.kubegateway;

import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.mesh.MeshConfigLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * istiod's TestConfigureIstioGateway (pilot/pkg/config/kube/gatewaycommon/deploymentcontroller_test.go)
 * over its goldens: for each case of a class istiod deploys with the {@code kube-gateway} or
 * {@code waypoint} template, the same Gateway, values and ConfigMaps (and, for the upgrade case,
 * the Deployment that exists), and what MeshPilot would apply (the controller-version claim, then
 * the rendered objects) compared with what istiod applies. As istiod's test, it runs with ambient
 * waypoints on: gateways that are not waypoints are labelled {@code istio.io/dataplane-mode: none}.
 *
 * <p>Compared as the API server would store them: a YAML null is an absent field. One thing of
 * istiod's test setup is not MeshPilot behaviour and is normalised: its values hold only what
 * each case sets (not the chart's defaults), so the Go template prints {@code <no value>} or
 * {@code <nil>} for the rest; MeshPilot prints the empty value, and such golden values match any
 * value.
 */
class KubeGatewayGoldenTest {
    private static final MeshConfig MESH = new MeshConfigLoader().defaults();
    private static final DeploymentInput.Settings SETTINGS = new DeploymentInput.Settings("Kubernetes", 128, "", true, false,
            true, true);
    private static final Map<String, Object> HUB_TAG = Map.of("hub", "test", "tag", "test");

    /** The goldens of classes MeshPilot does not deploy (istiod's test turns ambient and agentgateway on). */
    static final Map<String, String> NOT_RUN = Map.ofEntries(
            entry("istio-east-west.yaml", "istio-east-west class: ambient multi-network is not served"),
            entry("agentgateway.yaml", "agentgateway class: agentgateway is not supported"),
            entry("agentgateway-resources-null.yaml", "agentgateway class: agentgateway is not supported"),
            entry("agentgateway-waypoint.yaml", "agentgateway-waypoint class: agentgateway is not supported"),
            entry("agentgateway-waypoint-resources-null.yaml", "agentgateway-waypoint class: agentgateway is not supported"),
            entry("gateway-with-infrerencepool-extproc-infra-label.yaml",
                    "no test of istiod at 86c9f01 writes or reads it (a stale file)"));

    /** The cases run that MeshPilot does not match, and why; each must still differ, so the list stays true. */
    static final Map<String, String> NOT_MATCHED = Map.of(
            "proxy-config-crd.yaml", "ProxyConfig resources are not read: the gateway-name selected ProxyConfig's"
                    + " image type (distroless) is not applied to PROXY_CONFIG and the image");

    /** One case of istiod's test; {@code existingDeployment} is the Deployment already in the cluster, or null. */
    record Case(String golden, String gateway, Map<String, Object> global, boolean copyLabels, boolean quic,
                List<Map<String, String>> overlays, String existingDeployment) {
        Case(String golden, String gateway) {
            this(golden, gateway, HUB_TAG, true, false, List.of());
        }

        Case(String golden, String gateway, Map<String, Object> global, boolean copyLabels, boolean quic,
             List<Map<String, String>> overlays) {
            this(golden, gateway, global, copyLabels, quic, overlays, null);
        }

        /** A waypoint case: the given values, no overlays. */
        static Case waypoint(String golden, String gateway, Map<String, Object> global, String existingDeployment) {
            return new Case(golden, gateway, global, true, false, List.of(), existingDeployment);
        }
    }

    private static final String GW = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\n";

    private static List<Case> cases() {
        String customizations = """
                metadata: {name: namespace, namespace: default}
                spec:
                  gatewayClassName: istio
                  infrastructure:
                    labels: {foo: bar}
                    parametersRef: {group: "", kind: ConfigMap, name: gw-options}
                """;
        return List.of(
                new Case("simple.yaml", """
                        metadata: {name: default, namespace: default, labels: {should: see}, annotations: {should: see}}
                        spec: {gatewayClassName: istio}
                        """),
                new Case("manual-sa.yaml", """
                        metadata: {name: default, namespace: default, annotations: {gateway.istio.io/service-account: custom-sa}}
                        spec: {gatewayClassName: istio}
                        """),
                new Case("manual-ip.yaml", """
                        metadata: {name: default, namespace: default, annotations: {gateway.istio.io/name-override: default}}
                        spec: {gatewayClassName: istio, addresses: [{type: IPAddress, value: 1.2.3.4}]}
                        """),
                new Case("cluster-ip.yaml", """
                        metadata:
                          name: default
                          namespace: default
                          annotations: {networking.istio.io/service-type: ClusterIP, gateway.istio.io/name-override: default}
                        spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
                        """),
                new Case("multinetwork.yaml", """
                        metadata:
                          name: default
                          namespace: default
                          labels: {topology.istio.io/network: network-1}
                          annotations: {gateway.istio.io/name-override: default}
                        spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
                        """),
                new Case("quic-disabled.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: istio, listeners: [{name: https, port: 443, protocol: HTTPS}]}
                        """),
                new Case("quic-enabled.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: istio, listeners: [{name: https, port: 443, protocol: HTTPS}]}
                        """, HUB_TAG, true, true, List.of()),
                new Case("kube-gateway-resources-null.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: istio}
                        """, Map.of("proxy", Map.of("resources", Map.of("limits", Map.of("memory", "500Mi"),
                        "requests", Map.of("memory", "150Mi")))), true, false, List.of()),
                new Case("proxy-config-crd.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: istio}
                        """),
                new Case("custom-class.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: custom}
                        """),
                new Case("infrastructure-labels-annotations.yaml", """
                        metadata: {name: default, namespace: default, labels: {should-not: see}, annotations: {should-not: see}}
                        spec:
                          gatewayClassName: istio
                          infrastructure:
                            labels: {foo: bar, gateway.networking.k8s.io/ignore: "true"}
                            annotations: {fizz: buzz, gateway.networking.k8s.io/ignore: "true"}
                        """),
                new Case("kube-gateway-ambient-redirect.yaml", """
                        metadata: {name: default, namespace: default, labels: {istio.io/dataplane-mode: ambient}}
                        spec: {gatewayClassName: istio}
                        """),
                new Case("kube-gateway-ambient-redirect-infra.yaml", """
                        metadata: {name: default, namespace: default}
                        spec: {gatewayClassName: istio, infrastructure: {labels: {istio.io/dataplane-mode: ambient}}}
                        """),
                new Case("customizations.yaml", customizations, HUB_TAG, true, false, List.of(Map.of(
                        "podDisruptionBudget", "\nspec:\n  minAvailable: 1",
                        "horizontalPodAutoscaler", "\nspec:\n  minReplicas: 2\n  maxReplicas: 2",
                        "deployment", """

                                metadata:
                                  annotations:
                                    cm-annotation: cm-annotation-value
                                spec:
                                  replicas: 4
                                  template:
                                    spec:
                                      containers:
                                      - name: istio-proxy
                                        resources:
                                          requests:
                                            cpu: 222m"""))),
                new Case("illegal_customizations.yaml", customizations, HUB_TAG, true, false,
                        List.of(Map.of("deployment", "\nmetadata:\n  name: not-allowed"))),
                new Case("copy-labels-annotations-disabled-infra-set.yaml", """
                        metadata: {name: default, namespace: default, labels: {should-not: see}, annotations: {should-not: see}}
                        spec:
                          gatewayClassName: istio
                          infrastructure:
                            labels: {should: see-infra-label}
                            annotations: {should: see-infra-annotation}
                        """, HUB_TAG, false, false, List.of()),
                new Case("copy-labels-annotations-disabled-infra-nil.yaml", """
                        metadata: {name: default, namespace: default, labels: {should-not: see}, annotations: {should-not: see}}
                        spec: {gatewayClassName: istio}
                        """, HUB_TAG, false, false, List.of()),
                new Case("copy-labels-annotations-enabled-infra-nil.yaml", """
                        metadata: {name: default, namespace: default, labels: {should: see}, annotations: {should: see}}
                        spec: {gatewayClassName: istio}
                        """, HUB_TAG, true, false, List.of()),
                // an explicitly set network is not overwritten by the values'
                Case.waypoint("waypoint.yaml", """
                        metadata: {name: namespace, namespace: default, labels: {topology.istio.io/network: network-1}}
                        spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, port: 15008, protocol: ALL}]}
                        """, Map.of("hub", "test", "tag", "test", "network", "network-2"), null),
                Case.waypoint("waypoint-resources-null.yaml", """
                        metadata: {name: namespace, namespace: default}
                        spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, port: 15008, protocol: ALL}]}
                        """, Map.of("waypoint", Map.of("resources", Map.of("limits", Map.of("memory", "500Mi"),
                        "requests", Map.of("memory", "150Mi")))), null),
                Case.waypoint("waypoint-no-network-label.yaml", """
                        metadata: {name: namespace, namespace: default}
                        spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, port: 15008, protocol: ALL}]}
                        """, Map.of("hub", "test", "tag", "test", "network", "network-1"), null),
                // istiod's upgradeDeployment: made before 1.24, it selects on istio.io/gateway-name
                Case.waypoint("istio-upgrade-to-1.24.yaml", """
                        metadata: {name: test-upgrade, namespace: default}
                        spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, port: 15008, protocol: ALL}]}
                        """, Map.of("hub", "test", "tag", "test", "network", "network-1"), """
                        apiVersion: apps/v1
                        kind: Deployment
                        metadata: {name: test-upgrade, namespace: default}
                        spec:
                          selector:
                            matchLabels: {gateway.networking.k8s.io/gateway-name: test-upgrade, istio.io/gateway-name: test-upgrade}
                          template:
                            metadata:
                              labels: {gateway.networking.k8s.io/gateway-name: test-upgrade, istio.io/gateway-name: test-upgrade}
                        """));
    }

    @Test
    void istiodsDeploymentGoldens() throws IOException {
        List<String> files = goldenFiles();
        List<Case> cases = cases();
        List<String> matched = new ArrayList<>();
        Map<String, String> differences = new TreeMap<>();
        for (Case c : cases) {
            List<JsonElement> golden = yamlDocuments(resource(c.golden()));
            List<JsonElement> ours = applied(c);
            String difference = compare(golden, ours);
            if (difference == null) {
                matched.add(c.golden());
            } else {
                differences.put(c.golden(), difference);
            }
        }
        System.out.printf("kube-gateway goldens: %d of %d run cases match (%d goldens, %d not run)%n", matched.size(),
                cases.size(), files.size(), NOT_RUN.size());
        differences.forEach((k, v) -> System.out.println("  differs: " + k + ": " + v + " -- " + NOT_MATCHED.get(k)));
        NOT_RUN.forEach((k, v) -> System.out.println("  not run: " + k + ": " + v));
        assertEquals(NOT_MATCHED.keySet(), differences.keySet(), "cases differing: " + differences);
        List<String> accounted = new ArrayList<>(cases.stream().map(Case::golden).toList());
        accounted.addAll(NOT_RUN.keySet());
        assertEquals(List.of(), files.stream().filter(f -> !accounted.contains(f)).toList(), "every golden is run or listed");
    }

    /**
     * What the controller applies for a case: the version claim, then the objects (none when an
     * overlay is refused), a Deployment keeping the selector of the one that exists.
     */
    private static List<JsonElement> applied(Case c) {
        JsonObject gateway = yamlDocuments(GW + c.gateway()).get(0).getAsJsonObject();
        DeploymentClass deploymentClass = c.gateway().contains("istio-waypoint") ? DeploymentClass.WAYPOINT
                : DeploymentClass.KUBE_GATEWAY;
        InjectionValues values = testValues(c.global());
        DeploymentInput in = DeploymentInput.of(gateway, List.of(),
                new DeploymentInput.Settings(SETTINGS.clusterId(), SETTINGS.kubeVersion(), SETTINGS.revision(),
                        c.copyLabels(), c.quic(), SETTINGS.manualDeployment(), SETTINGS.ambientWaypoints()),
                deploymentClass, values.string("global.network"));
        List<JsonElement> out = new ArrayList<>();
        out.add(KubeGatewayTemplate.controllerVersionClaim());
        try {
            for (JsonObject o : KubeGatewayTemplate.objects(in, values, MESH, c.overlays())) {
                if (c.existingDeployment() != null && o.get("kind").getAsString().equals("Deployment")) {
                    GatewayDeploymentController.keepLegacySelector(o,
                            yamlDocuments(c.existingDeployment()).get(0).getAsJsonObject());
                }
                out.add(o);
            }
        } catch (IllegalArgumentException refused) {
            // istiod logs the render error and applies nothing more
        }
        return out;
    }

    /** Only what the case sets, as istiod's test gives its template (none of the chart's defaults). */
    private static InjectionValues testValues(Map<String, Object> global) {
        return InjectionValues.parse("{\"revision\":null,\"pilot\":null,\"istio_cni\":null,"
                + "\"sidecarInjectorWebhook\":null,\"global\":null}").with(Map.of("global", global));
    }

    /** Null when they match; else where they first differ. */
    static String compare(List<JsonElement> golden, List<JsonElement> ours) {
        if (golden.size() != ours.size()) {
            return golden.size() + " documents in the golden, " + ours.size() + " rendered";
        }
        for (int i = 0; i < golden.size(); i++) {
            String d = differ("doc" + i, normalised(golden.get(i)), ours.get(i));
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static String differ(String path, JsonElement golden, JsonElement ours) {
        if (golden.isJsonPrimitive() && golden.getAsJsonPrimitive().isString()
                && (golden.getAsString().contains("<no value>") || golden.getAsString().contains("<nil>"))) {
            return ours != null && ours.isJsonPrimitive() ? null : path + ": golden " + golden + " (unset value), ours " + ours;
        }
        if (ours == null) {
            return path + ": missing (golden " + golden + ")";
        }
        if (golden.isJsonObject() && ours.isJsonObject()) {
            for (String k : golden.getAsJsonObject().keySet()) {
                String d = differ(path + "." + k, golden.getAsJsonObject().get(k), ours.getAsJsonObject().get(k));
                if (d != null) {
                    return d;
                }
            }
            for (String k : ours.getAsJsonObject().keySet()) {
                if (!golden.getAsJsonObject().has(k)) {
                    return path + "." + k + ": not in the golden (ours " + ours.getAsJsonObject().get(k) + ")";
                }
            }
            return null;
        }
        if (golden.isJsonArray() && ours.isJsonArray()) {
            JsonArray g = golden.getAsJsonArray();
            JsonArray o = ours.getAsJsonArray();
            if (g.size() != o.size()) {
                return path + ": " + g.size() + " items in the golden, " + o.size() + " ours: " + g + " vs " + o;
            }
            for (int i = 0; i < g.size(); i++) {
                String d = differ(path + "[" + i + "]", g.get(i), o.get(i));
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        if (golden.isJsonPrimitive() && ours.isJsonPrimitive() && golden.getAsJsonPrimitive().isNumber()
                && ours.getAsJsonPrimitive().isNumber()) {
            return golden.getAsBigDecimal().compareTo(ours.getAsBigDecimal()) == 0 ? null
                    : path + ": golden " + golden + ", ours " + ours;
        }
        return golden.equals(ours) ? null : path + ": golden " + golden + ", ours " + ours;
    }

    /** The golden as the API server stores it (nulls are absent; the template's unquoted empty uid is ""). */
    private static JsonElement normalised(JsonElement e) {
        if (e.isJsonArray()) {
            JsonArray out = new JsonArray();
            e.getAsJsonArray().forEach(x -> out.add(normalised(x)));
            return out;
        }
        if (!e.isJsonObject()) {
            return e;
        }
        JsonObject out = new JsonObject();
        for (var m : e.getAsJsonObject().entrySet()) {
            if (m.getKey().equals("uid") && m.getValue().isJsonNull()) {
                out.addProperty("uid", "");
            } else if (!m.getValue().isJsonNull()) {
                out.add(m.getKey(), normalised(m.getValue()));
            }
        }
        return out;
    }

    static List<JsonElement> yamlDocuments(String text) {
        List<JsonElement> docs = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(text)) {
            if (doc != null) {
                docs.add(new GsonBuilder().serializeNulls().create().toJsonTree(doc));
            }
        }
        return docs;
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = KubeGatewayGoldenTest.class.getResourceAsStream("/istio-gateway-deployment/" + name)) {
            if (in == null) {
                throw new IOException("no golden " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static List<String> goldenFiles() throws IOException {
        try (Stream<Path> dir = Files.list(Path.of("src/test/resources/istio-gateway-deployment"))) {
            return dir.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).sorted().toList();
        }
    }
}
