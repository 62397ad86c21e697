package io.meshpilot.testing.kube;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/** JSON (Gson trees) and YAML-to-JSON helpers of the stand-in API server. */
final class Json {
    static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private Json() {
    }

    static JsonElement parse(String text) {
        return JsonParser.parseString(text);
    }

    /** Every non-empty document of a YAML (or JSON) stream, as JSON objects. */
    static List<JsonObject> yamlDocuments(String yaml) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        List<JsonObject> out = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(options)).loadAll(yaml)) {
            if (doc instanceof Map<?, ?> map) {
                out.add(GSON.toJsonTree(map).getAsJsonObject());
            } else if (doc != null) {
                throw new IllegalArgumentException("a YAML document is not an object: " + doc);
            }
        }
        return out;
    }

    /** The string at a path of object fields, or null when any step is missing or not a string. */
    static String string(JsonObject o, String... path) {
        JsonElement e = o;
        for (String p : path) {
            if (e == null || !e.isJsonObject()) {
                return null;
            }
            e = e.getAsJsonObject().get(p);
        }
        return e != null && e.isJsonPrimitive() ? e.getAsString() : null;
    }

    /** The object at a field, created when missing. */
    static JsonObject object(JsonObject o, String field) {
        JsonElement e = o.get(field);
        if (e == null || !e.isJsonObject()) {
            JsonObject created = new JsonObject();
            o.add(field, created);
            return created;
        }
        return e.getAsJsonObject();
    }

    static JsonObject metadata(JsonObject o) {
        return object(o, "metadata");
    }

    static List<String> strings(JsonElement e) {
        List<String> out = new ArrayList<>();
        if (e != null && e.isJsonArray()) {
            e.getAsJsonArray().forEach(x -> out.add(x.getAsString()));
        }
        return out;
    }

    static JsonArray array(Collection<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }
}
