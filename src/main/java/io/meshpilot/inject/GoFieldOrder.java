package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * A container as Go's encoding/json writes a corev1.Container: struct fields in declaration
 * order, at every level MeshPilot meets in a user's container (probes, security context,
 * resources, mounts, ports, env). istiod stores the user's containers as text in
 * {@code proxy.istio.io/overrides}; the same order makes the same text.
 */
final class GoFieldOrder {
    private static final List<String> CONTAINER = List.of("name", "image", "command", "args", "workingDir", "ports",
            "envFrom", "env", "resources", "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts",
            "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
            "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty");
    private static final List<String> PROBE = List.of("exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds",
            "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold", "terminationGracePeriodSeconds");
    /** Fields whose value is one struct, and that struct's field order. */
    private static final Map<String, List<String>> OBJECTS = Map.of(
            "livenessProbe", PROBE, "readinessProbe", PROBE, "startupProbe", PROBE,
            "httpGet", List.of("path", "port", "host", "scheme", "httpHeaders"),
            "resources", List.of("limits", "requests", "claims"),
            "securityContext", List.of("capabilities", "privileged", "seLinuxOptions", "windowsOptions", "runAsUser",
                    "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount",
                    "seccompProfile", "appArmorProfile"),
            "capabilities", List.of("add", "drop"));
    /** Fields whose value is a list of structs, and the items' field order. */
    private static final Map<String, List<String>> LISTS = Map.of(
            "volumeMounts", List.of("name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation",
                    "subPathExpr"),
            "ports", List.of("name", "hostPort", "containerPort", "protocol", "hostIP"),
            "env", List.of("name", "value", "valueFrom"));

    private GoFieldOrder() {
    }

    static JsonObject container(JsonObject c) {
        return ordered(c, CONTAINER);
    }

    /** The object's fields in the given order, fields Go's struct would not know after them as they came. */
    private static JsonObject ordered(JsonObject o, List<String> order) {
        JsonObject out = new JsonObject();
        order.stream().filter(o::has).forEach(f -> out.add(f, nested(f, o.get(f))));
        o.entrySet().stream().filter(e -> !out.has(e.getKey())).forEach(e -> out.add(e.getKey(), e.getValue()));
        return out;
    }

    private static JsonElement nested(String field, JsonElement value) {
        if (value.isJsonObject() && OBJECTS.containsKey(field)) {
            return ordered(value.getAsJsonObject(), OBJECTS.get(field));
        }
        if (value.isJsonArray() && LISTS.containsKey(field)) {
            JsonArray out = new JsonArray();
            for (JsonElement item : value.getAsJsonArray()) {
                out.add(item.isJsonObject() ? ordered(item.getAsJsonObject(), LISTS.get(field)) : item);
            }
            return out;
        }
        return value;
    }
}
