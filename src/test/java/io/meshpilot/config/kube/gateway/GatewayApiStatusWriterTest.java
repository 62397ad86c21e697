package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Gateway API status writer against the API server stand-in: the status a conversion yields
 * is written once, not again while the object shows it, written back when someone else changes
 * it, another controller's route parent entries are kept; the controller of a second revision,
 * which reads the same unlabelled route, writes nothing (istiod's IsMine).
 */
class GatewayApiStatusWriterTest {
    static final String OURS = """
            {"parents": [{"parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "web"},
              "controllerName": "istio.io/gateway-controller",
              "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "Route was valid",
                "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}""";
    static final String FOREIGN_ENTRY = """
            {"parentRef": {"name": "edge"}, "controllerName": "example.com/other",
             "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "theirs",
               "lastTransitionTime": "2026-01-01T00:00:00Z"}]}""";

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void cluster() {
        api = FakeApiServer.start();
        kubectl = Kubectl.against(api, dir);
        kubectl.run("create", "-f", GatewayApiControllerTest.CRDS.resolve("standard").toAbsolutePath().toString()).ok();
        kubectl.runWithInput("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"
                + GatewayApiControllerTest.ROUTE.formatted("cart", "shop"), "apply", "-f", "-").ok();
        // another controller's entry is there first
        kubectl.run("-n", "shop", "patch", "httproute", "cart", "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"parents\":[" + FOREIGN_ENTRY + "]}}").ok();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
        api.stop();
    }

    /** A controller of {@code revision} whose conversion gives the route our status, with its writer leading. */
    GatewayApiStatusWriter leadingWriter(String revision) throws Exception {
        KubeClient client = KubeClient.create(new KubeClientOptions(dir.resolve("kubeconfig"), 1000, 1000));
        closing.add(client);
        GatewayApiController controller = new GatewayApiController(client,
                new GatewayApiRevision(revision, UnaryOperator.identity()),
                GatewayApiInputs.Settings.defaults("cluster.local", "Kubernetes"),
                inputs -> new ConversionResult(List.of(), List.of(), List.of(),
                        Map.of(new ConfigKey("HTTPRoute", "shop", "cart"), JsonParser.parseString(OURS).getAsJsonObject()),
                        Map.of()));
        closing.add(controller);
        GatewayApiStatusWriter writer = new GatewayApiStatusWriter(client, controller);
        controller.store().run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        closing.add(writer.lead());
        return writer;
    }

    long statusWrites() {
        return api.requestLog().stream().filter(r -> r.startsWith("PUT /apis/gateway.networking.k8s.io/v1/namespaces/shop/"
                + "httproutes/cart/status") && r.endsWith("-> 200")).count();
    }

    JsonObject liveStatus() {
        return api.get("gateway.networking.k8s.io/v1", "HTTPRoute", "shop", "cart").orElseThrow().getAsJsonObject("status");
    }

    JsonObject expected() {
        // the other controller's entry first, then ours
        JsonObject out = new JsonObject();
        JsonArray parents = new JsonArray();
        parents.add(JsonParser.parseString(FOREIGN_ENTRY));
        parents.add(JsonParser.parseString(OURS).getAsJsonObject().getAsJsonArray("parents").get(0));
        out.add("parents", parents);
        return out;
    }

    @Test
    void writtenOnceKeptWhileEqualWrittenBackWhenChangedAndOnlyByThisRevision() throws Exception {
        GatewayApiStatusWriter canary = leadingWriter("canary");
        GatewayApiStatusWriter writer = leadingWriter("");
        Await.until("our status written beside the other controller's", Duration.ofSeconds(20),
                () -> expected().equals(liveStatus()));
        // the stand-in logs a request once it has answered it
        Await.until("the write logged", Duration.ofSeconds(20), () -> statusWrites() == 1);

        // a conversion that yields the same status writes nothing
        kubectl.runWithInput(GatewayApiControllerTest.ROUTE.formatted("other", "shop"), "apply", "-f", "-").ok();
        Await.until("the new route seen", Duration.ofSeconds(20),
                () -> api.requestLog().stream().anyMatch(r -> r.contains("httproutes") && r.startsWith("POST")));
        writer.barrier().get();
        canary.barrier().get();
        assertEquals(1, statusWrites(), "equal status: not written again");

        // someone else drops our entry: it is written back, theirs kept
        kubectl.run("-n", "shop", "patch", "httproute", "cart", "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"parents\":[" + FOREIGN_ENTRY + "]}}").ok();
        Await.until("our entry written back", Duration.ofSeconds(20), () -> expected().equals(liveStatus())
                && statusWrites() == 2);
        writer.barrier().get();
        canary.barrier().get();
        assertEquals(2, statusWrites(), "one write per change, none by the canary revision's writer");
    }
}
