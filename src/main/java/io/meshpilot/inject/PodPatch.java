package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import jakarta.json.Json;
import jakarta.json.JsonReader;
import jakarta.json.JsonStructure;
import java.io.StringReader;

/**
 * The RFC 6902 JSON Patch that turns the pod the API server sent into the injected pod, as
 * istiod's createPatch makes it (a diff of the whole pod, member by member and element by
 * element): JSON-P's diff, so only what injection changed is written.
 */
final class PodPatch {
    private PodPatch() {
    }

    static JsonArray diff(JsonObject original, JsonObject injected) {
        var patch = Json.createDiff(toJsonP(original), toJsonP(injected));
        return JsonParser.parseString(patch.toJsonArray().toString()).getAsJsonArray();
    }

    /** The pods are Gson trees everywhere else in the injector; JSON-P reads their text. */
    private static JsonStructure toJsonP(JsonObject o) {
        try (JsonReader reader = Json.createReader(new StringReader(o.toString()))) {
            return reader.read();
        }
    }
}
