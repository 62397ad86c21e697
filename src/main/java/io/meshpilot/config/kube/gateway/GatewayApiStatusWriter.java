package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CustomObjectsApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiKinds.Resource;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeErrors;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * istiod's Gateway API status writer (pilot/pkg/status/collections.go {@code RegisterStatus},
 * manager.go), run by the holder of the {@code istio-gateway-status-leader-<rev>} Lease: every
 * object the last conversion gave a status is written to its status subresource (a replace at the
 * object's resourceVersion) only when what it shows differs, and only when it is this revision's
 * ({@link GatewayApiRevision#isMine}). A status someone else changes is written back; a write
 * that loses a race (409) is tried again against the object as it then is.
 *
 * <p>Route {@code parents} and BackendTLSPolicy {@code ancestors} are shared with other
 * controllers: entries whose {@code controllerName} is another controller's are kept as they
 * are, this controller's are replaced by the conversion's (istiod merges them the same way).
 */
public final class GatewayApiStatusWriter {
    private static final System.Logger LOG = System.getLogger(GatewayApiStatusWriter.class.getName());
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));
    /** Status lists whose entries belong to the controller their {@code controllerName} names. */
    private static final Set<String> SHARED_LISTS = Set.of("parents", "ancestors");

    private final GatewayApiController controller;
    private final CustomObjectsApi api;
    private final ControllerQueue<ConfigKey> queue = new ControllerQueue<>("gateway-api-status", RETRY, this::reconcile);

    public GatewayApiStatusWriter(KubeClient client, GatewayApiController controller) {
        this.controller = controller;
        this.api = new CustomObjectsApi(client.apiClient());
        controller.onConverted(this::queueAll);
        // a status someone else wrote is written back (keys added outside the leader's term are dropped)
        controller.informers().addObjectListener(queue::add);
    }

    /** Starts writing (the leader's term): every status of the last conversion now, then after each conversion. */
    public AutoCloseable lead() {
        return queue.start(controller.store().synced(), this::queueAll);
    }

    private void queueAll() {
        controller.statuses().keySet().forEach(queue::add);
    }

    private Outcome reconcile(ConfigKey key) {
        JsonObject desired = controller.statuses().get(key);
        var live = controller.informers().live(key);
        if (desired == null || live.isEmpty()) {
            return Outcome.DONE;
        }
        GatewayApiObject current = GatewayApiObject.fromJson(live.get().getRaw());
        if (!controller.revision().isMine(current.labels(), controller.informers().namespaceLabels(current.namespace()))) {
            return Outcome.DONE;
        }
        JsonObject want = merged(desired, current.status(), controller.controllerName());
        if (want.equals(current.status())) {
            return Outcome.DONE;
        }
        Resource r = GatewayApiKinds.RESOURCES.stream().filter(x -> x.kind().equals(key.kind())).findFirst().orElseThrow();
        // a new object around the cached one: the informer's copy is never changed
        JsonObject body = live.get().getRaw().deepCopy();
        body.add("status", want);
        try {
            if (key.namespace().isEmpty()) {
                api.replaceClusterCustomObjectStatus(r.group(), r.version(), r.plural(), key.name(), body).execute();
            } else {
                api.replaceNamespacedCustomObjectStatus(r.group(), r.version(), key.namespace(), r.plural(), key.name(),
                        body).execute();
            }
            LOG.log(Level.DEBUG, () -> "gateway api " + key + " status written");
            return Outcome.DONE;
        } catch (ApiException e) {
            if (Thread.currentThread().isInterrupted() || e.getCode() == 404) {
                return Outcome.DONE; // the term ended, or the object was deleted meanwhile
            }
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "gateway api " + key
                    + " status not written (retrying): HTTP " + e.getCode() + " " + KubeErrors.oneLine(e));
            return Outcome.RETRY;
        }
    }

    /**
     * {@code desired} with, in each shared list, the entries of other controllers that
     * {@code live} shows kept before this controller's.
     */
    static JsonObject merged(JsonObject desired, JsonObject live, String controllerName) {
        JsonObject out = desired.deepCopy();
        for (String list : SHARED_LISTS) {
            JsonElement liveList = live.get(list);
            if (liveList == null || !liveList.isJsonArray()) {
                continue;
            }
            JsonArray merged = new JsonArray();
            for (JsonElement entry : liveList.getAsJsonArray()) {
                if (entry.isJsonObject() && !controllerName.equals(controllerOf(entry.getAsJsonObject()))) {
                    merged.add(entry);
                }
            }
            JsonElement ours = desired.get(list);
            if (ours != null && ours.isJsonArray()) {
                merged.addAll(ours.getAsJsonArray());
            }
            if (!merged.isEmpty() || out.has(list)) {
                out.add(list, merged);
            }
        }
        return out;
    }

    private static String controllerOf(JsonObject entry) {
        JsonElement c = entry.get("controllerName");
        return c != null && c.isJsonPrimitive() ? c.getAsString() : "";
    }

    /** Completes once every key queued so far has been written or found up to date. */
    CompletableFuture<Void> barrier() {
        return queue.barrier();
    }
}
