package io.meshpilot.inject.kubegateway;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * istiod's applyOverlay (deploymentcontroller.go): the data of the class-defaults ConfigMap,
 * then of the Gateway's parametersRef ConfigMap, laid over the rendered objects. Each key names
 * the object it patches ({@code deployment}, {@code service}, {@code serviceAccount},
 * {@code horizontalPodAutoscaler}, {@code podDisruptionBudget}); its YAML is a strategic merge
 * patch. The autoscaler and the disruption budget exist only when an overlay configures them.
 * An overlay may not change the object's identity (name, namespace, owners, ...).
 *
 * <p>The strategic merge covers what gateway overlays patch: maps merged, {@code null} deleting,
 * the lists Kubernetes merges by key merged by that key (containers, init containers, volumes,
 * env and image pull secrets by name, volume mounts by mount path, container ports by container
 * port, Service ports by port), every other list replaced. {@code $patch} directives are refused.
 */
public final class Overlays {
    private static final Map<String, String> KEYS = Map.of("Deployment", "deployment", "Service", "service",
            "ServiceAccount", "serviceAccount", "HorizontalPodAutoscaler", "horizontalPodAutoscaler",
            "PodDisruptionBudget", "podDisruptionBudget");
    private static final Set<String> SUPPORTED = new TreeSet<>(KEYS.values());
    private static final Set<String> REQUIRED = Set.of("horizontalPodAutoscaler", "podDisruptionBudget");
    /** Lists Kubernetes merges by an item's key ({@code patchMergeKey}), by field name. */
    private static final Map<String, String> MERGE_KEYS = Map.of("containers", "name", "initContainers", "name",
            "volumes", "name", "env", "name", "imagePullSecrets", "name", "volumeMounts", "mountPath");
    /** Metadata an overlay must leave as rendered (istiod's "illegal metadata change"). */
    private static final List<String> IDENTITY = List.of("name", "generateName", "namespace", "uid", "resourceVersion",
            "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences",
            "finalizers", "managedFields");

    private Overlays() {
    }

    /**
     * The rendered objects with the overlays applied, in order, without the autoscaler and the
     * disruption budget unless an overlay configures them.
     *
     * @param overlays ConfigMap data, the class defaults first
     * @throws IllegalArgumentException an unsupported key, a patch that is not YAML, or an identity change (the message says which)
     */
    public static List<JsonObject> apply(List<JsonObject> rendered, List<Map<String, String>> overlays) {
        for (Map<String, String> data : overlays) {
            for (String key : data.keySet()) {
                if (!SUPPORTED.contains(key)) {
                    throw new IllegalArgumentException("unsupported overlay \"" + key + "\" (supported: " + SUPPORTED + ")");
                }
            }
        }
        List<JsonObject> out = new ArrayList<>();
        for (JsonObject object : rendered) {
            String key = KEYS.get(DeploymentInput.string(object, "kind"));
            JsonObject patched = object.deepCopy();
            boolean applied = false;
            for (Map<String, String> data : overlays) {
                String patch = data.get(key);
                if (patch != null) {
                    merge(patched, parse(key, patch));
                    applied = true;
                }
            }
            if (!applied && REQUIRED.contains(key)) {
                continue;
            }
            checkIdentity(key, DeploymentInput.object(object, "metadata"), DeploymentInput.object(patched, "metadata"));
            out.add(patched);
        }
        return out;
    }

    private static JsonObject parse(String key, String yaml) {
        Object loaded;
        try {
            loaded = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("overlay " + key + ": not YAML: " + e.getMessage(), e);
        }
        if (loaded == null) {
            return new JsonObject();
        }
        // nulls kept: a null in a patch deletes the field
        JsonElement json = new GsonBuilder().serializeNulls().create().toJsonTree(loaded);
        if (!json.isJsonObject()) {
            throw new IllegalArgumentException("overlay " + key + ": expected a mapping, got " + json);
        }
        return json.getAsJsonObject();
    }

    private static void checkIdentity(String key, JsonObject before, JsonObject after) {
        for (String field : IDENTITY) {
            if (!Objects.equals(before.get(field), after.get(field))) {
                throw new IllegalArgumentException("overlay " + key + ": illegal metadata change (" + field + ")");
            }
        }
    }

    /** Strategic merge of {@code patch} into {@code base} (changed in place). */
    static void merge(JsonObject base, JsonObject patch) {
        for (var e : patch.entrySet()) {
            String field = e.getKey();
            JsonElement p = e.getValue();
            if (field.startsWith("$")) {
                throw new IllegalArgumentException("patch directive " + field + " is not supported in gateway overlays");
            }
            JsonElement b = base.get(field);
            if (p.isJsonNull()) {
                base.remove(field);
            } else if (b != null && b.isJsonObject() && p.isJsonObject()) {
                merge(b.getAsJsonObject(), p.getAsJsonObject());
            } else if (b != null && b.isJsonArray() && p.isJsonArray() && mergeKey(field, b.getAsJsonArray()) != null) {
                mergeList(b.getAsJsonArray(), p.getAsJsonArray(), mergeKey(field, b.getAsJsonArray()));
            } else {
                base.add(field, p.deepCopy());
            }
        }
    }

    private static String mergeKey(String field, JsonArray existing) {
        if (field.equals("ports")) { // a container's ports merge by containerPort, a Service's by port
            return !existing.isEmpty() && existing.get(0).isJsonObject()
                    && existing.get(0).getAsJsonObject().has("containerPort") ? "containerPort" : "port";
        }
        return MERGE_KEYS.get(field);
    }

    private static void mergeList(JsonArray base, JsonArray patch, String key) {
        for (JsonElement item : patch) {
            if (!item.isJsonObject()) {
                throw new IllegalArgumentException("list items merged by " + key + " must be objects, got " + item);
            }
            JsonElement k = item.getAsJsonObject().get(key);
            JsonObject match = null;
            for (JsonElement existing : base) {
                if (existing.isJsonObject() && k != null && equalKeys(existing.getAsJsonObject().get(key), k)) {
                    match = existing.getAsJsonObject();
                }
            }
            if (match != null) {
                merge(match, item.getAsJsonObject());
            } else {
                base.add(item.deepCopy());
            }
        }
    }

    /** Keys compared as text: YAML's 8080 and JSON's 8080.0 are one port. */
    private static boolean equalKeys(JsonElement a, JsonElement b) {
        if (a == null || !a.isJsonPrimitive() || !b.isJsonPrimitive()) {
            return false;
        }
        if (a.getAsJsonPrimitive().isNumber() && b.getAsJsonPrimitive().isNumber()) {
            return a.getAsBigDecimal().compareTo(b.getAsBigDecimal()) == 0;
        }
        return a.getAsString().equals(b.getAsString());
    }
}
