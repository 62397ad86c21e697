package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.Objects;

/**
 * The RFC 6902 JSON Patch that turns the pod the API server sent into the injected pod.
 * Changed members of {@code metadata} and {@code spec} are written whole with {@code add}
 * (which replaces an existing member), removed ones with {@code remove}: coarser than
 * istiod's element-wise diff, the same result once applied.
 */
final class PodPatch {
    private PodPatch() {
    }

    static JsonArray diff(JsonObject original, JsonObject injected) {
        JsonArray ops = new JsonArray();
        for (String section : new String[] {"metadata", "spec"}) {
            JsonElement before = original.get(section);
            JsonElement after = injected.get(section);
            if (Objects.equals(before, after)) {
                continue;
            }
            if (before == null || !before.isJsonObject() || after == null || !after.isJsonObject()) {
                ops.add(op(after == null ? "remove" : "add", "/" + section, after));
                continue;
            }
            JsonObject b = before.getAsJsonObject();
            JsonObject a = after.getAsJsonObject();
            for (String k : b.keySet()) {
                if (!a.has(k)) {
                    ops.add(op("remove", "/" + section + "/" + escape(k), null));
                }
            }
            for (var e : a.entrySet()) {
                if (!Objects.equals(b.get(e.getKey()), e.getValue())) {
                    ops.add(op("add", "/" + section + "/" + escape(e.getKey()), e.getValue()));
                }
            }
        }
        return ops;
    }

    private static JsonObject op(String name, String path, JsonElement value) {
        JsonObject o = new JsonObject();
        o.addProperty("op", name);
        o.addProperty("path", path);
        if (value != null) {
            o.add("value", value);
        }
        return o;
    }

    /** RFC 6901: "~" and "/" in a member name. */
    static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }
}
