package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonObject;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * istiod's built-in GatewayClasses against the API server stand-in: created once the GatewayClass
 * CRD is applied, with istiod's controller names and descriptions; an existing class is left
 * alone; a deleted one is created again. With ambient waypoints on, {@code istio-waypoint} too
 * (istiod's gatewaycommon classinfo.go GetBuiltinGatewayClasses).
 */
class GatewayClassControllerTest {
    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    KubeClient client;
    GatewayApiController controller;
    GatewayClassController classes;

    @BeforeEach
    void cluster() {
        api = FakeApiServer.start();
        kubectl = Kubectl.against(api, dir);
    }

    void startControllers() throws Exception {
        startControllers(false);
    }

    void startControllers(boolean ambientWaypoints) throws Exception {
        client = KubeClient.create(new KubeClientOptions(dir.resolve("kubeconfig"), 1000, 1000));
        controller = new GatewayApiController(client, GatewayApiRevision.DEFAULT,
                GatewayApiInputs.Settings.defaults("cluster.local", "Kubernetes"),
                inputs -> new ConversionResult(List.of(), List.of(), List.of(), Map.of(), Map.of()));
        classes = new GatewayClassController(client, controller, "istio", "istio.io/gateway-controller", true,
                ambientWaypoints);
        controller.store().run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        classes.start();
    }

    @AfterEach
    void stop() throws Exception {
        if (classes != null) {
            classes.close();
            controller.close();
            client.close();
        }
        api.stop();
    }

    Optional<JsonObject> spec(String name) {
        return api.get("gateway.networking.k8s.io/v1", "GatewayClass", "", name).map(o -> o.getAsJsonObject("spec"));
    }

    static JsonObject spec(String controllerName, String description) {
        JsonObject s = new JsonObject();
        s.addProperty("controllerName", controllerName);
        s.addProperty("description", description);
        return s;
    }

    @Test
    void theBuiltinClassesAreCreatedWhenTheCrdAppearsExistingOnesLeftAloneDeletedOnesMadeAgain() throws Exception {
        startControllers();
        kubectl.run("create", "-f", GatewayApiControllerTest.CRDS.resolve("standard").toAbsolutePath()
                + "/gateway.networking.k8s.io_gatewayclasses.yaml").ok();
        Await.until("both classes created", Duration.ofSeconds(20),
                () -> spec("istio").isPresent() && spec("istio-remote").isPresent());
        assertEquals(spec("istio.io/gateway-controller", "The default Istio GatewayClass"), spec("istio").orElseThrow());
        assertEquals(spec("istio.io/unmanaged-gateway", "Remote to this cluster. Does not deploy or affect configuration."),
                spec("istio-remote").orElseThrow());

        // a class someone changed is theirs: left alone, however often the controller looks
        kubectl.run("patch", "gatewayclass", "istio", "--type=merge", "-p", "{\"spec\":{\"description\":\"ours\"}}").ok();
        Await.until("the change seen", Duration.ofSeconds(20), () -> controller.informers()
                .live(new ConfigKey("GatewayClass", "", "istio")).map(o -> o.getRaw().toString().contains("ours")).orElse(false));
        controller.servicesChanged();
        controller.store().synced().get();
        classes.barrier().get();
        assertEquals(spec("istio.io/gateway-controller", "ours"), spec("istio").orElseThrow());

        kubectl.run("delete", "gatewayclass", "istio-remote").ok();
        Await.until("istio-remote created again", Duration.ofSeconds(20), () -> spec("istio-remote").isPresent());
        // without ambient waypoints istiod makes no waypoint class
        classes.barrier().get();
        assertEquals(Optional.empty(), spec(GatewayApiKinds.WAYPOINT_CLASS));
    }

    @Test
    void withAmbientWaypointsTheWaypointClassIsCreatedForTheMeshController() throws Exception {
        startControllers(true);
        kubectl.run("create", "-f", GatewayApiControllerTest.CRDS.resolve("standard").toAbsolutePath()
                + "/gateway.networking.k8s.io_gatewayclasses.yaml").ok();
        Await.until("the waypoint class created", Duration.ofSeconds(20),
                () -> spec("istio").isPresent() && spec("istio-waypoint").isPresent());
        assertEquals(spec("istio.io/mesh-controller", "The default Istio waypoint GatewayClass"),
                spec("istio-waypoint").orElseThrow());

        kubectl.run("delete", "gatewayclass", "istio-waypoint").ok();
        Await.until("istio-waypoint created again", Duration.ofSeconds(20), () -> spec("istio-waypoint").isPresent());
    }
}
