package io.meshpilot.xds;

import static io.meshpilot.xds.GatewayApiEndToEndTest.condition;
import static io.meshpilot.xds.GatewayApiEndToEndTest.conditionIs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.ProxyAgentNode;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, acceptance 2 (first half): a waypoint end to end in one MeshPilot server in Kubernetes
 * mode with {@code PILOT_ENABLE_AMBIENT=true}, driven with real kubectl against the API server
 * stand-in. The Gateway API CRDs are installed after the server is up; the namespace {@code shop}
 * is labelled {@code istio.io/use-waypoint: waypoint} and a Gateway of class
 * {@code istio-waypoint} is applied as {@code istioctl waypoint apply -n shop} writes it. Then,
 * each by the component of the server that does it in istiod:
 * <ul>
 *   <li>the GatewayClass controller creates {@code istio-waypoint} for
 *       {@code istio.io/mesh-controller} (gatewaycommon/classinfo.go, gatewayclass.go), and the status
 *       leader accepts it (GetClassStatus);</li>
 *   <li>the deployment controller applies the {@code waypoint} template's ServiceAccount,
 *       Deployment and Service {@code waypoint}, owned by the Gateway
 *       (files/waypoint.yaml; field by field where a waypoint differs from a gateway);</li>
 *   <li>the status leader writes the Gateway's status: Accepted, and Programmed only once the
 *       Service has endpoints, with istiod's reasons and messages and both address types
 *       (gateway/conversion.go reportGatewayStatus).</li>
 * </ul>
 * A pod of that Deployment is made as the ReplicaSet controller would; its agent's node is a
 * {@code waypoint} node (what connects over xDS: the waypoint proxy's config is another part).
 */
class WaypointGatewayEndToEndTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String NS = "shop";
    static final String WAYPOINT = "waypoint";
    static final String POD_IP = "10.1.0.60";
    static final String HOSTNAME = "waypoint.shop.svc.cluster.local";
    /** What {@code istioctl waypoint apply -n shop} applies (istioctl/pkg/waypoint). */
    static final String WAYPOINT_GATEWAY = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata:
              name: waypoint
              namespace: shop
              labels: {istio.io/waypoint-for: service}
            spec:
              gatewayClassName: istio-waypoint
              listeners:
              - {name: mesh, port: 15008, protocol: HBONE}
            """;

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    MeshPilotServer server;

    @BeforeEach
    void startClusterAndServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        Path kubeconfig = api.writeKubeconfig(dir);
        kubectl = new Kubectl(Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH")),
                kubeconfig, dir.resolve("kubectl"));
        kubectl.run("create", "namespace", "istio-system").ok();
        kubectl.run("create", "namespace", NS).ok();
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, kubeconfig),
                Map.of("PILOT_ENABLE_AMBIENT", "true")));
        kubectl.run("create", "-f", GatewayApiEndToEndTest.CRDS.toAbsolutePath().toString()).ok();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    Optional<JsonObject> get(String kind, String name, String namespace) {
        var r = namespace.isEmpty() ? kubectl.run("get", kind, name, "-o", "json")
                : kubectl.run("get", kind, name, "-n", namespace, "-o", "json");
        return r.exit() == 0 ? Optional.of(JsonParser.parseString(r.stdout()).getAsJsonObject()) : Optional.empty();
    }

    JsonObject await(String kind, String name) throws InterruptedException {
        Await.until(kind + " " + NS + "/" + name, WAIT, () -> get(kind, name, NS).isPresent());
        return get(kind, name, NS).orElseThrow();
    }

    /** Waits for the waypoint's condition {@code type} to read {@code status}; a timeout shows the status last read. */
    void awaitGatewayCondition(String type, String status) throws InterruptedException {
        try {
            Await.until("the waypoint's " + type + "=" + status, WAIT, () -> conditionIs(gatewayStatus(), type, status));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; status: " + gatewayStatus(), e);
        }
    }

    JsonObject gatewayStatus() {
        JsonObject status = get("gateway", WAYPOINT, NS).orElseThrow().getAsJsonObject("status");
        return status == null ? new JsonObject() : status;
    }

    static JsonObject at(JsonObject o, String... path) {
        JsonObject at = o;
        for (String p : path) {
            at = at.getAsJsonObject(p);
        }
        return at;
    }

    /** The container's environment: literal values as they are, field references as {@code fieldRef:<path>}. */
    static Map<String, String> env(JsonObject container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonElement e : container.getAsJsonArray("env")) {
            JsonObject var = e.getAsJsonObject();
            env.put(var.get("name").getAsString(), var.has("value") ? var.get("value").getAsString()
                    : var.getAsJsonObject("valueFrom").has("fieldRef")
                    ? "fieldRef:" + at(var, "valueFrom", "fieldRef").get("fieldPath").getAsString()
                    : "resourceFieldRef:" + at(var, "valueFrom", "resourceFieldRef").get("resource").getAsString());
        }
        return env;
    }

    static List<String> strings(JsonArray array) {
        List<String> out = new ArrayList<>();
        array.forEach(e -> out.add(e.isJsonPrimitive() ? e.getAsString() : e.toString()));
        return out;
    }

    @Test
    void aWaypointGatewayIsDeployedFromTheWaypointTemplateAndProgrammedOnceItsServiceHasEndpoints() throws Exception {
        // 1. the class, once its CRD is there
        Await.until("the istio-waypoint class", WAIT, () -> get("gatewayclass", "istio-waypoint", "").isPresent());
        JsonObject classSpec = get("gatewayclass", "istio-waypoint", "").orElseThrow().getAsJsonObject("spec");
        assertEquals("istio.io/mesh-controller", classSpec.get("controllerName").getAsString());
        assertEquals("The default Istio waypoint GatewayClass", classSpec.get("description").getAsString());
        Await.until("the istio-waypoint class accepted", WAIT, () -> Optional.ofNullable(get("gatewayclass",
                "istio-waypoint", "").orElseThrow().getAsJsonObject("status")).map(st -> conditionIs(st, "Accepted", "True"))
                .orElse(false));
        assertEquals("Handled by Istio controller", condition(get("gatewayclass", "istio-waypoint", "").orElseThrow()
                .getAsJsonObject("status"), "Accepted").get("message").getAsString());

        // 2. the namespace enrolled in the waypoint, and the waypoint itself
        kubectl.run("label", "namespace", NS, "istio.io/use-waypoint=" + WAYPOINT).ok();
        kubectl.runWithInput(WAYPOINT_GATEWAY, "apply", "-f", "-").ok();
        String uid = await("gateway", WAYPOINT).getAsJsonObject("metadata").get("uid").getAsString();

        // 3. the waypoint template's objects, named after the Gateway alone and owned by it
        JsonObject deployment = await("deployment", WAYPOINT);
        JsonObject service = await("service", WAYPOINT);
        JsonObject account = await("serviceaccount", WAYPOINT);
        for (JsonObject o : List.of(deployment, service, account)) {
            JsonObject meta = o.getAsJsonObject("metadata");
            JsonObject owner = meta.getAsJsonArray("ownerReferences").get(0).getAsJsonObject();
            assertEquals(List.of("Gateway", WAYPOINT, uid), List.of(owner.get("kind").getAsString(),
                    owner.get("name").getAsString(), owner.get("uid").getAsString()), meta.toString());
            JsonObject labels = meta.getAsJsonObject("labels");
            assertEquals("istio.io-mesh-controller", labels.get("gateway.istio.io/managed").getAsString(), meta.toString());
            assertEquals("istio-waypoint", labels.get("gateway.networking.k8s.io/gateway-class-name").getAsString());
            assertEquals(WAYPOINT, labels.get("gateway.networking.k8s.io/gateway-name").getAsString());
        }
        JsonObject podTemplate = at(deployment, "spec", "template");
        JsonObject podLabels = at(podTemplate, "metadata", "labels");
        assertEquals("none", podLabels.get("istio.io/dataplane-mode").getAsString(), "ztunnel does not capture a waypoint");
        assertEquals("false", podLabels.get("sidecar.istio.io/inject").getAsString());
        assertEquals(WAYPOINT, podLabels.get("service.istio.io/canonical-name").getAsString());
        JsonObject podSpec = podTemplate.getAsJsonObject("spec");
        assertEquals(WAYPOINT, podSpec.get("serviceAccountName").getAsString());
        JsonObject proxy = podSpec.getAsJsonArray("containers").get(0).getAsJsonObject();
        assertEquals("istio-proxy", proxy.get("name").getAsString());
        assertEquals("docker.io/istio/proxyv2:1.28.0", proxy.get("image").getAsString(), "the chart's hub and tag");
        assertEquals(List.of("proxy", "waypoint", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--serviceCluster",
                        "waypoint.$(POD_NAMESPACE)", "--proxyLogLevel", "warning", "--proxyComponentLogLevel", "misc:error",
                        "--log_output_level", "default:info"), strings(proxy.getAsJsonArray("args")));
        Map<String, String> env = env(proxy);
        assertEquals("fieldRef:spec.serviceAccountName", env.get("ISTIO_META_SERVICE_ACCOUNT"));
        assertEquals("fieldRef:spec.nodeName", env.get("ISTIO_META_NODE_NAME"));
        assertEquals("istiod.istio-system.svc:15012", env.get("CA_ADDR"));
        assertEquals("istiod", env.get("PILOT_CERT_PROVIDER"));
        assertEquals("Kubernetes", env.get("ISTIO_META_CLUSTER_ID"));
        assertEquals("REDIRECT", env.get("ISTIO_META_INTERCEPTION_MODE"));
        assertEquals(WAYPOINT, env.get("ISTIO_META_WORKLOAD_NAME"));
        assertEquals("kubernetes://apis/apps/v1/namespaces/shop/deployments/waypoint", env.get("ISTIO_META_OWNER"));
        assertEquals("cluster.local", env.get("ISTIO_META_MESH_ID"));
        assertEquals("cluster.local", env.get("TRUST_DOMAIN"));
        assertEquals(List.of("15020/metrics", "15021/status-port", "15090/http-envoy-prom"),
                proxy.getAsJsonArray("ports").asList().stream().map(p -> p.getAsJsonObject().get("containerPort").getAsInt()
                        + "/" + p.getAsJsonObject().get("name").getAsString()).toList());
        assertEquals(JsonParser.parseString("""
                {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}"""),
                proxy.get("resources"), "global.waypoint.resources, the chart's defaults");

        JsonObject serviceSpec = service.getAsJsonObject("spec");
        assertEquals("ClusterIP", serviceSpec.get("type").getAsString());
        assertEquals(List.of("status-port/15021/tcp", "mesh/15008/hbone"), serviceSpec.getAsJsonArray("ports").asList()
                .stream().map(p -> p.getAsJsonObject().get("name").getAsString() + "/" + p.getAsJsonObject().get("port")
                        .getAsInt() + "/" + p.getAsJsonObject().get("appProtocol").getAsString()).toList());
        assertEquals(WAYPOINT, at(serviceSpec, "selector").get("gateway.networking.k8s.io/gateway-name").getAsString());
        assertEquals("PreferClose", at(service, "metadata", "annotations")
                .get("networking.istio.io/traffic-distribution").getAsString());

        // 4. accepted, but not programmed while its Service has no endpoints
        awaitGatewayCondition("Accepted", "True");
        awaitGatewayCondition("Programmed", "False");
        JsonObject waiting = condition(gatewayStatus(), "Programmed");
        assertEquals("AddressNotAssigned", waiting.get("reason").getAsString(), waiting.toString());
        assertEquals("Failed to assign to any requested addresses: no instances found for hostname \"" + HOSTNAME + "\"",
                waiting.get("message").getAsString());

        // 5. its pod, as the ReplicaSet controller makes it, is a waypoint node to its agent
        String podName = WAYPOINT + "-5d8f9c7b6-k2m4p";
        JsonObject pod = runPod(kubectl, podTemplate, podName);
        ProxyAgentNode node = ProxyAgentNode.of(pod, POD_IP);
        assertEquals("waypoint~" + POD_IP + "~" + podName + ".shop~shop.svc.cluster.local", node.nodeId());
        assertEquals(WAYPOINT, node.metadata().get("SERVICE_ACCOUNT"));

        // 6. once the Service has the pod as its endpoint: programmed, with the cluster IP and the hostname
        awaitGatewayCondition("Programmed", "True");
        JsonObject status = gatewayStatus();
        assertEquals("Resource accepted", condition(status, "Accepted").get("message").getAsString());
        assertEquals("Programmed", condition(status, "Programmed").get("reason").getAsString());
        assertEquals("Resource programmed, assigned to service(s) " + HOSTNAME + ":15008",
                condition(status, "Programmed").get("message").getAsString());
        String clusterIp = get("service", WAYPOINT, NS).orElseThrow().getAsJsonObject("spec").get("clusterIP").getAsString();
        assertEquals(List.of("IPAddress=" + clusterIp, "Hostname=" + HOSTNAME), status.getAsJsonArray("addresses").asList()
                .stream().map(a -> a.getAsJsonObject().get("type").getAsString() + "="
                        + a.getAsJsonObject().get("value").getAsString()).toList());
        JsonObject mesh = status.getAsJsonArray("listeners").get(0).getAsJsonObject();
        assertEquals("mesh", mesh.get("name").getAsString());
        for (String type : List.of("Accepted", "Programmed", "ResolvedRefs")) {
            assertTrue(conditionIs(mesh, type, "True"), type + ": " + mesh);
        }
        assertEquals(new JsonArray(), mesh.getAsJsonArray("supportedKinds"), "HBONE admits no route kinds");
    }

    /**
     * The pod the Deployment's ReplicaSet asks for, its IP as the kubelet reports it, and the
     * Service's EndpointSlice with it as the EndpointSlice controller writes it (both ports).
     */
    static JsonObject runPod(Kubectl kubectl, JsonObject podTemplate, String name) {
        JsonObject metadata = podTemplate.getAsJsonObject("metadata").deepCopy();
        metadata.addProperty("name", name);
        metadata.addProperty("namespace", NS);
        JsonObject pod = new JsonObject();
        pod.addProperty("apiVersion", "v1");
        pod.addProperty("kind", "Pod");
        pod.add("metadata", metadata);
        pod.add("spec", podTemplate.getAsJsonObject("spec").deepCopy());
        kubectl.runWithInput(pod.toString(), "apply", "-f", "-").ok();
        kubectl.run("patch", "pod", name, "-n", NS, "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" + POD_IP + "\",\"podIPs\":[{\"ip\":\"" + POD_IP + "\"}],"
                        + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}").ok();
        kubectl.runWithInput("""
                {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "waypoint-9xk2d", "namespace": "shop",
                              "labels": {"kubernetes.io/service-name": "waypoint"}},
                 "addressType": "IPv4",
                 "ports": [{"name": "status-port", "port": 15021, "protocol": "TCP"},
                           {"name": "mesh", "port": 15008, "protocol": "TCP"}],
                 "endpoints": [{"addresses": ["%s"], "conditions": {"ready": true},
                                "targetRef": {"kind": "Pod", "name": "%s", "namespace": "shop"}}]}
                """.formatted(POD_IP, name), "apply", "-f", "-").ok();
        return JsonParser.parseString(kubectl.run("get", "pod", name, "-n", NS, "-o", "json").stdout()).getAsJsonObject();
    }
}
