package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.xds.type.matcher.v3.IPMatcher;
import com.github.xds.type.matcher.v3.Matcher;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.RbacPolicies;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.WaypointNode;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35, acceptance 2 (second half): what a waypoint proxy receives over xDS, end to end
 * against the API server stand-in with kubectl. The namespace {@code shop} names the waypoint
 * {@code waypoint} with {@code istio.io/use-waypoint}; its Service {@code reviews} (VIP
 * 10.96.0.10) has an HTTPRoute (GAMMA, parentRef the Service) splitting 90/10 between
 * {@code reviews-v1} and {@code reviews-v2}, whose pods ztunnel captures (the CNI's
 * {@code ambient.istio.io/redirection: enabled}). A client speaking SotW ADS as the waypoint's
 * Envoy (node {@code waypoint~...}, the labels the {@code waypoint} template gives the pod) gets
 * istiod's listener_waypoint.go and cluster_waypoint.go shapes: {@code connect_terminate} on
 * 15008 terminating HBONE (CONNECT over HTTP/2, Istio mutual TLS 1.3), {@code main_internal}
 * with a chain for reviews' VIP:port whose routes carry the 90/10 to the waypoint's
 * {@code inbound-vip} clusters, and HBONE origination to the captured pods. Removing the
 * namespace label drops the chain. The namespace {@code bank} holds the cases of traffic
 * addressed to a workload ({@link #applyWorkloadWaypoints}).
 */
class KubeWaypointProxyTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String REVIEWS = "reviews.shop.svc.cluster.local";
    static final String REVIEWS_CHAIN = "inbound-vip|9080|http|" + REVIEWS;
    static final String LEDGER_IP = "10.0.2.10";
    static final String TELLER_IP = "10.0.2.11";
    static final String VAULT_IP = "10.0.2.12";

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
        kubectl.run("create", "-f", KubeGammaRoutesTest.CRDS.toAbsolutePath().toString()).ok();
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}}
                ---
                """ + ambientService("reviews", "10.96.0.10", "10.0.1.10")
                + ambientService("reviews-v1", "10.96.0.11", "10.0.1.11")
                + ambientService("reviews-v2", "10.96.0.12", "10.0.1.12") + """
                apiVersion: gateway.networking.k8s.io/v1
                kind: HTTPRoute
                metadata: {name: reviews, namespace: shop}
                spec:
                  parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
                  rules:
                  - backendRefs:
                    - {name: reviews-v1, port: 9080, weight: 90}
                    - {name: reviews-v2, port: 9080, weight: 10}
                """, "apply", "-f", "-").ok();
        applyWorkloadWaypoints();
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

    /**
     * A Service {@code name} (HTTP port 9080, VIP {@code vip}) with one ready pod at {@code podIp}
     * that ztunnel captures (istio-cni's annotation), and the pod's EndpointSlice.
     */
    static String ambientService(String name, String vip, String podIp) {
        return KubeGammaRoutesTest.serviceWithEndpoint("shop", name, "http", 9080, podIp, 9080, vip,
                "{ambient.istio.io/redirection: enabled}");
    }

    /**
     * The waypoint's Envoy as istio-agent names it ({@code proxy waypoint}) with the pod labels of
     * the {@code waypoint} template (manifests/.../files/waypoint.yaml).
     */
    static AdsClient waypoint() {
        return new AdsClient(server.ports().get("grpc"), "waypoint~10.0.5.5~waypoint-6d8f9c-xyz.shop~shop.svc.cluster.local",
                Map.of("NAMESPACE", "shop", "CLUSTER_ID", "Kubernetes", "SERVICE_ACCOUNT", "waypoint",
                        "WORKLOAD_NAME", "waypoint", "INTERCEPTION_MODE", "REDIRECT",
                        "LABELS", """
                                {"gateway.networking.k8s.io/gateway-name": "waypoint",
                                 "gateway.networking.k8s.io/gateway-class-name": "istio-waypoint",
                                 "gateway.istio.io/managed": "istio.io-mesh-controller",
                                 "istio.io/dataplane-mode": "none", "sidecar.istio.io/inject": "false",
                                 "service.istio.io/canonical-name": "waypoint",
                                 "service.istio.io/canonical-revision": "latest"}"""));
    }

    @Test
    void theWaypointTerminatesHboneAndRoutesItsServicesVipByTheHttpRouteUntilTheNamespaceLabelGoes() throws Exception {
        try (AdsClient waypoint = waypoint()) {
            waypoint.subscribe(TypeUrls.LISTENER, List.of());
            Map<String, Listener> listeners = awaitListeners(waypoint, l -> chain(l.get("main_internal"), REVIEWS_CHAIN)
                    .map(c -> routes(c).toString().contains("=90")).orElse(false));

            Listener terminate = listeners.get("connect_terminate");
            assertEquals("0.0.0.0:15008", terminate.getAddress().getSocketAddress().getAddress() + ":"
                    + terminate.getAddress().getSocketAddress().getPortValue());
            FilterChain hbone = terminate.getFilterChains(0);
            DownstreamTlsContext tls = unpack(hbone.getTransportSocket().getTypedConfig(), DownstreamTlsContext.class);
            assertTrue(tls.getRequireClientCertificate().getValue(), "HBONE requires the client's Istio certificate");
            assertEquals(List.of("h2"), tls.getCommonTlsContext().getAlpnProtocolsList());
            assertEquals(TlsParameters.TlsProtocol.TLSv1_3, tls.getCommonTlsContext().getTlsParams()
                    .getTlsMinimumProtocolVersion());
            assertEquals("default", tls.getCommonTlsContext().getTlsCertificateSdsSecretConfigs(0).getName());
            HttpConnectionManager connect = hcm(hbone);
            assertEquals("CONNECT", connect.getUpgradeConfigs(0).getUpgradeType());
            assertTrue(connect.getHttp2ProtocolOptions().getAllowConnect(), "CONNECT over HTTP/2");
            Route tunnel = connect.getRouteConfig().getVirtualHosts(0).getRoutes(0);
            assertTrue(tunnel.getMatch().hasConnectMatcher());
            assertEquals("main_internal", tunnel.getRoute().getCluster());
            assertEquals("CONNECT", tunnel.getRoute().getUpgradeConfigs(0).getUpgradeType());

            Listener main = listeners.get("main_internal");
            assertTrue(main.hasInternalListener(), "main_internal is an internal listener");
            IPMatcher vips = unpack(main.getFilterChainMatcher().getMatcherTree().getCustomMatch().getTypedConfig(),
                    IPMatcher.class);
            assertTrue(vips.getRangeMatchersList().stream().anyMatch(r -> r.getRanges(0).getAddressPrefix()
                    .equals("10.96.0.10") && r.getRanges(0).getPrefixLen().getValue() == 32
                    && r.getOnMatch().getMatcher().getMatcherTree().getExactMatchMap().getMapOrThrow("9080")
                    .getAction().getTypedConfig().toString().contains(REVIEWS_CHAIN)),
                    "reviews' VIP:port selects its chain: " + vips);
            assertEquals(List.of("inbound-vip|9080|http|reviews-v1.shop.svc.cluster.local=90",
                            "inbound-vip|9080|http|reviews-v2.shop.svc.cluster.local=10"),
                    routes(chain(main, REVIEWS_CHAIN).orElseThrow()).get(0));
            assertTrue(listeners.containsKey("connect_originate"), "HBONE origination: " + listeners.keySet());

            kubectl.run("label", "namespace", "shop", "istio.io/use-waypoint-").ok();
            awaitListeners(waypoint, l -> l.containsKey("main_internal")
                    && chain(l.get("main_internal"), REVIEWS_CHAIN).isEmpty());
        } finally {
            kubectl.run("label", "--overwrite", "namespace", "shop", "istio.io/use-waypoint=waypoint").ok();
        }
    }

    @Test
    void theWaypointsClustersOriginateHboneToTheCapturedPodsAndFollowTheirEndpoints() throws Exception {
        try (AdsClient waypoint = waypoint()) {
            waypoint.subscribe(TypeUrls.CLUSTER, List.of());
            String v1 = "inbound-vip|9080|http|reviews-v1.shop.svc.cluster.local";
            Map<String, Cluster> clusters = awaitResources(waypoint, TypeUrls.CLUSTER, Cluster.class, Cluster::getName,
                    c -> c.containsKey(v1));
            Cluster originate = clusters.get("connect_originate");
            assertEquals(Cluster.DiscoveryType.ORIGINAL_DST, originate.getType());
            assertEquals(15008, originate.getOriginalDstLbConfig().getUpstreamPortOverride().getValue());
            assertTrue(clusters.containsKey("main_internal") && clusters.containsKey("encap"), clusters.keySet().toString());
            assertEquals(Cluster.DiscoveryType.EDS, clusters.get(v1).getType());

            waypoint.subscribe(TypeUrls.ENDPOINT, List.of(v1));
            ClusterLoadAssignment cla = awaitResources(waypoint, TypeUrls.ENDPOINT, ClusterLoadAssignment.class,
                    ClusterLoadAssignment::getClusterName, e -> e.containsKey(v1)).get(v1);
            LbEndpoint pod = cla.getEndpoints(0).getLbEndpoints(0);
            var internal = pod.getEndpoint().getAddress().getEnvoyInternalAddress();
            assertEquals("connect_originate", internal.getServerListenerName(), "the pod is reached over HBONE: " + pod);
            assertEquals("10.0.1.11:9080", internal.getEndpointId());
            assertEquals("10.0.1.11:9080", pod.getMetadata().getFilterMetadataOrThrow(
                    "envoy.filters.listener.original_dst").getFieldsOrThrow("local").getStringValue());

            // a second pod: the endpoint change reaches the waypoint's inbound-vip cluster (incremental EDS)
            kubectl.runWithInput("""
                    apiVersion: discovery.k8s.io/v1
                    kind: EndpointSlice
                    metadata: {name: reviews-v1-1, namespace: shop, labels: {kubernetes.io/service-name: reviews-v1}}
                    addressType: IPv4
                    ports: [{name: http, port: 9080, protocol: TCP}]
                    endpoints:
                    - addresses: [10.0.1.21]
                      conditions: {ready: true}
                    """, "apply", "-f", "-").ok();
            ClusterLoadAssignment scaled = awaitResources(waypoint, TypeUrls.ENDPOINT, ClusterLoadAssignment.class,
                    ClusterLoadAssignment::getClusterName, e -> e.containsKey(v1)
                            && e.get(v1).getEndpoints(0).getLbEndpointsCount() == 2).get(v1);
            assertEquals(List.of("connect_originate", ""), scaled.getEndpoints(0).getLbEndpointsList().stream()
                    .map(e -> e.getEndpoint().getAddress().getEnvoyInternalAddress().getServerListenerName()).toList(),
                    "a pod ztunnel does not capture keeps its own address: " + scaled);
        } finally {
            kubectl.run("delete", "-n", "shop", "endpointslice", "reviews-v1-1", "--ignore-not-found").ok();
        }
    }

    /**
     * Point 4 of issue 35, L7 policy: over xDS the waypoint's chain for {@code reviews} gets the
     * RBAC of a policy targeting its Gateway and of one targeting the Service {@code reviews}
     * (kind Service, core group), the chain of {@code reviews-v1} only the Gateway's, and no chain
     * the policy that selects the waypoint's pods by label (istiod ignores selectors for waypoints).
     */
    @Test
    void policiesTargetingTheWaypointOrItsServiceReachItsChainsAndASelectorPolicyNever() throws Exception {
        String v1Chain = "inbound-vip|9080|http|reviews-v1.shop.svc.cluster.local";
        try (AdsClient waypoint = waypoint()) {
            kubectl.runWithInput("""
                    apiVersion: security.istio.io/v1
                    kind: AuthorizationPolicy
                    metadata: {name: no-admin, namespace: shop}
                    spec:
                      targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
                      action: DENY
                      rules: [{to: [{operation: {paths: [/admin]}}]}]
                    ---
                    apiVersion: security.istio.io/v1
                    kind: AuthorizationPolicy
                    metadata: {name: reviews-readers, namespace: shop}
                    spec:
                      targetRefs: [{group: "", kind: Service, name: reviews}]
                      rules: [{from: [{source: {principals: [cluster.local/ns/shop/sa/productpage]}}], to: [{operation: {methods: [GET]}}]}]
                    ---
                    """ + WaypointNode.SELECTOR_POLICY, "apply", "-f", "-").ok();
            waypoint.subscribe(TypeUrls.LISTENER, List.of());
            Map<String, Listener> listeners = awaitListeners(waypoint, l -> chain(l.get("main_internal"), REVIEWS_CHAIN)
                    .map(c -> RbacPolicies.of(hcm(c)).size() == 2).orElse(false));
            Listener main = listeners.get("main_internal");
            Map<String, String> reviews = RbacPolicies.of(hcm(chain(main, REVIEWS_CHAIN).orElseThrow()));
            assertEquals(List.of("DENY ns[shop]-policy[no-admin]-rule[0]", "ALLOW ns[shop]-policy[reviews-readers]-rule[0]"),
                    List.copyOf(reviews.keySet()));
            assertTrue(reviews.get("ALLOW ns[shop]-policy[reviews-readers]-rule[0]").contains(
                    "{\"filterState\":{\"key\":\"io.istio.peer_principal\",\"stringMatch\":"
                            + "{\"exact\":\"spiffe://cluster.local/ns/shop/sa/productpage\"}}}"),
                    "the source is the HBONE peer: " + reviews);
            assertEquals(List.of("DENY ns[shop]-policy[no-admin]-rule[0]"),
                    List.copyOf(RbacPolicies.of(hcm(chain(main, v1Chain).orElseThrow())).keySet()));
            assertEquals(List.of("DENY ns[shop]-policy[no-admin]-rule[0]"),
                    List.copyOf(RbacPolicies.of(hcm(chain(main, "direct-http").orElseThrow())).keySet()));
        } finally {
            kubectl.run("delete", "-n", "shop", "authorizationpolicy", "no-admin", "reviews-readers", "by-selector",
                    "--ignore-not-found").ok();
        }
    }

    /**
     * Point 4 of issue 35, a waypoint deployed by hand: a Gateway of class istio-waypoint that
     * names its own Service ({@code spec.addresses}, so nothing is deployed for it) becomes a
     * waypoint once the status writer gives it that Service's address, and a service labelled
     * {@code istio.io/use-waypoint} with it reaches ztunnel bound to it (istiod's waypoints.go:
     * the Gateway's Hostname status address, port 15008).
     */
    @Test
    void aWaypointDeployedByHandIsBoundOnceItsGatewayHasAnAddress() throws Exception {
        String ratings = "shop/ratings.shop.svc.cluster.local";
        try (DeltaAdsClient ztunnel = new DeltaAdsClient(server.ports().get("grpc"), ZtunnelAuthorizationXdsTest.ZTUNNEL)) {
            kubectl.runWithInput(ambientService("ratings", "10.96.0.13", "10.0.1.13")
                    + KubeGammaRoutesTest.serviceWithEndpoint("shop", "hand-wp", "mesh", 15008, "10.0.1.20", 15008,
                    "10.96.0.20", "{}") + """
                    apiVersion: gateway.networking.k8s.io/v1
                    kind: Gateway
                    metadata: {name: hand-wp, namespace: shop}
                    spec:
                      gatewayClassName: istio-waypoint
                      addresses: [{type: Hostname, value: hand-wp.shop.svc.cluster.local}]
                      listeners: [{name: mesh, port: 15008, protocol: HBONE}]
                    """, "apply", "-f", "-").ok();
            kubectl.run("label", "service", "-n", "shop", "ratings", "istio.io/use-waypoint=hand-wp").ok();
            ztunnel.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.ADDRESS));
            GatewayAddress expected = GatewayAddress.newBuilder().setHboneMtlsPort(15008).setHostname(
                    NamespacedHostname.newBuilder().setNamespace("shop").setHostname("hand-wp.shop.svc.cluster.local")).build();
            long deadline = System.nanoTime() + WAIT.toNanos();
            Address last = null;
            while (last == null || !last.getService().getWaypoint().equals(expected)) {
                DeltaDiscoveryResponse r = ztunnel.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                if (r == null) {
                    throw new AssertionError("ratings not bound to hand-wp within " + WAIT.toSeconds() + " s; last " + last
                            + "; the Gateway: " + kubectl.run("get", "-n", "shop", "gateway", "hand-wp", "-o", "json").stdout());
                }
                ztunnel.ack(r);
                for (Resource res : r.getResourcesList()) {
                    if (res.getName().equals(ratings)) {
                        last = res.getResource().unpack(Address.class);
                    }
                }
            }
        } finally {
            kubectl.run("delete", "-n", "shop", "gateway", "hand-wp", "--ignore-not-found").ok();
            kubectl.run("delete", "-n", "shop", "service", "hand-wp", "ratings", "--ignore-not-found").ok();
        }
    }

    /**
     * A waypoint node without the gateway-name label (not a pod of the {@code waypoint} template)
     * is served HBONE termination but no service, and the log says why, once, naming the proxy.
     */
    @Test
    void aWaypointNodeWithoutItsGatewaysLabelServesNoServiceAndTheLogSaysWhy() throws Exception {
        String id = "waypoint~10.0.5.6~stray-0.shop~shop.svc.cluster.local";
        try (CapturedLog log = new CapturedLog(AdsService.class);
             AdsClient stray = new AdsClient(server.ports().get("grpc"), id, Map.of("NAMESPACE", "shop"))) {
            stray.subscribe(TypeUrls.LISTENER, List.of());
            Map<String, Listener> listeners = awaitListeners(stray, l -> l.containsKey("main_internal"));
            assertEquals(List.of("direct-tcp", "direct-http"), listeners.get("main_internal").getFilterChainsList().stream()
                    .map(FilterChain::getName).toList());
            assertTrue(listeners.containsKey("connect_terminate"));
            assertEquals(1, log.lines().stream().filter(l -> l.contains("proxy=" + id)
                    && l.contains("gateway.networking.k8s.io/gateway-name")).count(), log.lines().toString());
        }
    }

    /**
     * Issue 35 point 4, workload-addressed traffic: in the ambient namespace {@code bank} three
     * waypoints (their managed Services, as the deployment controller makes them), one per
     * {@code istio.io/waypoint-for}: {@code wl-waypoint} (workload), {@code svc-waypoint} (service)
     * and {@code all-waypoint} (all), each with a Service and a captured pod labelled
     * {@code istio.io/use-waypoint} naming it. As istiod's listener_waypoint.go
     * buildWaypointInternal, a waypoint's {@code main_internal} matches the IPs of the workloads
     * bound to it (PushContext.WorkloadsForWaypoint) with the application-protocol matcher: HTTP
     * ({@code h2c}, {@code http/1.1}) to {@code direct-http}, anything else to {@code direct-tcp},
     * both ending at {@code encap}; its HTTP inspector then runs on every port.
     */
    static void applyWorkloadWaypoints() {
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: bank, labels: {istio.io/dataplane-mode: ambient}}
                ---
                """ + waypointService("wl-waypoint", "workload", "10.96.1.1", "10.0.6.1")
                + waypointService("svc-waypoint", "service", "10.96.1.2", "10.0.6.2")
                + waypointService("all-waypoint", "all", "10.96.1.3", "10.0.6.3")
                + usingWaypoint("ledger", "10.96.2.10", LEDGER_IP, "wl-waypoint")
                + usingWaypoint("teller", "10.96.2.11", TELLER_IP, "svc-waypoint")
                + usingWaypoint("vault", "10.96.2.12", VAULT_IP, "all-waypoint"), "apply", "-f", "-").ok();
        // the API server keeps no status a pod is created with: it is the kubelet's to write
        for (Map.Entry<String, String> pod : Map.of("ledger-0", LEDGER_IP, "teller-0", TELLER_IP, "vault-0", VAULT_IP)
                .entrySet()) {
            kubectl.run("patch", "pod", pod.getKey(), "-n", "bank", "--subresource=status", "--type=merge", "-p",
                    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" + pod.getValue()
                            + "\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}").ok();
        }
    }

    /** A waypoint's Service as the deployment controller makes it (HBONE port 15008) and its ready pod. */
    static String waypointService(String name, String waypointFor, String vip, String podIp) {
        return KubeGammaRoutesTest.serviceWithEndpoint("bank", name, "mesh", 15008, podIp, 15008, vip, "{}",
                "{gateway.istio.io/managed: istio.io-mesh-controller, gateway.networking.k8s.io/gateway-name: " + name
                        + ", istio.io/waypoint-for: " + waypointFor + "}",
                "gateway.networking.k8s.io/gateway-name: " + name);
    }

    /** A Service (HTTP 9080) and its captured pod, both labelled to use {@code waypoint}. */
    static String usingWaypoint(String name, String vip, String podIp, String waypoint) {
        return KubeGammaRoutesTest.serviceWithEndpoint("bank", name, "http", 9080, podIp, 9080, vip,
                "{ambient.istio.io/redirection: enabled}", "{istio.io/use-waypoint: " + waypoint + "}",
                "istio.io/use-waypoint: " + waypoint);
    }

    /** The waypoint's Envoy as istio-agent names it, with the labels the {@code waypoint} template gives its pod. */
    static AdsClient bankWaypoint(String name, String waypointFor) {
        return new AdsClient(server.ports().get("grpc"), "waypoint~10.0.6.9~" + name + "-7c9d-abc.bank~bank.svc.cluster.local",
                Map.of("NAMESPACE", "bank", "CLUSTER_ID", "Kubernetes", "SERVICE_ACCOUNT", name,
                        "WORKLOAD_NAME", name, "LABELS", """
                                {"gateway.networking.k8s.io/gateway-name": "%s",
                                 "gateway.networking.k8s.io/gateway-class-name": "istio-waypoint",
                                 "gateway.istio.io/managed": "istio.io-mesh-controller",
                                 "istio.io/waypoint-for": "%s"}""".formatted(name, waypointFor)));
    }

    @Test
    void aWorkloadWaypointMatchesItsPodsIpToTheDirectChainsUntilThePodsLabelGoes() throws Exception {
        try (AdsClient waypoint = bankWaypoint("wl-waypoint", "workload")) {
            Listener main = subscribeMainInternal(waypoint, l -> workloadMatch(l, LEDGER_IP).isPresent());

            Matcher byProtocol = workloadMatch(main, LEDGER_IP).orElseThrow().getOnMatch().getMatcher();
            assertEquals("application-protocol", byProtocol.getMatcherTree().getInput().getName());
            Map<String, Matcher.OnMatch> alpn = byProtocol.getMatcherTree().getExactMatchMap().getMapMap();
            assertEquals("direct-http", chainOf(alpn.get("'http/1.1'")));
            assertEquals("direct-http", chainOf(alpn.get("'h2c'")));
            assertEquals("direct-tcp", chainOf(byProtocol.getOnNoMatch()), "any other protocol is TCP");
            assertTrue(chain(main, "direct-tcp").isPresent() && chain(main, "direct-http").isPresent());
            assertEquals(32, workloadMatch(main, LEDGER_IP).orElseThrow().getRanges(0).getPrefixLen().getValue());
            assertFalse(httpInspector(main).hasFilterDisabled(),
                    "a workload is reached on any port: the HTTP inspector runs on all: " + httpInspector(main));

            // the Service ledger names wl-waypoint too, but a waypoint for workloads serves no service
            assertTrue(chain(main, "inbound-vip|9080|http|ledger.bank.svc.cluster.local").isEmpty(),
                    main.getFilterChainsList().toString());
            assertFalse(ipMatcher(main).toString().contains("10.96.2.10"), "no service VIP: " + ipMatcher(main));

            kubectl.run("label", "pod", "ledger-0", "-n", "bank", "istio.io/use-waypoint-").ok();
            awaitListeners(waypoint, l -> l.containsKey("main_internal")
                    && workloadMatch(l.get("main_internal"), LEDGER_IP).isEmpty());
        } finally {
            kubectl.run("label", "--overwrite", "pod", "ledger-0", "-n", "bank",
                    "istio.io/use-waypoint=wl-waypoint").ok();
        }
    }

    @Test
    void aServiceWaypointServesItsServiceButNoWorkload() throws Exception {
        try (AdsClient waypoint = bankWaypoint("svc-waypoint", "service")) {
            Listener main = subscribeMainInternal(waypoint,
                    l -> chain(l, "inbound-vip|9080|http|teller.bank.svc.cluster.local").isPresent());
            assertTrue(workloadMatch(main, TELLER_IP).isEmpty(), "teller-0 is not bound to a waypoint for services: "
                    + ipMatcher(main));
        }
    }

    @Test
    void aWaypointForAllServesItsServiceAndItsWorkload() throws Exception {
        try (AdsClient waypoint = bankWaypoint("all-waypoint", "all")) {
            Listener main = subscribeMainInternal(waypoint, l -> workloadMatch(l, VAULT_IP).isPresent());
            assertTrue(chain(main, "inbound-vip|9080|http|vault.bank.svc.cluster.local").isPresent(),
                    main.getFilterChainsList().toString());
            List<String> order = ipMatcher(main).getRangeMatchersList().stream()
                    .map(r -> r.getRanges(0).getAddressPrefix()).toList();
            assertEquals(List.of("10.96.2.12", VAULT_IP), order, "services' VIPs first, then workloads (as istiod)");
        }
    }

    /** Subscribes {@code waypoint} to LDS and waits for a {@code main_internal} that is as {@code expected}. */
    static Listener subscribeMainInternal(AdsClient waypoint, Predicate<Listener> expected) throws Exception {
        waypoint.subscribe(TypeUrls.LISTENER, List.of());
        return awaitListeners(waypoint, l -> l.containsKey("main_internal") && expected.test(l.get("main_internal")))
                .get("main_internal");
    }

    static IPMatcher ipMatcher(Listener main) {
        return unpack(main.getFilterChainMatcher().getMatcherTree().getCustomMatch().getTypedConfig(), IPMatcher.class);
    }

    /** The range matcher of {@code main_internal} holding exactly {@code ip}, if any. */
    static Optional<IPMatcher.IPRangeMatcher> workloadMatch(Listener main, String ip) {
        if (main == null) {
            return Optional.empty();
        }
        return ipMatcher(main).getRangeMatchersList().stream()
                .filter(r -> r.getRangesList().stream().anyMatch(c -> c.getAddressPrefix().equals(ip)))
                .findFirst();
    }

    static String chainOf(Matcher.OnMatch onMatch) {
        return unpack(onMatch.getAction().getTypedConfig(), StringValue.class).getValue();
    }

    static ListenerFilter httpInspector(Listener main) {
        return main.getListenerFiltersList().stream().filter(f -> f.getName().contains("http_inspector"))
                .findFirst().orElseThrow(() -> new AssertionError("no HTTP inspector: " + main.getListenerFiltersList()));
    }

    static Map<String, Listener> awaitListeners(AdsClient client, Predicate<Map<String, Listener>> expected)
            throws Exception {
        return awaitResources(client, TypeUrls.LISTENER, Listener.class, Listener::getName, expected);
    }

    /**
     * Waits for a response of {@code type} (ACKing each) whose resources by name satisfy
     * {@code expected}: what the server pushes after a change.
     */
    static <T extends Message> Map<String, T> awaitResources(AdsClient client, String type, Class<T> cls,
                                                            Function<T, String> name,
                                                            Predicate<Map<String, T>> expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, T> seen = Map.of();
        DiscoveryResponse r;
        while ((r = client.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) != null) {
            if (!r.getTypeUrl().equals(type)) {
                continue;
            }
            client.ack(r, type.equals(TypeUrls.ENDPOINT) ? r.getResourcesList().stream()
                    .map(a -> unpack(a, ClusterLoadAssignment.class).getClusterName()).toList() : List.of());
            Map<String, T> byName = new TreeMap<>();
            for (Any a : r.getResourcesList()) {
                T t = unpack(a, cls);
                byName.put(name.apply(t), t);
            }
            seen = byName;
            if (expected.test(byName)) {
                return byName;
            }
        }
        throw new AssertionError(type + " not as expected within " + WAIT.toSeconds() + " s; last pushed "
                + seen.keySet() + (client.error() != null ? "; stream ended: " + client.error() : ""));
    }

    static Optional<FilterChain> chain(Listener l, String name) {
        return l == null ? Optional.empty()
                : l.getFilterChainsList().stream().filter(c -> c.getName().equals(name)).findFirst();
    }

    static HttpConnectionManager hcm(FilterChain c) {
        return unpack(c.getFilters(c.getFiltersCount() - 1).getTypedConfig(), HttpConnectionManager.class);
    }

    /** Each route of a chain's inline route configuration as its {@code cluster=weight} list. */
    static List<List<String>> routes(FilterChain c) {
        return hcm(c).getRouteConfig().getVirtualHostsList().stream().flatMap(v -> v.getRoutesList().stream())
                .map(r -> r.getRoute().hasWeightedClusters()
                        ? r.getRoute().getWeightedClusters().getClustersList().stream()
                        .map(w -> w.getName() + "=" + w.getWeight().getValue()).toList()
                        : List.of(r.getRoute().getCluster()))
                .toList();
    }

    static <T extends Message> T unpack(Any a, Class<T> cls) {
        try {
            return a.unpack(cls);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }
}
