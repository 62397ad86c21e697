package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.xds.XdsNameResolverProvider;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 33, acceptance 3: GAMMA driven by real Gateway API objects. The standard-channel CRDs
 * (v1.6.0) and every object are applied with kubectl to the API server stand-in; a whole
 * MeshPilot in Kubernetes mode reads them through its informers and converts them. A GRPCRoute
 * whose parentRef is the Service {@code echo} (core group, kind Service, port 7070) splits the
 * calls of grpc-java's real xDS client between the Services {@code echo-v1} and {@code echo-v2},
 * whose endpoints are real gRPC servers on loopback; changing the route with kubectl moves the
 * client, and a method match sends one method elsewhere. An HTTPRoute on the Service
 * {@code reviews} changes an Envoy sidecar's outbound routes by push and deleting it restores the
 * default route. A route in another namespace than its Service is a consumer route: only
 * clients in the route's namespace get it (istiod's route.go buildSidecarVirtualHostsForVirtualService:
 * a gateway-semantics VirtualService applies when it is in the proxy's or the service's
 * namespace, and SelectVirtualServices puts the proxy's namespace's first). A ServiceEntry as
 * parent routes its hosts for sidecars, and a {@code Hostname} backend on a Gateway route sends to
 * the ServiceEntry's cluster.
 */
class KubeGammaRoutesTest {
    static final Path CRDS = Path.of("src/test/resources/kube/gateway-api/standard");
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String ECHO = "echo.test.svc.cluster.local";
    static final MethodDescriptor<String, String> OTHER = ProxylessGrpcTest.WHO.toBuilder()
            .setFullMethodName("test.Echo/Other").build();

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;
    static ManagedChannel channel;
    static final List<Server> backends = new ArrayList<>();

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = Kubectl.against(api, dir);
        kubectl.run("create", "-f", CRDS.toAbsolutePath().toString()).ok();
        StringBuilder cluster = new StringBuilder();
        for (String ns : List.of("istio-system", "test", "shop", "frontend", "other")) {
            cluster.append("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n".formatted(ns));
        }
        int ip = 2;
        for (String name : List.of("echo", "echo-v1", "echo-v2")) {
            Server backend = backend(name);
            backends.add(backend);
            cluster.append(serviceWithEndpoint("test", name, "grpc", 7070, "127.0.0." + ip++, backend.getPort()));
        }
        // two more gRPC Services for the consumer GRPCRoute, served by the echo and echo-v2 servers
        cluster.append(serviceWithEndpoint("test", "greet", "grpc", 7070, "127.0.0." + ip++, backends.get(0).getPort()));
        cluster.append(serviceWithEndpoint("test", "greet-canary", "grpc", 7070, "127.0.0." + ip++,
                backends.get(2).getPort()));
        // the HTTP services only need endpoints to exist: their routes are read, not called
        for (String name : List.of("reviews", "reviews-v1", "reviews-v2", "reviews-v3", "ratings", "ratings-v2", "ratings-v3")) {
            cluster.append(serviceWithEndpoint("shop", name, "http", 9080, "10.0.1." + ip++, 9080));
        }
        kubectl.runWithInput(cluster.toString(), "apply", "-f", "-").ok();

        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", dir.resolve("kubeconfig").toString(),
                "--registries", "Kubernetes"));
        int at = flags.indexOf("--configDir"); // config only from the cluster
        flags.remove(at + 1);
        flags.remove(at);
        server = MeshPilotServer.start(TestServers.args(flags, Map.of()));
        NameResolverRegistry.getDefaultRegistry().register(XdsNameResolverProvider.createForTest("xds-kube-gamma",
                KubeProxylessGrpcTest.bootstrap(server.ports().get("grpc"))));
        channel = Grpc.newChannelBuilder("xds-kube-gamma:///" + ECHO + ":7070", InsecureChannelCredentials.create())
                .build();
    }

    @AfterAll
    static void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
        backends.forEach(Server::shutdownNow);
    }

    /** A real gRPC backend whose test.Echo/Who and test.Echo/Other answer {@code name}. */
    static Server backend(String name) throws IOException {
        ServerServiceDefinition.Builder service = ServerServiceDefinition.builder("test.Echo");
        for (MethodDescriptor<String, String> method : List.of(ProxylessGrpcTest.WHO, OTHER)) {
            service.addMethod(method, ServerCalls.asyncUnaryCall((req, out) -> {
                out.onNext(name);
                out.onCompleted();
            }));
        }
        return Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(service.build())
                .build().start();
    }

    /**
     * A Service {@code name} on {@code port} with one ready Pod at {@code podIp} whose endpoint
     * listens on {@code endpointPort} (its own EndpointSlice, as the endpoints controller writes).
     */
    static String serviceWithEndpoint(String ns, String name, String portName, int port, String podIp, int endpointPort) {
        return serviceWithEndpoint(ns, name, portName, port, podIp, endpointPort, "", "{}");
    }

    /**
     * The same with the Service's {@code clusterIp} ("" for none) and the pod's annotations
     * ({@code podAnnotations}, a YAML flow map).
     */
    static String serviceWithEndpoint(String ns, String name, String portName, int port, String podIp, int endpointPort,
                                      String clusterIp, String podAnnotations) {
        return serviceWithEndpoint(ns, name, portName, port, podIp, endpointPort, clusterIp, podAnnotations, "{}", "");
    }

    /**
     * The same with the Service's labels ({@code serviceLabels}, a YAML flow map) and more pod
     * labels beside {@code app} ({@code podLabels}, flow-map entries such as {@code "a: b, c: d"}).
     */
    static String serviceWithEndpoint(String ns, String name, String portName, int port, String podIp, int endpointPort,
                                      String clusterIp, String podAnnotations, String serviceLabels, String podLabels) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %1$s, namespace: %2$s, labels: %9$s}
                spec:
                  selector: {app: %1$s}
                  ports: [{name: %3$s, port: %4$d, targetPort: %4$d}]
                %7$s
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: %1$s-0, namespace: %2$s, labels: {app: %1$s%10$s}, annotations: %8$s}
                spec:
                  containers: [{name: app, image: app}]
                status:
                  phase: Running
                  podIP: %5$s
                  conditions: [{type: Ready, status: "True"}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: %1$s-0, namespace: %2$s, labels: {kubernetes.io/service-name: %1$s}}
                addressType: IPv4
                ports: [{name: %3$s, port: %6$d, protocol: TCP}]
                endpoints:
                - addresses: [%5$s]
                  conditions: {ready: true}
                  targetRef: {kind: Pod, name: %1$s-0, namespace: %2$s}
                ---
                """.formatted(name, ns, portName, port, podIp, endpointPort,
                clusterIp.isEmpty() ? "" : "  clusterIP: " + clusterIp, podAnnotations, serviceLabels,
                podLabels.isEmpty() ? "" : ", " + podLabels);
    }

    /** A GRPCRoute {@code echo-split} on the Service echo port 7070 with {@code rules}. */
    static String echoRoute(String rules) {
        return """
                apiVersion: gateway.networking.k8s.io/v1
                kind: GRPCRoute
                metadata: {name: echo-split, namespace: test}
                spec:
                  parentRefs: [{group: "", kind: Service, name: echo, port: 7070}]
                  rules:
                """ + rules.indent(2);
    }

    /** Which backends answered {@code n} calls of {@code method} on the echo channel, with how many calls each. */
    static Map<String, Integer> calls(int n, MethodDescriptor<String, String> method) {
        return calls(channel, method, n);
    }

    /** The same for test.Echo/Who on {@code on}. */
    static Map<String, Integer> calls(ManagedChannel on, int n) {
        return calls(on, ProxylessGrpcTest.WHO, n);
    }

    static Map<String, Integer> calls(ManagedChannel on, MethodDescriptor<String, String> method, int n) {
        Map<String, Integer> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            out.merge(ClientCalls.blockingUnaryCall(on, method,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withWaitForReady(), "who"), 1, Integer::sum);
        }
        return out;
    }

    @Test
    void aGrpcRouteOnTheServiceSplitsGrpcJavasCallsAndTheClientFollowsItsChanges() throws Exception {
        assertEquals(Map.of("echo", 20), calls(20, ProxylessGrpcTest.WHO), "no route yet: the Service's own endpoint");

        kubectl.runWithInput(echoRoute("""
                - backendRefs:
                  - {name: echo-v1, port: 7070, weight: 80}
                  - {name: echo-v2, port: 7070, weight: 20}
                """), "apply", "-f", "-").ok();
        Await.until("the client to leave the echo Service for the route's backends", WAIT,
                () -> !calls(20, ProxylessGrpcTest.WHO).containsKey("echo"));
        Map<String, Integer> split = calls(XdsClientScenario.SPLIT_CALLS, ProxylessGrpcTest.WHO);
        int v1 = split.getOrDefault("echo-v1", 0);
        assertEquals(XdsClientScenario.SPLIT_CALLS, v1 + split.getOrDefault("echo-v2", 0), "echo-v1 and echo-v2 only: " + split);
        // 5 points of 1,000 calls are 50 calls, about 4 standard deviations of an 80/20 split
        assertTrue(Math.abs(v1 - XdsClientScenario.SPLIT_CALLS * 8 / 10) <= XdsClientScenario.SPLIT_CALLS / 20,
                "80/20 within 5 points: " + split);

        kubectl.runWithInput(echoRoute("""
                - backendRefs:
                  - {name: echo-v1, port: 7070, weight: 0}
                  - {name: echo-v2, port: 7070, weight: 100}
                """), "apply", "-f", "-").ok();
        Await.until("the client to follow the route changed to 0/100", WAIT,
                () -> calls(20, ProxylessGrpcTest.WHO).equals(Map.of("echo-v2", 20)));
        assertEquals(Map.of("echo-v2", 100), calls(100, ProxylessGrpcTest.WHO));

        kubectl.runWithInput(echoRoute("""
                - matches: [{method: {service: test.Echo, method: Other}}]
                  backendRefs: [{name: echo-v2, port: 7070}]
                - backendRefs: [{name: echo-v1, port: 7070}]
                """), "apply", "-f", "-").ok();
        Await.until("test.Echo/Who to go to echo-v1 alone", WAIT,
                () -> calls(20, ProxylessGrpcTest.WHO).equals(Map.of("echo-v1", 20)));
        assertEquals(Map.of("echo-v2", 50), calls(50, OTHER), "the method match sends test.Echo/Other to echo-v2");
        assertEquals(Map.of("echo-v1", 50), calls(50, ProxylessGrpcTest.WHO), "and the other methods to echo-v1");
    }

    static final String REVIEWS_ROUTE = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: HTTPRoute
            metadata: {name: reviews, namespace: shop}
            spec:
              parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
              rules:
              - matches: [{headers: [{name: end-user, value: jason}]}]
                backendRefs: [{name: reviews-v2, port: 9080}]
              - backendRefs:
                - {name: reviews-v1, port: 9080, weight: 50}
                - {name: reviews-v3, port: 9080, weight: 50}
            """;

    @Test
    void anHttpRouteOnTheServiceChangesASidecarsOutboundRoutesByPushAndItsDeletionRestoresTheDefault() throws Exception {
        try (AdsClient sidecar = sidecar("productpage", "shop")) {
            sidecar.subscribe(TypeUrls.ROUTE, List.of("9080"));
            String reviews = "reviews.shop.svc.cluster.local";
            List<String> defaults = List.of("default -> outbound|9080||" + reviews);
            awaitRoutes(sidecar, reviews, defaults::equals);

            kubectl.runWithInput(REVIEWS_ROUTE, "apply", "-f", "-").ok();
            List<String> routed = List.of(
                    "shop.reviews.0 end-user=jason -> outbound|9080||reviews-v2.shop.svc.cluster.local",
                    "shop.reviews.1 -> outbound|9080||reviews-v1.shop.svc.cluster.local=50"
                            + ",outbound|9080||reviews-v3.shop.svc.cluster.local=50");
            awaitRoutes(sidecar, reviews, routed::equals);

            kubectl.run("delete", "-n", "shop", "httproute", "reviews").ok();
            awaitRoutes(sidecar, reviews, defaults::equals);
        }
    }

    static String ratingsRoute(String name, String ns, String backend) {
        return """
                apiVersion: gateway.networking.k8s.io/v1
                kind: HTTPRoute
                metadata: {name: %s, namespace: %s}
                spec:
                  parentRefs: [{group: "", kind: Service, name: ratings, namespace: shop, port: 9080}]
                  rules: [{backendRefs: [{name: %s, namespace: shop, port: 9080}]}]
                """.formatted(name, ns, backend);
    }

    /**
     * A consumer route: an HTTPRoute in {@code frontend} on the Service {@code shop/ratings}
     * applies to the sidecars of {@code frontend} only, before the producer's route of
     * {@code shop} even when that one is older; a sidecar of {@code other} gets the producer's
     * route, and the default route once that is deleted, never frontend's.
     */
    @Test
    void aRouteInAnotherNamespaceThanItsServiceAppliesOnlyToClientsInTheRoutesNamespace() throws Exception {
        String ratings = "ratings.shop.svc.cluster.local";
        List<String> defaults = List.of("default -> outbound|9080||" + ratings);
        List<String> producer = List.of("shop.ratings.0 -> outbound|9080||ratings-v2.shop.svc.cluster.local");
        List<String> consumer = List.of("frontend.ratings-canary.0 -> outbound|9080||ratings-v3.shop.svc.cluster.local");
        try (AdsClient frontend = sidecar("web", "frontend"); AdsClient other = sidecar("batch", "other")) {
            frontend.subscribe(TypeUrls.ROUTE, List.of("9080"));
            other.subscribe(TypeUrls.ROUTE, List.of("9080"));
            kubectl.runWithInput(ratingsRoute("ratings", "shop", "ratings-v2"), "apply", "-f", "-").ok();
            awaitRoutes(frontend, ratings, producer::equals);
            awaitRoutes(other, ratings, producer::equals);

            kubectl.runWithInput(ratingsRoute("ratings-canary", "frontend", "ratings-v3"), "apply", "-f", "-").ok();
            awaitRoutes(frontend, ratings, consumer::equals); // the consumer's own route first, though newer

            kubectl.run("delete", "-n", "shop", "httproute", "ratings").ok();
            awaitRoutes(other, ratings, defaults::equals); // frontend's route is not for other's clients
            assertEquals(consumer, describe(latestRoutes(frontend), ratings), "frontend keeps its route");
        }
    }

    /**
     * The consumer rule for proxyless gRPC: a GRPCRoute in {@code frontend} on the Service
     * {@code test/greet} sends the calls of grpc-java clients of {@code frontend} to
     * {@code greet-canary} (served by the echo-v2 server); a client of {@code other} keeps calling
     * greet (the echo server).
     */
    @Test
    void aGrpcRouteInAnotherNamespaceThanItsServiceAppliesOnlyToGrpcClientsInTheRoutesNamespace() throws Exception {
        ManagedChannel frontend = greetChannel("frontend");
        ManagedChannel other = greetChannel("other");
        try {
            assertEquals(Map.of("echo", 10), calls(other, 10), "no route yet");
            kubectl.runWithInput("""
                    apiVersion: gateway.networking.k8s.io/v1
                    kind: GRPCRoute
                    metadata: {name: greet-canary, namespace: frontend}
                    spec:
                      parentRefs: [{group: "", kind: Service, name: greet, namespace: test, port: 7070}]
                      rules: [{backendRefs: [{name: greet-canary, namespace: test, port: 7070}]}]
                    """, "apply", "-f", "-").ok();
            Await.until("frontend's client to follow its GRPCRoute", WAIT,
                    () -> calls(frontend, 10).equals(Map.of("echo-v2", 10)));
            // frontend's client has the route, so the push that carried it reached other's client too
            assertEquals(Map.of("echo", 50), calls(other, 50), "a client of another namespace keeps the Service");
        } finally {
            frontend.shutdownNow();
            other.shutdownNow();
        }
    }

    /** An HTTP ServiceEntry {@code name} in {@code shop} for {@code host} on 9080. */
    static String serviceEntry(String name, String host) {
        return """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: %s, namespace: shop}
                spec:
                  hosts: [%s]
                  location: MESH_EXTERNAL
                  resolution: DNS
                  ports: [{number: 9080, name: http, protocol: HTTP}]
                """.formatted(name, host);
    }

    /**
     * GAMMA with a ServiceEntry parent (istiod's route_collections.go: the mesh VirtualService is
     * for the ServiceEntry's hosts). An HTTPRoute whose parentRef is the ServiceEntry
     * {@code external} is not accepted while the ServiceEntry is missing (istiod's
     * referenceAllowed message); creating the ServiceEntry converts again, and the route changes
     * a sidecar's outbound routes for the ServiceEntry's host by push (its last rule sends to the
     * host itself as a {@code Hostname} backend). Deleting the route restores the default route.
     */
    @Test
    void anHttpRouteOnAServiceEntryChangesASidecarsOutboundRoutesForItsHost() throws Exception {
        String host = "api.external.example.com";
        kubectl.runWithInput("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: HTTPRoute
                metadata: {name: external, namespace: shop}
                spec:
                  parentRefs: [{group: networking.istio.io, kind: ServiceEntry, name: external}]
                  rules:
                  - matches: [{headers: [{name: end-user, value: jason}]}]
                    backendRefs: [{name: reviews-v2, port: 9080}]
                  - backendRefs: [{group: networking.istio.io, kind: Hostname, name: %s, port: 9080}]
                """.formatted(host), "apply", "-f", "-").ok();
        Await.until("the route's missing ServiceEntry parent in its status", WAIT,
                () -> serviceEntryParentAccepted("external").equals(
                        "False/NoMatchingParent/parent service entry: \"external\" not found"));
        try (AdsClient sidecar = sidecar("checkout", "shop")) {
            sidecar.subscribe(TypeUrls.ROUTE, List.of("9080"));
            kubectl.runWithInput(serviceEntry("external", host), "apply", "-f", "-").ok();
            List<String> routed = List.of(
                    "shop.external.0 end-user=jason -> outbound|9080||reviews-v2.shop.svc.cluster.local",
                    "shop.external.1 -> outbound|9080||" + host);
            awaitRoutes(sidecar, host, routed::equals);
            Await.until("the route's ServiceEntry parent to be Accepted", WAIT,
                    () -> serviceEntryParentAccepted("external").equals("True/Accepted/Route was valid"));

            kubectl.run("delete", "-n", "shop", "httproute", "external").ok();
            awaitRoutes(sidecar, host, List.of("default -> outbound|9080||" + host)::equals);
        } finally {
            kubectl.run("delete", "-n", "shop", "httproute/external", "serviceentry/external", "--ignore-not-found").ok();
        }
    }

    /** {@code status/reason/message} of the Accepted condition of the HTTPRoute's ServiceEntry parent. */
    static String serviceEntryParentAccepted(String route) {
        String accepted = "{.status.parents[?(@.parentRef.kind==\"ServiceEntry\")].conditions[?(@.type==\"Accepted\")]";
        return kubectl.run("get", "httproute", route, "-n", "shop", "-o", "jsonpath=" + accepted + ".status}/"
                + accepted + ".reason}/" + accepted + ".message}").stdout();
    }

    /**
     * A {@code Hostname} backend (group networking.istio.io; istiod's buildDestination): an
     * HTTPRoute on a manually deployed Gateway (its address names the Service {@code edge})
     * sends to the ServiceEntry's host, so the gateway proxy, an endpoint of {@code edge}, routes
     * {@code shop.example.com} to the ServiceEntry's cluster.
     */
    @Test
    void anHttpRouteOnAGatewayWithAHostnameBackendRoutesToTheServiceEntrysCluster() throws Exception {
        String host = "payments.external.example.com";
        kubectl.runWithInput(serviceEntry("payments", host)
                + "---\n" + serviceWithEndpoint("shop", "edge", "http", 80, "10.0.4.4", 80) + """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: edge, namespace: shop}
                spec:
                  gatewayClassName: istio
                  addresses: [{type: Hostname, value: edge.shop.svc.cluster.local}]
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: HTTPRoute
                metadata: {name: payments, namespace: shop}
                spec:
                  parentRefs: [{name: edge}]
                  hostnames: [shop.example.com]
                  rules:
                  - backendRefs: [{group: networking.istio.io, kind: Hostname, name: %s, port: 9080}]
                """.formatted(host), "apply", "-f", "-").ok();
        try (AdsClient gateway = new AdsClient(server.ports().get("grpc"),
                "router~10.0.4.4~edge-0.shop~shop.svc.cluster.local",
                Map.of("NAMESPACE", "shop", "LABELS", "{\"app\":\"edge\"}"))) {
            gateway.subscribe(TypeUrls.ROUTE, List.of("http.80"));
            List<String> routed = List.of("shop.payments.0 -> outbound|9080||" + host);
            awaitRoutes(gateway, "http.80", "shop.example.com:80", routed::equals);
        } finally {
            kubectl.run("delete", "-n", "shop", "httproute/payments", "gateway/edge", "serviceentry/payments",
                    "--ignore-not-found").ok();
        }
    }

    /** A grpc-java xDS channel to greet:7070 of a proxyless client in {@code ns}. */
    static ManagedChannel greetChannel(String ns) {
        String scheme = "xds-kube-gamma-" + ns;
        NameResolverRegistry.getDefaultRegistry().register(XdsNameResolverProvider.createForTest(scheme,
                KubeProxylessGrpcTest.bootstrap(server.ports().get("grpc"), ns)));
        return Grpc.newChannelBuilder(scheme + ":///greet.test.svc.cluster.local:7070",
                InsecureChannelCredentials.create()).build();
    }

    /** An Envoy sidecar of {@code app} in {@code ns}, as istio-agent names its node. */
    static AdsClient sidecar(String app, String ns) {
        return new AdsClient(server.ports().get("grpc"), "sidecar~10.0.9.9~" + app + "-0." + ns + "~" + ns
                + ".svc.cluster.local", Map.of("NAMESPACE", ns, "LABELS", "{\"app\":\"" + app + "\"}"));
    }

    /**
     * Waits for an RDS response (ACKing each, never asking again) whose routes for {@code host}
     * satisfy {@code expected}: what the server pushes after a change.
     */
    static void awaitRoutes(AdsClient client, String host, Predicate<List<String>> expected) throws Exception {
        awaitRoutes(client, "9080", host + ":9080", expected);
    }

    /** The same for the virtual host {@code virtualHost} of the route configuration {@code routeName}. */
    static void awaitRoutes(AdsClient client, String routeName, String virtualHost, Predicate<List<String>> expected)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<String> seen = null;
        DiscoveryResponse rds;
        while ((rds = client.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) != null) {
            if (!rds.getTypeUrl().equals(TypeUrls.ROUTE)) {
                continue;
            }
            client.ack(rds, List.of(routeName));
            if (rds.getResourcesCount() == 0) {
                continue; // the route configuration is not built yet (its listener's config still converting)
            }
            seen = describeVirtualHost(routeConfiguration(rds), virtualHost);
            if (expected.test(seen)) {
                return;
            }
        }
        throw new AssertionError("routes of " + virtualHost + " not as expected within " + WAIT.toSeconds()
                + " s; last pushed " + seen);
    }

    /** The route configuration of the last RDS response {@code client} received. */
    static RouteConfiguration latestRoutes(AdsClient client) {
        List<DiscoveryResponse> rds = client.received().stream().filter(r -> r.getTypeUrl().equals(TypeUrls.ROUTE))
                .toList();
        return routeConfiguration(rds.get(rds.size() - 1));
    }

    static RouteConfiguration routeConfiguration(DiscoveryResponse rds) {
        try {
            return rds.getResources(0).unpack(RouteConfiguration.class);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    /** The routes of {@code host}'s virtual host as {@code name [header=value] -> cluster[=weight],...}. */
    static List<String> describe(RouteConfiguration rc, String host) {
        return describeVirtualHost(rc, host + ":9080");
    }

    static List<String> describeVirtualHost(RouteConfiguration rc, String name) {
        Optional<VirtualHost> vh = rc.getVirtualHostsList().stream()
                .filter(v -> v.getName().equals(name)).findFirst();
        return vh.map(v -> v.getRoutesList().stream().map(KubeGammaRoutesTest::describe).toList()).orElse(List.of());
    }

    static String describe(Route r) {
        StringBuilder s = new StringBuilder(r.getName());
        r.getMatch().getHeadersList().forEach(h -> s.append(' ').append(h.getName()).append('=')
                .append(h.getStringMatch().getExact()));
        s.append(" -> ");
        if (r.getRoute().hasWeightedClusters()) {
            s.append(String.join(",", r.getRoute().getWeightedClusters().getClustersList().stream()
                    .map(c -> c.getName() + "=" + c.getWeight().getValue()).toList()));
        } else {
            s.append(r.getRoute().getCluster());
        }
        return s.toString();
    }
}
