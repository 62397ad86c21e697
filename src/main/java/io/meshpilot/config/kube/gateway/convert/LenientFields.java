package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.List;
import java.util.Optional;

/**
 * Field access on Gateway API JSON that treats a field of the wrong JSON type as absent, as
 * {@link io.meshpilot.config.kube.gateway.GatewayApiObject} reads objects: one odd field must not
 * make a route unreadable.
 */
final class LenientFields {
    private LenientFields() {
    }

    /** The string value, or empty when absent or not a scalar. */
    static String string(JsonObject parent, String field) {
        return optionalString(parent, field).orElse("");
    }

    /** The string value when present (Go's pointer fields: absent differs from empty). */
    static Optional<String> optionalString(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        return e != null && e.isJsonPrimitive() ? Optional.of(e.getAsString()) : Optional.empty();
    }

    /** The integer value when present and numeric. */
    static Optional<Integer> integer(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            return Optional.empty();
        }
        return Optional.of(e.getAsInt());
    }

    static Optional<Boolean> bool(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isBoolean()
                ? Optional.of(e.getAsBoolean()) : Optional.empty();
    }

    /** The object value when present. */
    static Optional<JsonObject> object(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        return e != null && e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
    }

    /** The objects of an array field; other elements are skipped. */
    static List<JsonObject> objects(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        if (e == null || !e.isJsonArray()) {
            return List.of();
        }
        return e.getAsJsonArray().asList().stream().filter(JsonElement::isJsonObject)
                .map(JsonElement::getAsJsonObject).toList();
    }

    /** The scalars of an array field as strings; other elements are skipped. */
    static List<String> strings(JsonObject parent, String field) {
        JsonElement e = parent == null ? null : parent.get(field);
        if (e == null || !e.isJsonArray()) {
            return List.of();
        }
        return e.getAsJsonArray().asList().stream().filter(JsonElement::isJsonPrimitive)
                .map(JsonElement::getAsString).toList();
    }
}
