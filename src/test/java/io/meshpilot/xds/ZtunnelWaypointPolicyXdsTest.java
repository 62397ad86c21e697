package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.StringMatch;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PILOT_AUTO_ALLOW_WAYPOINT_POLICY end to end (istiod's implicitWaypointPolicy): a ztunnel-like
 * delta client subscribed to {@code istio.security.Authorization} gets the waypoint's implicit
 * ALLOW policy once the waypoint (its managed Service) has a pod, allowing that pod's identity,
 * and is told it is gone when the pod goes; {@code /debug/ambientz} lists it meanwhile.
 */
class ZtunnelWaypointPolicyXdsTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String POLICY = "shop/istio_allow_waypoint_shop_waypoint";

    @TempDir
    Path dir;

    @Test
    void theWaypointsImplicitPolicyFollowsItsPods() throws Exception {
        FakeApiServer api = FakeApiServer.start();
        try {
            api.installIstioCrds();
            Kubectl kubectl = Kubectl.against(api, dir);
            kubectl.runWithInput("""
                    apiVersion: v1
                    kind: Namespace
                    metadata: {name: istio-system}
                    ---
                    apiVersion: v1
                    kind: Namespace
                    metadata: {name: shop, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}}
                    ---
                    apiVersion: v1
                    kind: Service
                    metadata:
                      name: waypoint
                      namespace: shop
                      labels: {gateway.networking.k8s.io/gateway-name: waypoint, gateway.istio.io/managed: istio.io-mesh-controller}
                    spec:
                      clusterIP: 10.96.0.99
                      ports: [{name: mesh, port: 15008, appProtocol: hbone}]
                      selector: {gateway.networking.k8s.io/gateway-name: waypoint}
                    """, "apply", "-f", "-").ok();
            try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir,
                    dir.resolve("kubeconfig")), Map.of("PILOT_ENABLE_AMBIENT", "true", "PILOT_AUTO_ALLOW_WAYPOINT_POLICY", "true")));
                 DeltaAdsClient ztunnel = new DeltaAdsClient(server.ports().get("grpc"), ZtunnelAuthorizationXdsTest.ZTUNNEL)) {
                ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.WORKLOAD_AUTHORIZATION));
                DeltaDiscoveryResponse first = ztunnel.next(WAIT);
                assertEquals(List.of(), first.getResourcesList(), "a waypoint without pods has no identity to allow");
                ztunnel.ack(first);

                kubectl.runWithInput("""
                        apiVersion: v1
                        kind: Pod
                        metadata:
                          name: waypoint-6d8f9c-xyz
                          namespace: shop
                          labels: {gateway.networking.k8s.io/gateway-name: waypoint, gateway.istio.io/managed: istio.io-mesh-controller}
                        spec: {serviceAccountName: waypoint, containers: [{name: istio-proxy, image: proxyv2}]}
                        """, "apply", "-f", "-").ok();
                DeltaDiscoveryResponse added = next(ztunnel);
                assertEquals(List.of(POLICY), added.getResourcesList().stream().map(Resource::getName).toList());
                Authorization allow = added.getResources(0).getResource().unpack(Authorization.class);
                assertEquals(List.of("cluster.local/ns/shop/sa/waypoint"), allow.getGroups(0).getRules(0).getMatches(0)
                        .getPrincipalsList().stream().map(StringMatch::getExact).toList());
                ztunnel.ack(added);
                // istiod's ambientz lists every policy ztunnel is sent, the implicit ones included
                assertEquals(List.of(POLICY), ambientzPolicies(server));

                kubectl.run("delete", "-n", "shop", "pod", "waypoint-6d8f9c-xyz").ok();
                DeltaDiscoveryResponse removed = next(ztunnel);
                assertEquals(List.of(POLICY), removed.getRemovedResourcesList());
                ztunnel.ack(removed);
            }
        } finally {
            api.stop();
        }
    }

    /** The {@code namespace/name} of each policy {@code /debug/ambientz} lists. */
    private static List<String> ambientzPolicies(MeshPilotServer server) {
        Http.Reply r = Http.get(server.ports().get("http"), "/debug/ambientz");
        assertEquals(200, r.status(), r.body());
        List<String> out = new ArrayList<>();
        for (JsonElement p : JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonArray("policies")) {
            out.add(p.getAsJsonObject().get("namespace").getAsString() + "/" + p.getAsJsonObject().get("name").getAsString());
        }
        return out;
    }

    /** The next Authorization response that carries something (other types are not subscribed). */
    private static DeltaDiscoveryResponse next(DeltaAdsClient client) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        DeltaDiscoveryResponse r;
        while ((r = client.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) != null) {
            if (r.getResourcesCount() > 0 || r.getRemovedResourcesCount() > 0) {
                return r;
            }
            client.ack(r);
        }
        throw new AssertionError("no Authorization change within " + WAIT.toSeconds() + " s");
    }
}
