package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Lenient reads of Gateway API specs: a field that is missing or of the wrong JSON type reads as
 * absent, as an unknown field would, so one odd field never makes a whole object unreadable.
 */
public final class JsonFields {
    private JsonFields() {
    }

    /** The object at {@code field}; empty when absent or not an object. */
    public static JsonObject object(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    /** The object at {@code field} when it is one. */
    public static Optional<JsonObject> optionalObject(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
    }

    /** The string at {@code field}; empty when absent or not a primitive. */
    public static String string(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    /** The string at {@code field} when present (an explicit empty string is present). */
    public static Optional<String> optionalString(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? Optional.of(e.getAsString()) : Optional.empty();
    }

    /** The integer at {@code field}; {@code otherwise} when absent or not a number. */
    public static int integer(JsonObject parent, String field, int otherwise) {
        JsonElement e = parent.get(field);
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            return otherwise;
        }
        return e.getAsInt();
    }

    /** The integer at {@code field} when present and a number (Go's pointer fields: unset differs from 0). */
    public static Optional<Integer> optionalInteger(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            return Optional.empty();
        }
        return Optional.of(e.getAsInt());
    }

    /** The objects of the array at {@code field}, skipping entries that are not objects. */
    public static List<JsonObject> objects(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        if (e == null || !e.isJsonArray()) {
            return List.of();
        }
        return e.getAsJsonArray().asList().stream().filter(JsonElement::isJsonObject)
                .map(JsonElement::getAsJsonObject).toList();
    }

    /** The strings of the array at {@code field}, skipping entries that are not primitives. */
    public static List<String> strings(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        if (e == null || !e.isJsonArray()) {
            return List.of();
        }
        return e.getAsJsonArray().asList().stream().filter(JsonElement::isJsonPrimitive)
                .map(JsonElement::getAsString).toList();
    }

    /** The string-valued entries of the object at {@code field}, in their order. */
    public static Map<String, String> stringMap(JsonObject parent, String field) {
        Map<String, String> m = new LinkedHashMap<>();
        object(parent, field).entrySet().forEach(e -> {
            if (e.getValue().isJsonPrimitive()) {
                m.put(e.getKey(), e.getValue().getAsString());
            }
        });
        return m;
    }
}
