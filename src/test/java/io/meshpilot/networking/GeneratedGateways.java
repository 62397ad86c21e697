package io.meshpilot.networking;

import com.google.gson.JsonParser;
import io.meshpilot.config.Config;
import io.meshpilot.config.kube.gateway.ConversionResult;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.TestGatewayServices;
import io.meshpilot.config.kube.gateway.convert.GatewayApiConversion;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.AggregateConfigStore;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * A synthetic Kubernetes Gateway API world for the Gateway API benchmarks and their test:
 * {@code gateways} Gateways of class {@code istio}, Gateway {@code g} named {@code gateway} in
 * namespace {@code team-g} with one HTTP listener on port 80 for {@code *.team-g.example.com}
 * (routes from its own namespace), and {@code routes} HTTPRoutes spread evenly over them, route
 * {@code r} on Gateway {@code r % gateways} for the one host {@link #routeHostname}: a
 * {@code /api} path-prefix rule split {@code 100 - CANARY_WEIGHT}/{@link #CANARY_WEIGHT} over
 * Services {@code route-r-v1} and {@code route-r-v2} (port 8080), and an {@code x-canary: true}
 * header rule to {@code route-r-v2}. Deterministic: the same sizes give the same objects.
 *
 * <p>{@link #inputs} is the conversion's snapshot alone. {@link #of} also serves its converted
 * config as the server does: the converted objects in an unvalidated store of the kinds the
 * Gateway API controller serves, behind an aggregate with a {@link MeshFixture} store whose
 * ServiceEntries stand in for the snapshot's Services (each with one endpoint; a Gateway's
 * managed Service {@code gateway-istio} has the address of that Gateway's one gateway pod,
 * {@link #gatewayProxy}). {@link #changeRoute} serves route 0 converted with another split, as
 * the controller serves a changed route.
 */
public final class GeneratedGateways implements AutoCloseable {
    public static final String DOMAIN_SUFFIX = "cluster.local";
    public static final int GATEWAY_PORT = 80;
    public static final int BACKEND_PORT = 8080;
    /** The percentage of a route's {@code /api} traffic its v2 backend gets. */
    public static final int CANARY_WEIGHT = 10;
    /** The same for route 0 after {@link #changeRoute}. */
    public static final int CHANGED_CANARY_WEIGHT = 20;

    /** A Service of the snapshot with the address of its one endpoint. */
    private record GeneratedService(String hostname, String namespace, int port, String endpoint) {
    }

    private final GatewayApiInputs inputs;
    private final ConversionResult converted;
    private final MeshFixture registry;
    private final MemoryConfigStore convertedStore;
    private final AggregateConfigStore configs;
    /** Route 0's converted VirtualService with its own split and with {@link #CHANGED_CANARY_WEIGHT}. */
    private final Config routeBefore;
    private final Config routeAfter;
    private boolean routeChanged;

    private GeneratedGateways(GatewayApiInputs inputs, ConversionResult converted, MeshFixture registry,
                              MemoryConfigStore convertedStore, Config routeBefore, Config routeAfter) {
        this.inputs = inputs;
        this.converted = converted;
        this.registry = registry;
        this.convertedStore = convertedStore;
        // the server's order: the cluster's own objects first, the converted ones behind them
        this.configs = new AggregateConfigStore(List.of(registry.store, convertedStore), registry.store);
        this.routeBefore = routeBefore;
        this.routeAfter = routeAfter;
    }

    /** Converts the snapshot and serves the result with the snapshot's Services in the registry. */
    public static GeneratedGateways of(int gateways, int routes) throws Exception {
        GatewayApiInputs inputs = inputs(gateways, routes);
        ConversionResult converted = GatewayApiConversion.convert(inputs);
        ConversionResult changed = GatewayApiConversion.convert(withObject(inputs,
                httpRoute(0, gateways, CHANGED_CANARY_WEIGHT)));
        List<Config> before = new ArrayList<>(converted.virtualServices());
        before.removeAll(changed.virtualServices());
        List<Config> after = new ArrayList<>(changed.virtualServices());
        after.removeAll(converted.virtualServices());
        if (before.size() != 1 || after.size() != 1) {
            throw new IllegalStateException("changing route 0 changed " + before.size() + " converted VirtualServices, "
                    + "not one: " + before);
        }
        MeshFixture registry = new MeshFixture();
        MemoryConfigStore convertedStore = new MemoryConfigStore("gateway-api", List.of("Gateway", "VirtualService",
                "DestinationRule").stream().map(k -> Schemas.PILOT.forKind(k).orElseThrow()).toList(), false);
        try {
            registry.apply(serviceEntries(services(gateways, routes)));
            convertedStore.run();
            converted.all().forEach(convertedStore::put);
            return new GeneratedGateways(inputs, converted, registry, convertedStore, before.get(0), after.get(0));
        } catch (Exception | Error e) {
            convertedStore.close();
            registry.close();
            throw e;
        }
    }

    /** The conversion's snapshot: one GatewayClass, the Gateways, the routes and every Service they name. */
    public static GatewayApiInputs inputs(int gateways, int routes) {
        List<GatewayApiObject> objects = new ArrayList<>();
        Map<String, Map<String, String>> namespaceLabels = new TreeMap<>();
        objects.add(object("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "istio"},
                 "spec": {"controllerName": "istio.io/gateway-controller"}}
                """));
        for (int g = 0; g < gateways; g++) {
            String namespace = namespace(g);
            namespaceLabels.put(namespace, Map.of("kubernetes.io/metadata.name", namespace));
            objects.add(object("""
                    {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                     "metadata": {"name": "gateway", "namespace": "%s"},
                     "spec": {"gatewayClassName": "istio", "listeners": [{"name": "http", "port": %d, "protocol": "HTTP",
                              "hostname": "*.%s.example.com", "allowedRoutes": {"namespaces": {"from": "Same"}}}]}}
                    """.formatted(namespace, GATEWAY_PORT, namespace)));
        }
        for (int r = 0; r < routes; r++) {
            objects.add(httpRoute(r, gateways, CANARY_WEIGHT));
        }
        TestGatewayServices.Builder services = TestGatewayServices.builder();
        services(gateways, routes).forEach(s -> services.service(s.hostname(), s.namespace(), s.port()));
        return new GatewayApiInputs(objects, namespaceLabels, services.build(), Map.of(), Map.of(),
                GatewayApiInputs.Settings.defaults(DOMAIN_SUFFIX, "Kubernetes"));
    }

    public static String namespace(int gateway) {
        return "team-" + gateway;
    }

    /** The one hostname of route {@code route}: under its Gateway's listener hostname. */
    public static String routeHostname(int route, int gateways) {
        return "route-" + route + "." + namespace(route % gateways) + ".example.com";
    }

    /**
     * The gateway pod of Gateway {@code gateway}, as Proxy.fromNode makes it from the node its
     * istio-agent sends: a router in the Gateway's namespace, the one endpoint of its Service.
     */
    public static Proxy gatewayProxy(int gateway) {
        String ip = gatewayPodIp(gateway);
        String namespace = namespace(gateway);
        String pod = "gateway-istio-0." + namespace;
        return new Proxy("router~" + ip + "~" + pod + "~" + namespace + ".svc." + DOMAIN_SUFFIX, Proxy.Type.ROUTER,
                List.of(ip), pod, namespace + ".svc." + DOMAIN_SUFFIX, namespace,
                Map.of("gateway.networking.k8s.io/gateway-name", "gateway"), "Kubernetes", "1.24.0", "",
                "gateway-istio", "", Locality.NONE);
    }

    public int gateways() {
        return converted.gateways().size();
    }

    public List<Proxy> gatewayProxies() {
        return IntStream.range(0, gateways()).mapToObj(GeneratedGateways::gatewayProxy).toList();
    }

    public GatewayApiInputs inputs() {
        return inputs;
    }

    public ConversionResult converted() {
        return converted;
    }

    /** A push of version {@code version} over the served config, with the server's default Gateway API settings. */
    public PushContext push(long version) {
        return registry.push(configs, version, PushContext.GatewayApiSettings.DEFAULTS);
    }

    /**
     * Serves route 0's converted VirtualService with the other split ({@link #CHANGED_CANARY_WEIGHT}
     * after an even number of calls, the original after an odd one): one real change per call, as
     * the Gateway API controller puts a changed route's conversion into its store.
     */
    public Config changeRoute() {
        routeChanged = !routeChanged;
        return convertedStore.put(routeChanged ? routeAfter : routeBefore);
    }

    private static GatewayApiObject httpRoute(int route, int gateways, int canaryWeight) {
        String name = "route-" + route;
        return object("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                 "metadata": {"name": "%1$s", "namespace": "%2$s"},
                 "spec": {"parentRefs": [{"name": "gateway"}], "hostnames": ["%3$s"],
                          "rules": [
                            {"matches": [{"path": {"type": "PathPrefix", "value": "/api"}}],
                             "backendRefs": [{"name": "%1$s-v1", "port": %4$d, "weight": %5$d},
                                             {"name": "%1$s-v2", "port": %4$d, "weight": %6$d}]},
                            {"matches": [{"headers": [{"name": "x-canary", "value": "true"}]}],
                             "backendRefs": [{"name": "%1$s-v2", "port": %4$d}]}]}}
                """.formatted(name, namespace(route % gateways), routeHostname(route, gateways), BACKEND_PORT,
                100 - canaryWeight, canaryWeight));
    }

    /** {@code inputs} with {@code replacement} instead of the object of its kind, namespace and name. */
    private static GatewayApiInputs withObject(GatewayApiInputs inputs, GatewayApiObject replacement) {
        List<GatewayApiObject> objects = inputs.objects().stream()
                .map(o -> o.key().equals(replacement.key()) ? replacement : o).toList();
        return new GatewayApiInputs(objects, inputs.namespaceLabels(), inputs.services(), inputs.secrets(),
                inputs.configMaps(), inputs.settings());
    }

    /** Every Gateway's managed Service (its gateway pod as endpoint) and both backends of every route. */
    private static List<GeneratedService> services(int gateways, int routes) {
        List<GeneratedService> out = new ArrayList<>();
        for (int g = 0; g < gateways; g++) {
            out.add(new GeneratedService("gateway-istio." + namespace(g) + ".svc." + DOMAIN_SUFFIX, namespace(g),
                    GATEWAY_PORT, gatewayPodIp(g)));
        }
        for (int r = 0; r < routes; r++) {
            String namespace = namespace(r % gateways);
            for (int version = 1; version <= 2; version++) {
                out.add(new GeneratedService("route-" + r + "-v" + version + "." + namespace + ".svc." + DOMAIN_SUFFIX,
                        namespace, BACKEND_PORT, "10." + version + "." + r / 250 + "." + (r % 250 + 1)));
            }
        }
        return out;
    }

    private static String gatewayPodIp(int gateway) {
        return "10.200." + gateway / 250 + "." + (gateway % 250 + 1);
    }

    /** The Services as Kubernetes-like ServiceEntries: MESH_INTERNAL, one HTTP port, one endpoint. */
    private static String serviceEntries(List<GeneratedService> services) {
        StringBuilder y = new StringBuilder(services.size() * 300);
        for (GeneratedService s : services) {
            y.append("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\n")
                    .append("metadata: {name: ").append(s.hostname(), 0, s.hostname().indexOf('.'))
                    .append(", namespace: ").append(s.namespace()).append("}\n")
                    .append("spec:\n  hosts: [").append(s.hostname()).append("]\n")
                    .append("  location: MESH_INTERNAL\n  resolution: STATIC\n")
                    .append("  ports: [{number: ").append(s.port()).append(", name: http, protocol: HTTP}]\n")
                    .append("  endpoints: [{address: ").append(s.endpoint()).append("}]\n---\n");
        }
        return y.toString();
    }

    private static GatewayApiObject object(String json) {
        return GatewayApiObject.fromJson(JsonParser.parseString(json).getAsJsonObject());
    }

    @Override
    public void close() {
        convertedStore.close();
        registry.close();
    }
}
