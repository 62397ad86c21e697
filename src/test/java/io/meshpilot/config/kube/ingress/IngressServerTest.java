package io.meshpilot.config.kube.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance 4 of issue 31: Kubernetes Ingresses applied with kubectl to the API server
 * stand-in, a whole server in Kubernetes mode, and a gateway proxy ({@code istio=ingressgateway})
 * over ADS. It gets istiod's listeners and routes for the Ingresses of class {@code istio}
 * (host and path routing to the backends' clusters, Prefix by path segment, Exact, the
 * ImplementationSpecific {@code /*} form as a prefix, an HTTPS server for the TLS section), the
 * Ingresses get the ingress Service's load balancer address in their status, an Ingress naming
 * a Service that does not exist is logged and the others stay served, an Ingress of another
 * class is left alone, and with {@code ingressControllerMode: OFF} nothing is served.
 */
class IngressServerTest {
    static final String GATEWAY_ID = "router~10.0.0.9~istio-ingressgateway-1.istio-system~istio-system.svc.cluster.local";
    static final Map<String, String> GATEWAY_METADATA = Map.of("NAMESPACE", "istio-system",
            "LABELS", "{\"istio\":\"ingressgateway\"}");

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;

    @BeforeEach
    void cluster() {
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
                metadata: {name: shop}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: istio-ingressgateway, namespace: istio-system}
                spec:
                  type: LoadBalancer
                  selector: {istio: ingressgateway}
                  ports:
                  - {name: http2, port: 80, targetPort: 8080}
                  - {name: https, port: 443, targetPort: 8443}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: cart, namespace: shop}
                spec:
                  selector: {app: cart}
                  ports: [{name: http, port: 8080}]
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: catalog, namespace: shop}
                spec:
                  selector: {app: catalog}
                  ports: [{name: http-web, port: 9080}]
                ---
                apiVersion: networking.k8s.io/v1
                kind: IngressClass
                metadata: {name: istio}
                spec: {controller: istio.io/ingress-controller}
                ---
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata: {name: web, namespace: shop}
                spec:
                  ingressClassName: istio
                  tls:
                  - {hosts: [shop.example.com], secretName: shop-cert}
                  rules:
                  - host: shop.example.com
                    http:
                      paths:
                      - {path: /cart, pathType: Prefix, backend: {service: {name: cart, port: {number: 8080}}}}
                      - {path: /checkout, pathType: Exact, backend: {service: {name: cart, port: {number: 8080}}}}
                      - {path: /catalog/*, pathType: ImplementationSpecific, backend: {service: {name: catalog, port: {name: http-web}}}}
                  - host: api.example.com
                    http:
                      paths:
                      - {path: /v1, pathType: Prefix, backend: {service: {name: catalog, port: {number: 9080}}}}
                ---
                apiVersion: networking.k8s.io/v1
                kind: Ingress
                metadata:
                  name: legacy
                  namespace: shop
                  annotations: {kubernetes.io/ingress.class: nginx}
                spec:
                  rules:
                  - host: nginx.example.com
                    http:
                      paths:
                      - {path: /, pathType: Prefix, backend: {service: {name: cart, port: {number: 8080}}}}
                """, "apply", "-f", "-").ok();
        kubectl.run("-n", "istio-system", "patch", "service", "istio-ingressgateway", "--subresource=status",
                "--type=merge", "-p", "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"203.0.113.10\"}]}}}").ok();
    }

    @AfterEach
    void stop() {
        api.stop();
    }

    List<String> flags() {
        List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", dir.resolve("kubeconfig").toString()));
        int at = flags.indexOf("--configDir");
        flags.remove(at + 1);
        flags.remove(at);
        return flags;
    }

    static final String BROKEN = """
            apiVersion: networking.k8s.io/v1
            kind: Ingress
            metadata: {name: broken, namespace: shop}
            spec:
              ingressClassName: istio
              rules:
              - host: broken.example.com
                http:
                  paths:
                  - {path: /, pathType: Prefix, backend: {service: {name: missing, port: {name: http}}}}
            """;

    @Test
    void theIngressGatewayRoutesByHostAndPathAndTheIngressGetsTheLoadBalancerAddress() throws Exception {
        api.writeKubeconfig(dir);
        try (CapturedLog log = new CapturedLog(IngressController.class);
             MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags(), Map.of()));
             AdsClient gateway = new AdsClient(server.ports().get("grpc"), GATEWAY_ID, GATEWAY_METADATA)) {
            Map<String, RouteConfiguration> routes = awaitRoutes(gateway, r -> r.containsKey("http.80")
                    && hosts(r.get("http.80")).contains("api.example.com:80"));
            RouteConfiguration http = routes.get("http.80");
            assertEquals(new TreeSet<>(List.of("api.example.com:80", "shop.example.com:80")), hosts(http),
                    "the nginx-class Ingress is not served: " + http);
            VirtualHost shop = virtualHost(http, "shop.example.com:80");
            // longest path first, exact before prefix at equal length; Prefix by path segment (ingress semantics)
            assertEquals(List.of("path /checkout -> outbound|8080||cart.shop.svc.cluster.local",
                            "sep-prefix /catalog -> outbound|9080||catalog.shop.svc.cluster.local",
                            "sep-prefix /cart -> outbound|8080||cart.shop.svc.cluster.local"),
                    shop.getRoutesList().stream().map(IngressServerTest::describe).toList());
            assertEquals(List.of("sep-prefix /v1 -> outbound|9080||catalog.shop.svc.cluster.local"),
                    virtualHost(http, "api.example.com:80").getRoutesList().stream().map(IngressServerTest::describe)
                            .toList());
            // the TLS section: an HTTPS server on 443 for its host, the Secret as the SDS credential
            String https = routes.keySet().stream().filter(n -> n.startsWith("https.443.")).findFirst()
                    .orElseThrow(() -> new AssertionError("no HTTPS route configuration: " + routes.keySet()));
            assertEquals(new TreeSet<>(List.of("shop.example.com:443")), hosts(routes.get(https)));
            Listener secure = lastListeners.stream().filter(l -> l.getName().equals("0.0.0.0_443"))
                    .findFirst().orElseThrow(() -> new AssertionError("no 443 listener: " + lastListeners.stream().map(Listener::getName).toList()));
            assertTrue(secure.toString().contains("kubernetes://shop-cert"), secure.toString());

            // status: the ingress Service's load balancer address, on the Ingresses served only
            Await.until("the status of shop/web", Duration.ofSeconds(20), () -> "203.0.113.10".equals(statusIp("web")));
            assertEquals(null, statusIp("legacy"), "another class's Ingress is not ours to write");
            kubectl.run("-n", "istio-system", "patch", "service", "istio-ingressgateway", "--subresource=status",
                    "--type=merge", "-p", "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"hostname\":\"lb.example.net\"}]}}}")
                    .ok();
            Await.until("the new address in shop/web's status", Duration.ofSeconds(20),
                    () -> "lb.example.net".equals(statusHostname("web")));

            // an Ingress naming a Service that does not exist: reported, and the others stay served
            kubectl.runWithInput(BROKEN, "apply", "-f", "-").ok();
            Await.until("the unknown backend logged", Duration.ofSeconds(20),
                    () -> log.has("WARNING", "ingress shop/broken", "backend service shop/missing not found"));
            String errors = Http.get(server.ports().get("http"), "/api/v1/config-errors").body();
            assertTrue(errors.contains("\"kind\":\"Ingress\"") && errors.contains("\"name\":\"broken\"")
                    && errors.contains("path /: backend service shop/missing not found"), errors);
            assertFalse(errors.contains("\"name\":\"web\""), errors);
            // and in push status, as other config accepted but not applied
            Await.until("the unknown backend in push status", Duration.ofSeconds(20), () -> {
                JsonObject proxyStatus = JsonParser.parseString(Http.get(server.ports().get("http"), "/debug/push_status")
                        .body()).getAsJsonObject().getAsJsonObject("ProxyStatus");
                return proxyStatus != null && proxyStatus.has("pilot_ingress_unapplied")
                        && proxyStatus.getAsJsonObject("pilot_ingress_unapplied").has("shop/broken")
                        && proxyStatus.getAsJsonObject("pilot_ingress_unapplied").toString()
                                .contains("path /: backend service shop/missing not found")
                        && !proxyStatus.getAsJsonObject("pilot_ingress_unapplied").has("shop/web");
            });
            var brokenRoutes = server.server().components().configs().store()
                    .get("VirtualService", "shop", "broken-example-com-broken-istio-autogenerated-k8s-ingress").orElseThrow();
            assertEquals(0, ((VirtualService) brokenRoutes.spec()).getHttpCount(),
                    "no route to a port that cannot be resolved (istiod drops it)");
            Map<String, RouteConfiguration> after = awaitRoutes(gateway, r -> r.containsKey("http.80"));
            assertEquals(virtualHost(http, "shop.example.com:80"), virtualHost(after.get("http.80"), "shop.example.com:80"));

            // an Ingress changed to another class is withdrawn
            kubectl.run("-n", "shop", "patch", "ingress", "web", "--type=merge", "-p",
                    "{\"metadata\":{\"annotations\":{\"kubernetes.io/ingress.class\":\"nginx\"}}}").ok();
            awaitRoutes(gateway, r -> r.containsKey("http.80") && !hosts(r.get("http.80")).contains("api.example.com:80"));
            // and the address written into its status is cleared, as istiod's status collection
            // writes an empty status for an Ingress it stops supporting (pilot/pkg/status/collections.go)
            Await.until("shop/web's load balancer status cleared", Duration.ofSeconds(20),
                    () -> statusHostname("web") == null && statusIp("web") == null);
            assertEquals(null, statusIp("legacy"), "an Ingress never ours is still left alone");
        }
    }

    /**
     * A mesh config change converts again: the istio ConfigMap naming another ingressSelector
     * moves the Ingresses' Gateways to those workloads, and this gateway loses its listeners.
     * (Mode OFF at run time would not do: istiod reads the mode at start, and an Ingress whose
     * IngressClass names istio's controller is served whatever the mode.)
     */
    @Test
    void aMeshConfigChangeMovesTheIngressesToOtherGatewayWorkloads() throws Exception {
        api.writeKubeconfig(dir);
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags(), Map.of()));
             AdsClient gateway = new AdsClient(server.ports().get("grpc"), GATEWAY_ID, GATEWAY_METADATA)) {
            awaitRoutes(gateway, r -> r.containsKey("http.80") && hosts(r.get("http.80")).contains("api.example.com:80"));
            kubectl.run("-n", "istio-system", "create", "configmap", "istio", "--from-literal=mesh=ingressSelector: edge").ok();
            var store = server.server().components().configs().store();
            Await.until("the converted Gateway selecting istio=edge", Duration.ofSeconds(20),
                    () -> store.list("Gateway", "istio-system").stream().allMatch(
                            g -> ((Gateway) g.spec()).getSelectorMap().equals(Map.of("istio", "edge"))));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            DiscoveryResponse lds;
            do {
                lds = gateway.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
                gateway.ack(lds, List.of());
            } while (lds.getResourcesCount() > 0 && System.nanoTime() < deadline);
            assertEquals(0, lds.getResourcesCount(), "the ingressgateway's listeners withdrawn: " + lds);
        }
    }

    /**
     * Without an ingressService, istiod's status is the external IP of the node running the
     * first running gateway pod in the ingress namespace.
     */
    @Test
    void withoutAnIngressServiceTheStatusIsTheGatewayPodsNodeAddress() throws Exception {
        api.writeKubeconfig(dir);
        Files.writeString(dir.resolve("mesh"), "ingressService: \"\"\n");
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Node
                metadata: {name: node-1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: istio-ingressgateway-1, namespace: istio-system, labels: {istio: ingressgateway}}
                spec:
                  nodeName: node-1
                  containers: [{name: istio-proxy, image: proxyv2}]
                """, "apply", "-f", "-").ok();
        kubectl.run("patch", "node", "node-1", "--subresource=status", "--type=merge", "-p",
                "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.4\"},"
                        + "{\"type\":\"ExternalIP\",\"address\":\"198.51.100.4\"}]}}").ok();
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags(), Map.of()))) {
            kubectl.run("-n", "istio-system", "patch", "pod", "istio-ingressgateway-1", "--subresource=status",
                    "--type=merge", "-p", "{\"status\":{\"phase\":\"Running\"}}").ok();
            Await.until("the node's external IP in shop/web's status", Duration.ofSeconds(20),
                    () -> "198.51.100.4".equals(statusIp("web")));
        }
    }

    @Test
    void modeOffServesNoIngress() throws Exception {
        api.writeKubeconfig(dir);
        Files.writeString(dir.resolve("mesh"), "ingressControllerMode: \"OFF\"\n");
        try (MeshPilotServer server = MeshPilotServer.start(TestServers.args(flags(), Map.of()));
             AdsClient gateway = new AdsClient(server.ports().get("grpc"), GATEWAY_ID, GATEWAY_METADATA)) {
            assertTrue(server.server().components().readiness().ready());
            gateway.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse lds = gateway.await(TypeUrls.LISTENER, Duration.ofSeconds(20));
            assertEquals(0, lds.getResourcesCount(), "no Gateway, no listener: " + lds);
            assertTrue(server.server().components().configs().store().list("Gateway", null).isEmpty());
            assertTrue(server.server().components().configs().store().list("VirtualService", null).isEmpty());
            assertEquals(null, statusIp("web"));
        }
    }

    private String statusIp(String name) {
        return statusField(name, "ip");
    }

    private String statusHostname(String name) {
        return statusField(name, "hostname");
    }

    private String statusField(String name, String field) {
        JsonObject ingress = api.get("networking.k8s.io/v1", "Ingress", "shop", name).orElseThrow();
        JsonObject status = ingress.getAsJsonObject("status");
        if (status == null || !status.has("loadBalancer") || !status.getAsJsonObject("loadBalancer").has("ingress")) {
            return null;
        }
        JsonArray lb = status.getAsJsonObject("loadBalancer").getAsJsonArray("ingress");
        return lb.isEmpty() || !lb.get(0).getAsJsonObject().has(field) ? null
                : lb.get(0).getAsJsonObject().get(field).getAsString();
    }

    private static String describe(Route r) {
        var m = r.getMatch();
        String match = switch (m.getPathSpecifierCase()) {
            case PATH_SEPARATED_PREFIX -> "sep-prefix " + m.getPathSeparatedPrefix();
            case PATH -> "path " + m.getPath();
            case PREFIX -> "prefix " + m.getPrefix();
            default -> m.getPathSpecifierCase().toString();
        };
        return match + " -> " + r.getRoute().getCluster();
    }

    private static TreeSet<String> hosts(RouteConfiguration rc) {
        TreeSet<String> out = new TreeSet<>();
        rc.getVirtualHostsList().forEach(v -> out.add(v.getName()));
        return out;
    }

    private static VirtualHost virtualHost(RouteConfiguration rc, String name) {
        return rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no virtual host " + name + " in " + rc));
    }

    /** The listeners of the last LDS response {@link #awaitRoutes} saw. */
    private List<Listener> lastListeners = List.of();

    /**
     * Follows LDS and the route names its HTTP connection managers name until the route
     * configurations satisfy {@code done}; ACKs everything on the way.
     */
    private Map<String, RouteConfiguration> awaitRoutes(AdsClient gateway,
                                                        Predicate<Map<String, RouteConfiguration>> done)
            throws Exception {
        Map<String, RouteConfiguration> routes = new TreeMap<>();
        List<String> routeNames = new ArrayList<>();
        if (gateway.received().isEmpty()) {
            gateway.subscribe(TypeUrls.LISTENER, List.of());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            DiscoveryResponse r = gateway.next(Duration.ofSeconds(30));
            if (r == null) {
                break;
            }
            if (r.getTypeUrl().equals(TypeUrls.LISTENER)) {
                List<Listener> listeners = new ArrayList<>();
                List<String> names = new ArrayList<>();
                for (var any : r.getResourcesList()) {
                    Listener l = any.unpack(Listener.class);
                    listeners.add(l);
                    names.addAll(routeNames(l));
                }
                lastListeners = listeners;
                gateway.ack(r, List.of());
                if (!names.equals(routeNames)) {
                    routeNames.clear();
                    routeNames.addAll(names);
                    gateway.subscribe(TypeUrls.ROUTE, names);
                }
            } else if (r.getTypeUrl().equals(TypeUrls.ROUTE)) {
                routes.clear();
                for (var any : r.getResourcesList()) {
                    RouteConfiguration rc = any.unpack(RouteConfiguration.class);
                    routes.put(rc.getName(), rc);
                }
                gateway.ack(r, routeNames);
                if (done.test(routes)) {
                    return routes;
                }
            }
        }
        throw new AssertionError("routes never as expected; last: " + routes.keySet() + " " + routes);
    }

    private static List<String> routeNames(Listener l) throws InvalidProtocolBufferException {
        List<String> out = new ArrayList<>();
        for (FilterChain fc : l.getFilterChainsList()) {
            for (Filter f : fc.getFiltersList()) {
                if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                    Optional.of(f.getTypedConfig().unpack(HttpConnectionManager.class))
                            .filter(HttpConnectionManager::hasRds)
                            .ifPresent(h -> out.add(h.getRds().getRouteConfigName()));
                }
            }
        }
        return out;
    }
}
