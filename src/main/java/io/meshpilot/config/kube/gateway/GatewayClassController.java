package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeErrors;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * istiod's GatewayClass controller (pilot/pkg/config/kube/gatewaycommon/gatewayclass.go): the
 * built-in GatewayClasses are created when the GatewayClass CRD is installed and they are missing,
 * on every replica (not leader-elected: a create that loses the race is a Conflict, logged at
 * info); an existing class is left as it is, whatever its spec. The classes: the default one
 * (PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME, for PILOT_GATEWAY_API_CONTROLLER_NAME) and, with
 * PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API, {@code istio-remote}; with PILOT_ENABLE_AMBIENT and
 * PILOT_ENABLE_AMBIENT_WAYPOINTS, {@code istio-waypoint} (for {@code istio.io/mesh-controller}).
 * istiod's ambient east-west class ({@code istio-east-west}) needs AMBIENT_ENABLE_MULTI_NETWORK,
 * which MeshPilot does not serve, and is not created.
 */
public final class GatewayClassController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GatewayClassController.class.getName());
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));
    static final String REMOTE_CLASS = "istio-remote";
    static final String UNMANAGED_CONTROLLER = "istio.io/unmanaged-gateway";

    /** One class istiod creates. */
    record BuiltinClass(String name, String controllerName, String description) {
    }

    private final GatewayApiController controller;
    private final CustomObjectsApi api;
    private final List<BuiltinClass> classes;
    private final ControllerQueue<String> queue = new ControllerQueue<>("gatewayclass-controller", RETRY, this::reconcile);
    private AutoCloseable term;

    /**
     * @param defaultClass   PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME
     * @param controllerName PILOT_GATEWAY_API_CONTROLLER_NAME
     * @param remoteClass    PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API: {@code istio-remote} too
     * @param waypointClass PILOT_ENABLE_AMBIENT with PILOT_ENABLE_AMBIENT_WAYPOINTS: {@code istio-waypoint} too
     */
    public GatewayClassController(KubeClient client, GatewayApiController controller, String defaultClass,
                                  String controllerName, boolean remoteClass, boolean waypointClass) {
        this.controller = controller;
        this.api = new CustomObjectsApi(client.apiClient());
        List<BuiltinClass> builtin = new ArrayList<>();
        builtin.add(new BuiltinClass(defaultClass, controllerName, "The default Istio GatewayClass"));
        if (remoteClass) {
            builtin.add(new BuiltinClass(REMOTE_CLASS, UNMANAGED_CONTROLLER,
                    "Remote to this cluster. Does not deploy or affect configuration."));
        }
        if (waypointClass) {
            builtin.add(new BuiltinClass(GatewayApiKinds.WAYPOINT_CLASS, GatewayApiKinds.MESH_CONTROLLER,
                    "The default Istio waypoint GatewayClass"));
        }
        this.classes = List.copyOf(builtin);
        // after each conversion (the CRD appearing is one): a class deleted or never made is made
        controller.onConverted(this::queueAll);
        controller.informers().addObjectListener(key -> {
            if (key.kind().equals(GatewayApiKinds.GATEWAY_CLASS)) {
                queue.add(key.name());
            }
        });
    }

    /** Starts creating the classes (every replica, once the controller has synced). */
    public synchronized void start() {
        if (term == null) {
            term = queue.start(controller.store().synced(), this::queueAll);
        }
    }

    private void queueAll() {
        classes.forEach(c -> queue.add(c.name()));
    }

    private Outcome reconcile(String name) {
        BuiltinClass c = classes.stream().filter(b -> b.name().equals(name)).findFirst().orElse(null);
        if (c == null || !controller.informers().watched(GatewayApiKinds.GATEWAY_CLASS)
                || controller.informers().live(new ConfigKey(GatewayApiKinds.GATEWAY_CLASS, "", name)).isPresent()) {
            return Outcome.DONE;
        }
        GatewayApiKinds.Resource r = GatewayApiKinds.RESOURCES.getFirst();
        JsonObject body = new JsonObject();
        body.addProperty("apiVersion", r.group() + "/" + r.version());
        body.addProperty("kind", r.kind());
        JsonObject meta = new JsonObject();
        meta.addProperty("name", c.name());
        body.add("metadata", meta);
        JsonObject spec = new JsonObject();
        spec.addProperty("controllerName", c.controllerName());
        spec.addProperty("description", c.description());
        body.add("spec", spec);
        try {
            api.createClusterCustomObject(r.group(), r.version(), r.plural(), body).execute();
            LOG.log(Level.INFO, "GatewayClass " + c.name() + " created for " + c.controllerName());
            return Outcome.DONE;
        } catch (ApiException e) {
            if (Thread.currentThread().isInterrupted()) {
                return Outcome.DONE;
            }
            if (e.getCode() == 409) {
                // another replica made it: the informer brings it, and the retry then finds it
                LOG.log(Level.INFO, "GatewayClass " + c.name() + " created meanwhile by another replica");
                return Outcome.RETRY;
            }
            LOG.log(Level.WARNING, "GatewayClass " + c.name() + " not created (retrying): HTTP " + e.getCode() + " "
                    + KubeErrors.oneLine(e));
            return Outcome.RETRY;
        }
    }

    /** Completes once every class queued so far has been looked at. */
    CompletableFuture<Void> barrier() {
        return queue.barrier();
    }

    @Override
    public synchronized void close() throws Exception {
        if (term != null) {
            term.close();
        }
    }
}
