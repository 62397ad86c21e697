package io.meshpilot.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole server in Kubernetes mode with the Gateway API: a Gateway's {@code Programmed}
 * condition follows its Service's endpoints, as istiod's (whose GatewayContext is rebuilt on the
 * full push the gateway pods' first endpoints cause). Objects are applied with kubectl to the API
 * server stand-in; the status is what the server's status writer put on the Gateway there.
 */
class GatewayApiProgrammedTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String GATEWAY = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata: {name: web, namespace: shop}
            spec:
              gatewayClassName: istio
              listeners: [{name: http, port: 80, protocol: HTTP}]
            """;
    /** The Service the deployment controller would make for {@code web} (the controller is off here). */
    static final String SERVICE = """
            apiVersion: v1
            kind: Service
            metadata: {name: web-istio, namespace: shop, labels: {gateway.istio.io/managed: istio.io-gateway-controller}}
            spec:
              clusterIP: 10.96.8.8
              selector: {gateway.networking.k8s.io/gateway-name: web}
              ports: [{name: http, port: 80, targetPort: 80}]
            """;
    static final String READY_POD = """
            apiVersion: v1
            kind: Pod
            metadata: {name: web-istio-1, namespace: shop, labels: {gateway.networking.k8s.io/gateway-name: web}}
            spec: {containers: [{name: istio-proxy, image: proxyv2}]}
            status: {phase: Running, podIP: 10.1.0.20}
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata: {name: web-istio-1, namespace: shop, labels: {kubernetes.io/service-name: web-istio}}
            addressType: IPv4
            ports: [{name: http, port: 80, protocol: TCP}]
            endpoints:
            - addresses: [10.1.0.20]
              conditions: {ready: true}
              targetRef: {kind: Pod, name: web-istio-1, namespace: shop}
            """;

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    MeshPilotServer server;

    @BeforeEach
    void cluster() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        kubectl.run("create", "-f", Path.of("src/test/resources/kube/gateway-api/standard").toAbsolutePath().toString()).ok();
        kubectl.run("create", "namespace", "istio-system").ok();
        kubectl.run("create", "namespace", "shop").ok();
        List<String> flags = new ArrayList<>(NamespaceControllerServerTest.kubernetesFlags(dir, api));
        flags.set(flags.indexOf("Mock"), "Kubernetes");
        server = MeshPilotServer.start(TestServers.args(flags, Map.of("POD_NAME", "istiod-1",
                "PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER", "false")));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        api.stop();
    }

    /** The Gateway's condition {@code type} as the API server holds it: {@code status reason: message}. */
    Optional<String> condition(String type) {
        JsonObject status = api.get("gateway.networking.k8s.io/v1", "Gateway", "shop", "web").orElseThrow()
                .getAsJsonObject("status");
        if (status == null || !status.has("conditions")) {
            return Optional.empty();
        }
        for (JsonElement e : status.getAsJsonArray("conditions")) {
            JsonObject c = e.getAsJsonObject();
            if (c.get("type").getAsString().equals(type)) {
                return Optional.of(c.get("status").getAsString() + " " + c.get("reason").getAsString() + ": "
                        + c.get("message").getAsString());
            }
        }
        return Optional.empty();
    }

    @Test
    void aGatewayBecomesProgrammedWhenItsServiceGetsEndpointsWithNoOtherChange() throws Exception {
        kubectl.runWithInput(GATEWAY + "---\n" + SERVICE, "apply", "-f", "-").ok();
        Await.until("Programmed False while the Service has no endpoints", WAIT, () -> condition("Programmed")
                .filter(c -> c.startsWith("False AddressNotAssigned: ") && c.contains("no instances found for hostname"))
                .isPresent());
        // the gateway pod becomes ready: only an EndpointSlice (and its Pod) change
        kubectl.runWithInput(READY_POD, "apply", "-f", "-").ok();
        Await.until("Programmed True", WAIT, () -> condition("Programmed").filter(c -> c.startsWith("True")).isPresent());
        assertEquals("True Programmed: Resource programmed, assigned to service(s) web-istio.shop.svc.cluster.local:80",
                condition("Programmed").orElseThrow());
    }

    @Test
    void aLoadBalancerGatewayIsProgrammedWithItsExternalAddressOnceAssigned() throws Exception {
        kubectl.runWithInput(GATEWAY + "---\n" + SERVICE.replace("spec:\n", "spec:\n  type: LoadBalancer\n") + "---\n"
                + READY_POD, "apply", "-f", "-").ok();
        // istiod gatewaycommon/context.go ResolveGatewayInstances: a LoadBalancer without ingress is pending
        Await.until("Programmed False while the load balancer address is pending", WAIT, () -> condition("Programmed")
                .filter(c -> c.startsWith("False AddressNotAssigned: ")
                        && c.endsWith("address pending for hostname \"web-istio.shop.svc.cluster.local\"")).isPresent());
        kubectl.run("-n", "shop", "patch", "service", "web-istio", "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"34.1.2.3\"}]}}}").ok();
        Await.until("Programmed True", WAIT, () -> condition("Programmed").filter(c -> c.startsWith("True")).isPresent());
        JsonObject status = api.get("gateway.networking.k8s.io/v1", "Gateway", "shop", "web").orElseThrow()
                .getAsJsonObject("status");
        assertEquals("[{\"type\":\"IPAddress\",\"value\":\"34.1.2.3\"}]", status.get("addresses").toString(),
                "the load balancer's address, not the service hostname");
    }
}
