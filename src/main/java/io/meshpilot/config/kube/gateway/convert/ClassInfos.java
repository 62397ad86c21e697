package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The GatewayClasses this controller serves (istiod's gatewaycommon classinfo.go and
 * gatewayclass_collection.go): the default class ({@code istio}) of
 * PILOT_GATEWAY_API_CONTROLLER_NAME; with PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API, the
 * {@code istio-remote} class of Gateways in other clusters that get status but no config; with
 * ambient waypoints, the {@code istio-waypoint} class of {@code istio.io/mesh-controller}. The
 * ambient east-west class (AMBIENT_ENABLE_MULTI_NETWORK) is not served.
 * A Gateway naming a built-in class resolves even when the GatewayClass object does not exist.
 */
public final class ClassInfos {
    /** istiod's constants.UnmanagedGatewayController. */
    public static final String UNMANAGED_CONTROLLER = "istio.io/unmanaged-gateway";
    /** istiod's constants.RemoteGatewayClassName. */
    public static final String REMOTE_CLASS = "istio-remote";
    /** The address type a class reports in Gateway status when it has no external address. */
    public static final String HOSTNAME_ADDRESS = "Hostname";

    /**
     * What a controller does with its Gateways.
     *
     * @param disableRouteGeneration status only, no config (remote Gateways)
     * @param disableNameSuffix      generated names are the Gateway's own, without {@code -<class>}
     * @param addressType            {@code Hostname}, {@code IPAddress}, or empty for both
     */
    public record ClassInfo(String controller, String description, boolean disableRouteGeneration,
                            boolean supportsListenerSet, boolean disableNameSuffix, String addressType) {
        /** A waypoint's class: its listeners are HBONE on 15008 and it gets no Istio Gateway (waypoint config is ambient's). */
        public boolean waypoint() {
            return controller.equals(GatewayApiKinds.MESH_CONTROLLER);
        }
    }

    /** A Gateway's class as resolved: its name and what its controller does. */
    public record ResolvedClass(String name, ClassInfo info) {
    }

    private final Map<String, ClassInfo> byController;
    private final Map<String, String> builtinClasses;
    /** Class objects whose controller is one of ours, by name. */
    private final Map<String, String> classControllers;

    private ClassInfos(Map<String, ClassInfo> byController, Map<String, String> builtinClasses,
                       Map<String, String> classControllers) {
        this.byController = byController;
        this.builtinClasses = builtinClasses;
        this.classControllers = classControllers;
    }

    /** The classes of {@code settings} and the GatewayClass objects among {@code classes}. */
    public static ClassInfos of(GatewayApiInputs.Settings settings, List<GatewayApiObject> classes) {
        Map<String, ClassInfo> byController = new HashMap<>();
        Map<String, String> builtin = new HashMap<>();
        byController.put(settings.controllerName(), new ClassInfo(settings.controllerName(),
                "The default Istio GatewayClass", false, true, false, HOSTNAME_ADDRESS));
        builtin.put(settings.defaultGatewayClass(), settings.controllerName());
        if (settings.multiNetworkGatewayApi()) {
            byController.put(UNMANAGED_CONTROLLER, new ClassInfo(UNMANAGED_CONTROLLER,
                    "Remote to this cluster. Does not deploy or affect configuration.", true, false, false,
                    HOSTNAME_ADDRESS));
            builtin.put(REMOTE_CLASS, UNMANAGED_CONTROLLER);
        }
        if (settings.ambientWaypoints()) {
            // both address types: consumers (and istiod versions) differ in which they read
            byController.put(GatewayApiKinds.MESH_CONTROLLER, new ClassInfo(GatewayApiKinds.MESH_CONTROLLER,
                    "The default Istio waypoint GatewayClass", false, false, true, ""));
            builtin.put(GatewayApiKinds.WAYPOINT_CLASS, GatewayApiKinds.MESH_CONTROLLER);
        }
        Map<String, String> controllers = new HashMap<>();
        for (GatewayApiObject c : classes) {
            String controller = JsonFields.string(c.spec(), "controllerName");
            if (c.kind().equals(GatewayApiKinds.GATEWAY_CLASS) && byController.containsKey(controller)) {
                controllers.put(c.name(), controller);
            }
        }
        return new ClassInfos(Map.copyOf(byController), Map.copyOf(builtin), Map.copyOf(controllers));
    }

    /**
     * The class of a Gateway naming {@code className} (istiod's FetchGatewayClass then ClassInfos):
     * the GatewayClass object when it names one of our controllers, else a built-in class of that name;
     * empty when the Gateway is not ours.
     */
    public Optional<ResolvedClass> resolve(String className) {
        String controller = classControllers.getOrDefault(className, builtinClasses.get(className));
        return Optional.ofNullable(controller).map(byController::get).map(info -> new ResolvedClass(className, info));
    }

    /**
     * A GatewayClass's status (istiod's GetClassStatus): Accepted for classes of our controllers,
     * nothing for others (another controller owns them).
     */
    public Optional<JsonObject> status(GatewayApiObject gatewayClass, Instant now) {
        if (!classControllers.containsKey(gatewayClass.name())) {
            return Optional.empty();
        }
        JsonObject status = gatewayClass.status();
        JsonArray existing = status.has("conditions") && status.get("conditions").isJsonArray()
                ? status.getAsJsonArray("conditions") : new JsonArray();
        status.add("conditions", Conditions.set(existing, gatewayClass.generation(),
                Map.of("Accepted", Condition.ok("Accepted", "Handled by Istio controller")), now));
        return Optional.of(status);
    }
}
