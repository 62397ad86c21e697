package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reading and editing a pod held as JSON (the AdmissionReview's object). */
final class Pods {
    private Pods() {
    }

    static JsonObject object(JsonObject root, String... path) {
        JsonObject o = root;
        for (String p : path) {
            JsonElement e = o.get(p);
            if (e == null || !e.isJsonObject()) {
                JsonObject created = new JsonObject();
                o.add(p, created);
                e = created;
            }
            o = e.getAsJsonObject();
        }
        return o;
    }

    static Map<String, String> stringMap(JsonObject root, String... path) {
        Map<String, String> m = new LinkedHashMap<>();
        JsonElement e = root;
        for (String p : path) {
            if (e == null || !e.isJsonObject()) {
                return m;
            }
            e = e.getAsJsonObject().get(p);
        }
        if (e != null && e.isJsonObject()) {
            e.getAsJsonObject().entrySet().forEach(x -> m.put(x.getKey(), x.getValue().isJsonNull() ? ""
                    : x.getValue().getAsString()));
        }
        return m;
    }

    static String string(JsonObject root, String... path) {
        JsonElement e = root;
        for (String p : path) {
            if (e == null || !e.isJsonObject()) {
                return "";
            }
            e = e.getAsJsonObject().get(p);
        }
        return e == null || e.isJsonNull() || !e.isJsonPrimitive() ? "" : e.getAsString();
    }

    /** {@code spec.<field>} as an array (empty, not attached, when absent). */
    static JsonArray array(JsonObject pod, String field) {
        JsonElement spec = pod.get("spec");
        if (spec != null && spec.isJsonObject()) {
            JsonElement a = spec.getAsJsonObject().get(field);
            if (a != null && a.isJsonArray()) {
                return a.getAsJsonArray();
            }
        }
        return new JsonArray();
    }

    static JsonObject named(JsonArray list, String name) {
        for (JsonElement e : list) {
            if (e.isJsonObject() && name.equals(string(e.getAsJsonObject(), "name"))) {
                return e.getAsJsonObject();
            }
        }
        return null;
    }

    static void removeNamed(JsonArray list, String name) {
        for (int i = list.size() - 1; i >= 0; i--) {
            if (name.equals(string(list.get(i).getAsJsonObject(), "name"))) {
                list.remove(i);
            }
        }
    }
}
