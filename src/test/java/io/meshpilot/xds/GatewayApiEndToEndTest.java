package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.ProxyAgentNode;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WorkloadChannels;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33, acceptance 2: the Gateway API end to end in one MeshPilot server in Kubernetes mode,
 * driven with real kubectl against the API server stand-in. The Gateway API CRDs (v1.6.0,
 * standard channel) are installed after the server is up, as a cluster admin following Istio's
 * getting-started guide does; then two Services with EndpointSlices, a Gateway of class
 * {@code istio} with an HTTP listener on 80 for {@code shop.example.com}, and an HTTPRoute with a
 * header match ({@code x-canary: yes} to reviews-v2) and a 90/10 split. What istiod does with them,
 * each part by the component that does it in the server:
 * <ul>
 *   <li>the deployment controller writes the ServiceAccount, Deployment and Service
 *       {@code web-istio}, owned by the Gateway (gatewaycommon/deploymentcontroller.go);</li>
 *   <li>a pod of that Deployment's template (created as the ReplicaSet controller would, its IP
 *       set as the kubelet would, its EndpointSlice as the EndpointSlice controller would)
 *       connects on 15012 with its service account's identity and gets the listener on 80 and
 *       the route with istiod's precedence (the header match first) and weights;</li>
 *   <li>the status leader writes the Gateway's and the route's status (conditions.go);</li>
 *   <li>a route to a Service that does not exist gets {@code ResolvedRefs=False/BackendNotFound}
 *       while the good route stays served unchanged.</li>
 * </ul>
 *
 * <p>In order: the second adds a route the first's {@code attachedRoutes} would count.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayApiEndToEndTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final Path CRDS = Path.of("src/test/resources/kube/gateway-api/standard");
    static final String NS = "shop";
    static final String GATEWAY = "web";
    /** The deployment controller's name for the Gateway's objects: {@code <gateway>-<class>}. */
    static final String DEPLOYED = GATEWAY + "-istio";
    static final String HOST = "shop.example.com";
    static final String POD_IP = "10.1.0.40";
    static final String V1_CLUSTER = "outbound|9080||reviews-v1.shop.svc.cluster.local";
    static final String V2_CLUSTER = "outbound|9080||reviews-v2.shop.svc.cluster.local";

    static final String GATEWAY_AND_ROUTE = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata: {name: web, namespace: shop}
            spec:
              gatewayClassName: istio
              listeners:
              - {name: http, hostname: shop.example.com, port: 80, protocol: HTTP}
            ---
            apiVersion: gateway.networking.k8s.io/v1
            kind: HTTPRoute
            metadata: {name: reviews, namespace: shop}
            spec:
              parentRefs: [{name: web}]
              hostnames: [shop.example.com]
              rules:
              - backendRefs:
                - {name: reviews-v1, port: 9080, weight: 90}
                - {name: reviews-v2, port: 9080, weight: 10}
              - matches: [{headers: [{name: x-canary, value: "yes"}]}]
                backendRefs: [{name: reviews-v2, port: 9080}]
            """;

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        for (String ns : List.of("istio-system", NS)) {
            kubectl.run("create", "namespace", ns).ok();
        }
        server = TestServers.startKubernetes(dir, api.writeKubeconfig(dir));

        kubectl.run("create", "-f", CRDS.toAbsolutePath().toString()).ok();
        kubectl.runWithInput(service("reviews-v1", "10.1.0.11") + "---\n" + service("reviews-v2", "10.1.0.12"),
                "apply", "-f", "-").ok();
        // the stand-in serves a CRD's kind once it is created, as an established CRD
        kubectl.runWithInput(GATEWAY_AND_ROUTE, "apply", "-f", "-").ok();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    /** A Service {@code name} of the app on 9080 and the EndpointSlice the EndpointSlice controller makes for it. */
    static String service(String name, String ip) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %1$s, namespace: shop}
                spec:
                  selector: {app: %1$s}
                  ports: [{name: http, port: 9080, targetPort: 9080}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: %1$s-abc12, namespace: shop, labels: {kubernetes.io/service-name: %1$s}}
                addressType: IPv4
                ports: [{name: http, port: 9080, protocol: TCP}]
                endpoints: [{addresses: [%2$s], conditions: {ready: true}}]
                """.formatted(name, ip);
    }

    static Optional<JsonObject> get(String kind, String name) {
        var r = kubectl.run("get", kind, name, "-n", NS, "-o", "json");
        return r.exit() == 0 ? Optional.of(JsonParser.parseString(r.stdout()).getAsJsonObject()) : Optional.empty();
    }

    static JsonObject await(String kind, String name) throws InterruptedException {
        Await.until(kind + " " + NS + "/" + name, WAIT, () -> get(kind, name).isPresent());
        return get(kind, name).orElseThrow();
    }

    /** The condition {@code type} of a {@code conditions} array, or null. */
    static JsonObject condition(JsonObject holder, String type) {
        JsonArray conditions = holder.getAsJsonArray("conditions");
        if (conditions != null) {
            for (JsonElement c : conditions) {
                if (c.getAsJsonObject().get("type").getAsString().equals(type)) {
                    return c.getAsJsonObject();
                }
            }
        }
        return null;
    }

    static boolean conditionIs(JsonObject holder, String type, String status) {
        JsonObject c = condition(holder, type);
        return c != null && c.get("status").getAsString().equals(status);
    }

    /** Our entry of a route's {@code status.parents}, or null. */
    static JsonObject routeParent(String route) {
        JsonObject status = get("httproute", route).orElseThrow().getAsJsonObject("status");
        if (status == null || !status.has("parents")) {
            return null;
        }
        for (JsonElement p : status.getAsJsonArray("parents")) {
            if (p.getAsJsonObject().get("controllerName").getAsString().equals("istio.io/gateway-controller")) {
                return p.getAsJsonObject();
            }
        }
        return null;
    }

    /**
     * The pod the Deployment's ReplicaSet asks for, as the API server stores it: the template's
     * metadata and spec under a generated name, then its IP as the kubelet reports it, and the
     * Service's EndpointSlice with it as the EndpointSlice controller writes it.
     */
    static JsonObject runPodOf(JsonObject deployment, String name, String ip) {
        JsonObject template = deployment.getAsJsonObject("spec").getAsJsonObject("template").deepCopy();
        JsonObject metadata = template.getAsJsonObject("metadata");
        metadata.addProperty("name", name);
        metadata.addProperty("namespace", NS);
        metadata.getAsJsonObject("labels").addProperty("pod-template-hash", "7c9d8b6f5");
        JsonObject pod = new JsonObject();
        pod.addProperty("apiVersion", "v1");
        pod.addProperty("kind", "Pod");
        pod.add("metadata", metadata);
        pod.add("spec", template.getAsJsonObject("spec"));
        kubectl.runWithInput(pod.toString(), "apply", "-f", "-").ok();
        kubectl.run("patch", "pod", name, "-n", NS, "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" + ip + "\",\"podIPs\":[{\"ip\":\"" + ip + "\"}],"
                        + "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}").ok();
        JsonObject service = get("service", DEPLOYED).orElseThrow();
        JsonArray ports = new JsonArray();
        for (JsonElement p : service.getAsJsonObject("spec").getAsJsonArray("ports")) {
            JsonObject port = new JsonObject();
            port.addProperty("name", p.getAsJsonObject().get("name").getAsString());
            port.addProperty("port", targetPort(p.getAsJsonObject()));
            port.addProperty("protocol", "TCP");
            ports.add(port);
        }
        kubectl.runWithInput("""
                {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "%1$s-x7k2p", "namespace": "%2$s", "labels": {"kubernetes.io/service-name": "%1$s"}},
                 "addressType": "IPv4", "ports": %3$s,
                 "endpoints": [{"addresses": ["%4$s"], "conditions": {"ready": true},
                                "targetRef": {"kind": "Pod", "name": "%5$s", "namespace": "%2$s"}}]}
                """.formatted(DEPLOYED, NS, ports, ip, name), "apply", "-f", "-").ok();
        return get("pod", name).orElseThrow();
    }

    /** The Service port's numeric target port (the port itself when unset, as Kubernetes defaults it). */
    static int targetPort(JsonObject port) {
        return port.has("targetPort") && port.get("targetPort").getAsJsonPrimitive().isNumber()
                ? port.get("targetPort").getAsInt() : port.get("port").getAsInt();
    }

    /** The gateway pod's proxy, connected on 15012 with its service account's identity as its agent does. */
    static AdsClient connect(ProxyAgentNode node) throws Exception {
        return new AdsClient(WorkloadChannels.secureXds(server,
                "spiffe://cluster.local/ns/" + NS + "/sa/" + node.metadata().get("SERVICE_ACCOUNT")),
                node.nodeId(), node.metadata());
    }

    /** The gateway's proxy, once its Deployment exists and its pod runs. */
    static ProxyAgentNode gatewayNode;

    static synchronized ProxyAgentNode gatewayNode() throws Exception {
        if (gatewayNode == null) {
            JsonObject pod = runPodOf(await("deployment", DEPLOYED), DEPLOYED + "-7c9d8b6f5-q4w8z", POD_IP);
            gatewayNode = ProxyAgentNode.of(pod, POD_IP);
        }
        return gatewayNode;
    }

    static Listener listener(DiscoveryResponse lds, String name) throws Exception {
        for (Any a : lds.getResourcesList()) {
            Listener l = a.unpack(Listener.class);
            if (l.getName().equals(name)) {
                return l;
            }
        }
        return null;
    }

    static VirtualHost virtualHost(DiscoveryResponse rds, String route, String domain) throws Exception {
        for (Any a : rds.getResourcesList()) {
            RouteConfiguration rc = a.unpack(RouteConfiguration.class);
            if (rc.getName().equals(route)) {
                for (VirtualHost vh : rc.getVirtualHostsList()) {
                    if (vh.getDomainsList().contains(domain)) {
                        return vh;
                    }
                }
            }
        }
        return null;
    }

    /** Subscribes to every listener and returns the first answer holding {@code name}, acking those before. */
    static Listener awaitListener(AdsClient gw, String name) throws Exception {
        gw.subscribe(TypeUrls.LISTENER, List.of());
        DiscoveryResponse lds = gw.await(TypeUrls.LISTENER, WAIT);
        while (listener(lds, name) == null) {
            gw.ack(lds, List.of()); // the converted config is still on its way: its push follows
            lds = gw.await(TypeUrls.LISTENER, WAIT);
        }
        gw.ack(lds, List.of());
        return listener(lds, name);
    }

    @Test
    @Order(1)
    void theGatewayIsDeployedServedToItsPodAndItsStatusAndTheRoutesAreWritten() throws Exception {
        // 3. the deployment controller's objects, owned by the Gateway, the Service on the listener's port
        String uid = await("gateway", GATEWAY).getAsJsonObject("metadata").get("uid").getAsString();
        JsonObject deployment = await("deployment", DEPLOYED);
        JsonObject service = await("service", DEPLOYED);
        JsonObject account = await("serviceaccount", DEPLOYED);
        for (JsonObject o : List.of(deployment, service, account)) {
            JsonObject owner = o.getAsJsonObject("metadata").getAsJsonArray("ownerReferences").get(0).getAsJsonObject();
            assertEquals(List.of("Gateway", GATEWAY, uid), List.of(owner.get("kind").getAsString(),
                    owner.get("name").getAsString(), owner.get("uid").getAsString()), o.getAsJsonObject("metadata").toString());
        }
        List<String> ports = new ArrayList<>();
        service.getAsJsonObject("spec").getAsJsonArray("ports").forEach(p -> ports.add(
                p.getAsJsonObject().get("name").getAsString() + "/" + p.getAsJsonObject().get("port").getAsInt()));
        assertEquals(List.of("status-port/15021", "http/80"), ports);
        assertEquals(DEPLOYED, deployment.getAsJsonObject("spec").getAsJsonObject("template").getAsJsonObject("spec")
                .get("serviceAccountName").getAsString());

        // 4. that pod's gateway proxy: the listener on 80 and the route, header match first, then 90/10
        ProxyAgentNode node = gatewayNode();
        assertEquals("router~" + POD_IP + "~" + DEPLOYED + "-7c9d8b6f5-q4w8z.shop~shop.svc.cluster.local", node.nodeId());
        try (AdsClient gw = connect(node)) {
            assertNotNull(awaitListener(gw, "0.0.0.0_80"));
            gw.subscribe(TypeUrls.ROUTE, List.of("http.80"));
            VirtualHost vh = virtualHost(gw.await(TypeUrls.ROUTE, WAIT), "http.80", HOST);
            assertNotNull(vh, "a virtual host for " + HOST);
            assertEquals(2, vh.getRoutesCount(), vh.toString());
            Route canary = vh.getRoutes(0);
            assertEquals("x-canary", canary.getMatch().getHeaders(0).getName(), "the header match first: " + vh);
            assertEquals("yes", canary.getMatch().getHeaders(0).getStringMatch().getExact());
            assertEquals(V2_CLUSTER, canary.getRoute().getCluster());
            WeightedCluster split = vh.getRoutes(1).getRoute().getWeightedClusters();
            assertEquals(List.of(V1_CLUSTER + "=90", V2_CLUSTER + "=10"), split.getClustersList().stream()
                    .map(c -> c.getName() + "=" + c.getWeight().getValue()).toList());
            // the clusters' endpoints are the EndpointSlices' addresses
            gw.subscribe(TypeUrls.ENDPOINT, List.of(V1_CLUSTER, V2_CLUSTER));
            List<String> endpoints = new ArrayList<>();
            for (Any a : gw.await(TypeUrls.ENDPOINT, WAIT).getResourcesList()) {
                ClusterLoadAssignment cla = a.unpack(ClusterLoadAssignment.class);
                cla.getEndpointsList().forEach(l -> l.getLbEndpointsList().forEach(e -> endpoints.add(cla.getClusterName()
                        + "=" + e.getEndpoint().getAddress().getSocketAddress().getAddress())));
            }
            assertEquals(List.of(V1_CLUSTER + "=10.1.0.11", V2_CLUSTER + "=10.1.0.12"), endpoints.stream().sorted().toList());
            assertNull(gw.error());
        }

        // 5. the status the leader wrote, read back with kubectl, once the cloud's load balancer
        // controller gave the LoadBalancer Service its address (until then istiod's Programmed is
        // False: address pending)
        kubectl.run("-n", NS, "patch", "service", DEPLOYED, "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"34.1.2.3\"}]}}}").ok();
        Await.until("the Gateway programmed", WAIT, () -> conditionIs(get("gateway", GATEWAY).orElseThrow()
                .getAsJsonObject("status"), "Programmed", "True"));
        JsonObject status = get("gateway", GATEWAY).orElseThrow().getAsJsonObject("status");
        assertTrue(conditionIs(status, "Accepted", "True"), status.toString());
        assertEquals("Resource programmed, assigned to service(s) " + DEPLOYED + ".shop.svc.cluster.local:80",
                condition(status, "Programmed").get("message").getAsString());
        assertEquals("IPAddress", status.getAsJsonArray("addresses").get(0).getAsJsonObject().get("type").getAsString());
        assertEquals("34.1.2.3",
                status.getAsJsonArray("addresses").get(0).getAsJsonObject().get("value").getAsString());
        JsonObject http = status.getAsJsonArray("listeners").get(0).getAsJsonObject();
        assertEquals("http", http.get("name").getAsString());
        assertEquals(1, http.get("attachedRoutes").getAsInt(), http.toString());
        for (String type : List.of("Accepted", "Programmed", "ResolvedRefs")) {
            assertTrue(conditionIs(http, type, "True"), type + ": " + http);
        }
        assertFalse(conditionIs(http, "Conflicted", "True"), http.toString());
        Await.until("the route's status", WAIT, () -> routeParent("reviews") != null);
        JsonObject parent = routeParent("reviews");
        assertEquals(GATEWAY, parent.getAsJsonObject("parentRef").get("name").getAsString());
        assertEquals("Route was valid", condition(parent, "Accepted").get("message").getAsString());
        assertTrue(conditionIs(parent, "Accepted", "True") && conditionIs(parent, "ResolvedRefs", "True"), parent.toString());
        assertEquals("All references resolved", condition(parent, "ResolvedRefs").get("message").getAsString());
    }

    @Test
    @Order(2)
    void aRouteToAMissingServiceIsReportedAndTheGoodRouteStaysServedUnchanged() throws Exception {
        try (AdsClient gw = connect(gatewayNode())) {
            awaitListener(gw, "0.0.0.0_80");
            gw.subscribe(TypeUrls.ROUTE, List.of("http.80"));
            DiscoveryResponse before = gw.await(TypeUrls.ROUTE, WAIT);
            VirtualHost good = virtualHost(before, "http.80", HOST);
            while (good == null || good.getRoutesCount() < 2) { // the route is still on its way
                gw.ack(before, List.of("http.80"));
                before = gw.await(TypeUrls.ROUTE, WAIT);
                good = virtualHost(before, "http.80", HOST);
            }
            gw.ack(before, List.of("http.80"));

            kubectl.runWithInput("""
                    apiVersion: gateway.networking.k8s.io/v1
                    kind: HTTPRoute
                    metadata: {name: ratings, namespace: shop}
                    spec:
                      parentRefs: [{name: web}]
                      hostnames: [shop.example.com]
                      rules:
                      - matches: [{path: {type: PathPrefix, value: /ratings}}]
                        backendRefs: [{name: ratings, port: 9080}]
                    """, "apply", "-f", "-").ok();
            Await.until("the missing backend reported", WAIT, () -> {
                JsonObject p = routeParent("ratings");
                return p != null && conditionIs(p, "ResolvedRefs", "False");
            });
            JsonObject resolved = condition(routeParent("ratings"), "ResolvedRefs");
            assertEquals("BackendNotFound", resolved.get("reason").getAsString());
            assertEquals("backend(ratings.shop.svc.cluster.local) not found", resolved.get("message").getAsString());

            // istiod keeps the rule, its backend a cluster that never exists answered with 500; the good routes are untouched
            DiscoveryResponse after = gw.await(TypeUrls.ROUTE, WAIT);
            VirtualHost now = virtualHost(after, "http.80", HOST);
            assertNotNull(now, after.toString());
            String missing = "outbound|9080||ratings.shop.svc.cluster.local";
            List<Route> others = now.getRoutesList().stream().filter(r -> !r.getRoute().getCluster().equals(missing)).toList();
            assertEquals(good.getRoutesList(), others, "the good routes as they were");
            Route ratings = now.getRoutesList().stream().filter(r -> !others.contains(r)).findFirst().orElseThrow();
            assertEquals("/ratings", ratings.getMatch().getPathSeparatedPrefix());
            assertEquals(RouteAction.ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR,
                    ratings.getRoute().getClusterNotFoundResponseCode(), ratings.toString());
            assertNull(gw.error());
        }
    }
}
