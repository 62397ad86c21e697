package io.meshpilot.xds;

import static io.meshpilot.xds.KubeWaypointProxyTest.awaitListeners;
import static io.meshpilot.xds.KubeWaypointProxyTest.awaitResources;
import static io.meshpilot.xds.KubeWaypointProxyTest.unpack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 point 4, last sentence: a sidecar (and a gateway) talking to ambient workloads, as
 * istiod configures it with PILOT_ENABLE_AMBIENT=true and its defaults (PILOT_ENABLE_SENDING_HBONE
 * on, PILOT_PREFER_SENDING_HBONE off). istiod (pilot/pkg/xds/endpoints/endpoint_builder.go
 * buildEnvoyLbEndpoint, supportTunnel; networking/core/cluster_tls.go applyHBONETransportSocketMatches;
 * cluster.go and listener.go for {@code connect_originate}) sends an endpoint that takes HBONE and
 * has no sidecar (a pod ztunnel captures, or a waypoint) as the internal address
 * {@code connect_originate} named {@code ip:port}, with {@code original_dst} metadata {@code local}
 * and the transport-socket match {@code tunnel: http}; every outbound cluster gets the {@code hbone}
 * match first; the proxy gets the {@code connect_originate} cluster and internal listener. A
 * destination with a sidecar keeps Istio mutual TLS, a plain one plaintext. A sidecar does not
 * send to a service's waypoint (istiod: "we intentionally do not take into account waypoints").
 *
 * <p>The cluster: namespace {@code shop} is ambient; {@code reviews} (VIP 10.96.0.10) has one pod
 * 10.0.1.10 that istio-cni captured and uses the waypoint {@code waypoint} (its Service
 * 10.96.0.20, pod 10.0.1.20, as the deployment controller makes them). Namespace {@code legacy}
 * is not: {@code ratings} has a sidecar pod 10.0.2.10 ({@code security.istio.io/tlsMode: istio}),
 * {@code details} a plain pod 10.0.2.11.
 */
class KubeSidecarHboneTest {
    static final String REVIEWS = "outbound|9080||reviews.shop.svc.cluster.local";
    static final String RATINGS = "outbound|9080||ratings.legacy.svc.cluster.local";
    static final String DETAILS = "outbound|9080||details.legacy.svc.cluster.local";
    static final String WAYPOINT = "outbound|15008||waypoint.shop.svc.cluster.local";

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
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop, labels: {istio.io/dataplane-mode: ambient}}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: legacy}
                ---
                """
                + service("shop", "reviews", "http", 9080, "10.96.0.10",
                        "{istio.io/use-waypoint: waypoint, istio.io/ingress-use-waypoint: \"true\"}",
                        "10.0.1.10", "", "{ambient.istio.io/redirection: enabled}")
                + service("shop", "waypoint", "mesh", 15008, "10.96.0.20",
                        "{gateway.istio.io/managed: istio.io-mesh-controller, gateway.networking.k8s.io/gateway-name: waypoint}",
                        "10.0.1.20", "gateway.istio.io/managed: istio.io-mesh-controller,"
                                + " gateway.networking.k8s.io/gateway-name: waypoint, istio.io/dataplane-mode: none", "{}")
                + service("legacy", "ratings", "http", 9080, "10.96.1.10", "{}",
                        "10.0.2.10", "security.istio.io/tlsMode: istio", "{}")
                + service("legacy", "details", "http", 9080, "10.96.1.11", "{}",
                        "10.0.2.11", "", "{}"), "apply", "-f", "-").ok();
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, dir.resolve("kubeconfig")),
                Map.of("PILOT_ENABLE_AMBIENT", "true")));
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

    /** A Service (one port, a VIP, its labels) with one ready pod (its IP, more labels, annotations) and its EndpointSlice. */
    static String service(String ns, String name, String portName, int port, String vip, String serviceLabels,
                          String podIp, String podLabels, String podAnnotations) {
        return KubeGammaRoutesTest.serviceWithEndpoint(ns, name, portName, port, podIp, port, vip, podAnnotations,
                serviceLabels, podLabels);
    }

    static AdsClient sidecar(String pod, Map<String, String> metadata) {
        Map<String, String> meta = new HashMap<>(Map.of("NAMESPACE", "legacy", "CLUSTER_ID", "Kubernetes"));
        meta.putAll(metadata);
        return new AdsClient(server.ports().get("grpc"), "sidecar~10.0.2.99~" + pod + ".legacy~legacy.svc.cluster.local",
                meta);
    }

    static Map<String, ClusterLoadAssignment> endpoints(AdsClient client, List<String> names) throws Exception {
        client.subscribe(TypeUrls.ENDPOINT, names);
        return awaitResources(client, TypeUrls.ENDPOINT, ClusterLoadAssignment.class,
                ClusterLoadAssignment::getClusterName, e -> e.keySet().containsAll(names)
                        && names.stream().allMatch(n -> e.get(n).getEndpointsCount() > 0));
    }

    static LbEndpoint only(ClusterLoadAssignment cla) {
        assertEquals(1, cla.getEndpointsCount(), cla.toString());
        assertEquals(1, cla.getEndpoints(0).getLbEndpointsCount(), cla.toString());
        return cla.getEndpoints(0).getLbEndpoints(0);
    }

    static String socket(LbEndpoint ep) {
        Address a = ep.getEndpoint().getAddress();
        return a.hasSocketAddress() ? a.getSocketAddress().getAddress() + ":" + a.getSocketAddress().getPortValue()
                : "internal " + a.getEnvoyInternalAddress().getServerListenerName() + " "
                + a.getEnvoyInternalAddress().getEndpointId();
    }

    static String field(Struct s, String key) {
        return s.getFieldsOrThrow(key).getStringValue();
    }

    @Test
    void aCapturedPodIsReachedOverHboneWhileSidecarAndPlainPodsKeepTheirAddresses() throws Exception {
        try (AdsClient client = sidecar("productpage-0", Map.of())) {
            Map<String, ClusterLoadAssignment> eds = endpoints(client, List.of(REVIEWS, RATINGS, DETAILS));

            LbEndpoint reviews = only(eds.get(REVIEWS));
            assertEquals("internal connect_originate 10.0.1.10:9080", socket(reviews),
                    "the captured pod is reached through connect_originate, not through its waypoint: " + reviews);
            assertEquals("10.0.1.10:9080", field(reviews.getMetadata()
                    .getFilterMetadataOrThrow("envoy.filters.listener.original_dst"), "local"));
            assertEquals(Map.of("tunnel", "http"), strings(reviews.getMetadata()
                    .getFilterMetadataOrThrow("envoy.transport_socket_match")));

            LbEndpoint ratings = only(eds.get(RATINGS));
            assertEquals("10.0.2.10:9080", socket(ratings), "a sidecar keeps Istio mutual TLS (HBONE is not preferred)");
            assertEquals(Map.of("tlsMode", "istio"), strings(ratings.getMetadata()
                    .getFilterMetadataOrThrow("envoy.transport_socket_match")));
            assertFalse(ratings.getMetadata().containsFilterMetadata("envoy.filters.listener.original_dst"));

            LbEndpoint details = only(eds.get(DETAILS));
            assertEquals("10.0.2.11:9080", socket(details));
            assertFalse(details.getMetadata().containsFilterMetadata("envoy.transport_socket_match"), details.toString());
        }
    }

    @Test
    void aWaypointsOwnServiceIsReachedOverHbone() throws Exception {
        try (AdsClient client = sidecar("productpage-0", Map.of())) {
            LbEndpoint waypoint = only(endpoints(client, List.of(WAYPOINT)).get(WAYPOINT));
            assertEquals("internal connect_originate 10.0.1.20:15008", socket(waypoint));
        }
    }

    @Test
    void outboundClustersTryHboneFirstAndTheProxyGetsTheConnectOriginateClusterAndListener() throws Exception {
        try (AdsClient client = sidecar("productpage-0", Map.of())) {
            client.subscribe(TypeUrls.CLUSTER, List.of());
            Map<String, Cluster> clusters = awaitResources(client, TypeUrls.CLUSTER, Cluster.class, Cluster::getName,
                    c -> c.containsKey(REVIEWS) && c.containsKey("connect_originate"));
            for (String name : List.of(REVIEWS, RATINGS, DETAILS)) {
                Cluster c = clusters.get(name);
                assertEquals(List.of("hbone", "tlsMode-istio", "tlsMode-disabled"),
                        c.getTransportSocketMatchesList().stream().map(Cluster.TransportSocketMatch::getName).toList(),
                        name + ": istiod's auto mTLS with HBONE");
                Cluster.TransportSocketMatch hbone = c.getTransportSocketMatches(0);
                assertEquals(Map.of("tunnel", "http"), strings(hbone.getMatch()));
                assertEquals("envoy.transport_sockets.internal_upstream", hbone.getTransportSocket().getName());
                InternalUpstreamTransport internal = unpack(hbone.getTransportSocket().getTypedConfig(),
                        InternalUpstreamTransport.class);
                assertEquals(List.of("host:envoy.filters.listener.original_dst", "cluster:istio", "host:istio"),
                        internal.getPassthroughMetadataList().stream().map(m -> (m.getKind().hasHost() ? "host:" : "cluster:")
                                + m.getName()).toList());
                assertEquals("envoy.transport_sockets.raw_buffer", internal.getTransportSocket().getName());
            }
            Cluster originate = clusters.get("connect_originate");
            assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, originate.getType());
            assertEquals(15008, originate.getOriginalDstLbConfig().getUpstreamPortOverride().getValue());
            UpstreamTlsContext tls = unpack(originate.getTransportSocket().getTypedConfig(), UpstreamTlsContext.class);
            // istiod's buildCommonConnectTLSContext: the mesh's trust domains; a sidecar's tunnel adds no peer namespace
            assertEquals(List.of("spiffe://cluster.local/"), tls.getCommonTlsContext().getCombinedValidationContext()
                    .getDefaultValidationContext().getMatchTypedSubjectAltNamesList().stream()
                    .map(m -> m.getMatcher().getPrefix()).toList());
            assertEquals(List.of("h2"), tls.getCommonTlsContext().getAlpnProtocolsList());

            client.subscribe(TypeUrls.LISTENER, List.of());
            Listener listener = awaitListeners(client, l -> l.containsKey("connect_originate")).get("connect_originate");
            assertTrue(listener.hasInternalListener(), listener.toString());
            TcpProxy tcp = unpack(listener.getFilterChains(0).getFilters(0).getTypedConfig(), TcpProxy.class);
            assertEquals("connect_originate", tcp.getCluster());
            assertEquals("%DOWNSTREAM_LOCAL_ADDRESS%", tcp.getTunnelingConfig().getHostname());
        }
    }

    /** istiod's DISABLE_HBONE_SEND node metadata: the proxy sends no HBONE (no tunnel endpoints, no connect_originate cluster). */
    @Test
    void aProxyThatDisablesHboneSendReachesTheCapturedPodDirectly() throws Exception {
        try (AdsClient client = sidecar("old-0", Map.of("DISABLE_HBONE_SEND", "true"))) {
            assertEquals("10.0.1.10:9080", socket(only(endpoints(client, List.of(REVIEWS)).get(REVIEWS))));
            client.subscribe(TypeUrls.CLUSTER, List.of());
            Map<String, Cluster> clusters = awaitResources(client, TypeUrls.CLUSTER, Cluster.class, Cluster::getName,
                    c -> c.containsKey(REVIEWS));
            assertFalse(clusters.containsKey("connect_originate"), clusters.keySet().toString());
        }
    }

    /**
     * istiod's findServiceWaypoint (ENABLE_INGRESS_WAYPOINT_ROUTING, on with ambient): a gateway
     * sends to the waypoint of a service labelled {@code istio.io/ingress-use-waypoint: "true"},
     * its pods' HBONE port through {@code connect_originate}, the service's VIP:port as the tunnel's
     * {@code local}; a new waypoint pod reaches the gateway's assignment of the service.
     */
    @Test
    void aGatewaySendsToTheWaypointOfAServiceThatAsksForIt() throws Exception {
        try (AdsClient gateway = new AdsClient(server.ports().get("grpc"),
                "router~10.0.3.3~ingress-0.istio-system~istio-system.svc.cluster.local",
                Map.of("NAMESPACE", "istio-system", "CLUSTER_ID", "Kubernetes"))) {
            LbEndpoint waypoint = only(endpoints(gateway, List.of(REVIEWS)).get(REVIEWS));
            assertEquals("internal connect_originate 10.0.1.20:15008", socket(waypoint), waypoint.toString());
            Struct tunnel = waypoint.getMetadata().getFilterMetadataOrThrow("envoy.filters.listener.original_dst");
            assertEquals(Map.of("local", "10.96.0.10:9080", "waypoint", "10.0.1.20:15008"), strings(tunnel));
            assertEquals(Map.of("tunnel", "http"), strings(waypoint.getMetadata()
                    .getFilterMetadataOrThrow("envoy.transport_socket_match")));

            kubectl.runWithInput("""
                    apiVersion: discovery.k8s.io/v1
                    kind: EndpointSlice
                    metadata: {name: waypoint-1, namespace: shop, labels: {kubernetes.io/service-name: waypoint}}
                    addressType: IPv4
                    ports: [{name: mesh, port: 15008, protocol: TCP}]
                    endpoints:
                    - addresses: [10.0.1.21]
                      conditions: {ready: true}
                    """, "apply", "-f", "-").ok();
            ClusterLoadAssignment scaled = awaitResources(gateway, TypeUrls.ENDPOINT, ClusterLoadAssignment.class,
                    ClusterLoadAssignment::getClusterName, e -> e.containsKey(REVIEWS)
                            && e.get(REVIEWS).getEndpoints(0).getLbEndpointsCount() == 2).get(REVIEWS);
            assertEquals(List.of("internal connect_originate 10.0.1.20:15008", "internal connect_originate 10.0.1.21:15008"),
                    scaled.getEndpoints(0).getLbEndpointsList().stream().map(KubeSidecarHboneTest::socket).sorted().toList());
        } finally {
            kubectl.run("delete", "-n", "shop", "endpointslice", "waypoint-1", "--ignore-not-found").ok();
        }
    }

    static Map<String, String> strings(Struct s) {
        Map<String, String> out = new TreeMap<>();
        s.getFieldsMap().forEach((k, v) -> out.put(k, v.getStringValue()));
        return out;
    }
}
