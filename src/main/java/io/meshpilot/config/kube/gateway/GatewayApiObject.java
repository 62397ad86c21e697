package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One Kubernetes Gateway API object as read from the API server (or a test's YAML): its
 * metadata and its spec and status as JSON. The conversion reads the spec leniently, field by
 * field, because the Gateway API grows fields every release and a field this server does not
 * know must not make the whole object unreadable (the API's compatibility rules; client-java has
 * no models for these kinds anyway).
 *
 * @param kind              {@link GatewayApiKinds} kind name, e.g. {@code HTTPRoute}
 * @param apiVersion        as served, e.g. {@code gateway.networking.k8s.io/v1}
 * @param creationTimestamp null when the object has none (tests)
 * @param spec              never null; empty when absent
 * @param status            never null; empty when absent
 */
public record GatewayApiObject(String kind, String apiVersion, String namespace, String name, long generation,
                               String resourceVersion, Instant creationTimestamp, Map<String, String> labels,
                               Map<String, String> annotations, JsonObject spec, JsonObject status) {

    public GatewayApiObject {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        apiVersion = apiVersion == null ? "" : apiVersion;
        namespace = namespace == null ? "" : namespace;
        resourceVersion = resourceVersion == null ? "" : resourceVersion;
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        spec = spec == null ? new JsonObject() : spec.deepCopy();
        status = status == null ? new JsonObject() : status.deepCopy();
    }

    /** {@code kind/namespace/name}, the key status and errors are reported under. */
    public ConfigKey key() {
        return new ConfigKey(kind, namespace, name);
    }

    /** The spec as a copy: records stay immutable, so callers never get the object's own JSON. */
    @Override
    public JsonObject spec() {
        return spec.deepCopy();
    }

    @Override
    public JsonObject status() {
        return status.deepCopy();
    }

    /**
     * Reads a whole Kubernetes object ({@code apiVersion}, {@code kind}, {@code metadata},
     * {@code spec}, {@code status}) as the API server or {@code kubectl get -o json} gives it.
     * Metadata fields of the wrong JSON type are ignored, as a missing field would be.
     */
    public static GatewayApiObject fromJson(JsonObject object) {
        JsonObject meta = object(object, "metadata");
        return new GatewayApiObject(
                string(object, "kind"),
                string(object, "apiVersion"),
                string(meta, "namespace"),
                string(meta, "name"),
                meta.has("generation") && meta.get("generation").isJsonPrimitive()
                        && meta.get("generation").getAsJsonPrimitive().isNumber() ? meta.get("generation").getAsLong() : 0,
                string(meta, "resourceVersion"),
                instant(string(meta, "creationTimestamp")),
                stringMap(object(meta, "labels")),
                stringMap(object(meta, "annotations")),
                object(object, "spec"),
                object(object, "status"));
    }

    /** The object {@code field} of {@code parent}; empty when absent or not an object. */
    static JsonObject object(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    /** The scalar {@code field} of {@code parent} as text; empty when absent or not a scalar. */
    static String string(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    private static Instant instant(String text) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static Map<String, String> stringMap(JsonObject o) {
        Map<String, String> m = new LinkedHashMap<>();
        o.entrySet().forEach(e -> {
            if (e.getValue().isJsonPrimitive()) {
                m.put(e.getKey(), e.getValue().getAsString());
            }
        });
        return m;
    }
}
