package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ztunnel's Authorization type over delta ADS, end to end: a grpc-java delta client sends what
 * ztunnel sends (istio/ztunnel src/xds/client.rs: node type ztunnel, a first request for
 * {@code istio.security.Authorization} that subscribes to nothing, meaning everything) to a
 * server with PILOT_ENABLE_AMBIENT reading policies from its config directory; a policy file
 * added arrives as a delta of that policy alone, a deleted one in removed_resources, and an
 * HTTP-only rule is dropped, logged and listed in push status.
 */
class ZtunnelAuthorizationXdsTest {
    static final String ZTUNNEL = "ztunnel~10.0.0.1~ztunnel-abc.istio-system~istio-system.svc.cluster.local";
    static final Duration WAIT = Duration.ofSeconds(20);
    /** One L4 policy ztunnel gets as written: {@code shop/deny-other}. */
    static final String DENY_OTHER = """
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: deny-other, namespace: shop}
            spec:
              action: DENY
              rules: [{from: [{source: {namespaces: [other]}}]}]
            """;

    @TempDir
    Path dir;

    @Test
    void ztunnelGetsEveryPolicyThenOnlyWhatChanges() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("policies.yaml"), """
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: istio-system}
                spec: {mtls: {mode: STRICT}}
                ---
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: allow-frontend, namespace: shop}
                spec:
                  selector: {matchLabels: {app: cart}}
                  rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/frontend]}}], to: [{operation: {ports: ["8080"]}}]}]
                """);
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_ENABLE_AMBIENT", "true"));
             CapturedLog log = new CapturedLog(WorkloadRbacGenerator.class);
             DeltaAdsClient ztunnel = ztunnel(server, Node.newBuilder().setId(ZTUNNEL))) {
            ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.WORKLOAD_AUTHORIZATION));
            DeltaDiscoveryResponse first = ztunnel.next(WAIT);
            assertNotNull(first, "ztunnel's wildcard subscription is answered");
            Map<String, Authorization> held = resources(first);
            assertEquals(List.of("istio-system/istio_converted_static_strict", "shop/allow-frontend"),
                    List.copyOf(held.keySet()));
            Authorization allow = held.get("shop/allow-frontend");
            assertEquals(Scope.WORKLOAD_SELECTOR, allow.getScope());
            assertEquals(Action.ALLOW, allow.getAction());
            assertEquals(List.of(8080), allow.getGroups(0).getRules(0).getMatches(0).getDestinationPortsList());
            ztunnel.ack(first);
            assertTrue(Http.get(server.ports().get("http"), "/api/v1/proxies").body().contains("\"type\":\"ztunnel\""),
                    "the admin API names the node type");

            // a new policy: only it arrives; its HTTP-only rule is dropped and reported
            Files.writeString(config.resolve("deny.yaml"), """
                    apiVersion: security.istio.io/v1
                    kind: AuthorizationPolicy
                    metadata: {name: deny-admin, namespace: istio-system}
                    spec:
                      action: DENY
                      rules:
                      - from: [{source: {namespaces: [untrusted]}}]
                      - to: [{operation: {paths: [/admin]}}]
                    """);
            DeltaDiscoveryResponse added = nextOf(ztunnel);
            Map<String, Authorization> delta = resources(added);
            assertEquals(List.of("istio-system/deny-admin"), List.copyOf(delta.keySet()), "only the new policy");
            assertEquals(List.of(), added.getRemovedResourcesList());
            Authorization deny = delta.get("istio-system/deny-admin");
            assertEquals(Scope.GLOBAL, deny.getScope());
            assertEquals(Action.DENY, deny.getAction());
            assertEquals("untrusted", deny.getGroups(0).getRules(0).getMatches(0).getNamespaces(0).getExact());
            assertEquals(List.of(), deny.getGroups(1).getRules(0).getMatches(0).getDestinationPortsList(),
                    "the paths rule keeps an empty match, which ztunnel skips");
            ztunnel.ack(added);
            assertTrue(log.has("WARNING", "ztunnel authorization policy=istio-system/deny-admin not applied as written",
                    "(found: paths)"), log.lines().toString());
            int http = server.ports().get("http");
            Await.until("push status lists the policy", WAIT, () -> Http.get(http, "/debug/push_status").body()
                    .contains("pilot_authz_ztunnel_unapplied"));
            assertTrue(Http.get(http, "/debug/push_status").body().contains("istio-system/deny-admin"));

            // a deleted policy: named in removed_resources, nothing re-sent
            Files.delete(config.resolve("deny.yaml"));
            DeltaDiscoveryResponse removed = nextOf(ztunnel);
            assertEquals(List.of("istio-system/deny-admin"), removed.getRemovedResourcesList());
            assertEquals(0, removed.getResourcesCount(), "the others did not change");
            ztunnel.ack(removed);
        }
    }

    /**
     * Review finding 7: ztunnel does not record the resources it rejects (client.rs
     * HandlerWrapper::handle), so a NACKed policy must not count as held: the next push sends it
     * again (istiod's forced push re-sends every policy), while a policy ztunnel accepted is not
     * sent twice.
     */
    @Test
    void aNackedPolicyIsSentAgainByTheNextPush() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("policies.yaml"), DENY_OTHER);
        try (MeshPilotServer server = TestServers.start(dir, Map.of("PILOT_ENABLE_AMBIENT", "true"));
             DeltaAdsClient ztunnel = ztunnel(server, Node.newBuilder().setId(ZTUNNEL))) {
            int http = server.ports().get("http");
            ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.WORKLOAD_AUTHORIZATION));
            DeltaDiscoveryResponse first = nextOf(ztunnel);
            assertEquals(List.of("shop/deny-other"), List.copyOf(resources(first).keySet()));
            ztunnel.nack(first, "unknown enum value");

            // a new policy (ztunnel accepts it): the push carries the rejected one again with it
            Files.writeString(config.resolve("allow.yaml"), """
                    apiVersion: security.istio.io/v1
                    kind: AuthorizationPolicy
                    metadata: {name: allow-shop, namespace: shop}
                    spec:
                      rules: [{from: [{source: {namespaces: [shop]}}]}]
                    """);
            DeltaDiscoveryResponse retried = nextOf(ztunnel);
            assertEquals(List.of("shop/allow-shop", "shop/deny-other"), List.copyOf(resources(retried).keySet()),
                    "the NACKed policy is sent again");
            ztunnel.ack(retried);

            // accepted now: a forced push (istiod's /debug/adsz?push=true) has nothing new to send
            assertEquals(200, Http.get(http, "/debug/adsz?push=true").status());
            DeltaDiscoveryResponse forced = ztunnel.next(WAIT);
            if (forced != null) {
                assertEquals(Map.of(), resources(forced), "what ztunnel accepted is not sent twice");
                ztunnel.ack(forced);
            }
        }
    }

    /** Without PILOT_ENABLE_AMBIENT a ztunnel's stream is refused, as istiod's initConnection refuses it. */
    @Test
    void ztunnelIsRefusedWithoutAmbient() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("policies.yaml"), """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: deny-all, namespace: istio-system}
                spec: {action: DENY, rules: [{}]}
                """);
        try (MeshPilotServer server = TestServers.start(dir);
             DeltaAdsClient ztunnel = ztunnel(server, Node.newBuilder().setId(ZTUNNEL))) {
            ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.WORKLOAD_AUTHORIZATION));
            // istiod's initConnection refuses ztunnel outright, so it does not look ready while serving nothing
            Status refused = Status.fromThrowable(ztunnel.awaitError(WAIT));
            assertEquals(Status.Code.UNKNOWN, refused.getCode());
            assertEquals("ztunnel requires PILOT_ENABLE_AMBIENT=true", refused.getDescription());
        }
    }

    /** A delta client as {@code node} over plaintext to the server's gRPC port. */
    static DeltaAdsClient ztunnel(MeshPilotServer server, Node.Builder node) {
        return new DeltaAdsClient(NettyChannelBuilder.forAddress("127.0.0.1", server.ports().get("grpc")).usePlaintext()
                .build(), node.build());
    }

    /** The next Authorization response (other types are not subscribed, so none come). */
    private static DeltaDiscoveryResponse nextOf(DeltaAdsClient client) throws InterruptedException {
        DeltaDiscoveryResponse r = client.next(WAIT);
        assertNotNull(r, "a delta after the change");
        assertEquals(TypeUrls.WORKLOAD_AUTHORIZATION, r.getTypeUrl());
        return r;
    }

    private static Map<String, Authorization> resources(DeltaDiscoveryResponse r) throws Exception {
        Map<String, Authorization> out = new TreeMap<>();
        for (Resource res : r.getResourcesList()) {
            out.put(res.getName(), res.getResource().unpack(Authorization.class));
        }
        return out;
    }
}
