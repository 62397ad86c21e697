package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.Map;

/**
 * The RFC 6902 JSON Patch that turns the pod the API server sent into the injected pod, made as
 * istiod's createPatch makes it (gomodules jsonpatch CreatePatch over the whole pod): objects
 * member by member; arrays of objects index by index (trailing removes from the end, then the
 * appended adds, then each common index); a member whose JSON type changed is replaced. Only
 * what injection changed is written, so the patch applies where another webhook touched other
 * members.
 *
 * <p>One departure, for a bounded cost: gomodules diffs an array of plain values by edit
 * distance (a table of m*n cells), here such an array is replaced whole when it changed. The
 * work is linear in the size of the pods, and the recursion depth is their nesting depth.
 */
final class PodPatch {
    private PodPatch() {
    }

    static JsonArray diff(JsonObject original, JsonObject injected) {
        JsonArray patch = new JsonArray();
        diffValues(original, injected, "", patch);
        return patch;
    }

    private static void diffValues(JsonElement before, JsonElement after, String path, JsonArray patch) {
        if (before.isJsonNull() && after.isJsonNull()) {
            return;
        }
        if (!sameJsonType(before, after)) {
            patch.add(operation("replace", path, after));
        } else if (before.isJsonObject()) {
            diffObjects(before.getAsJsonObject(), after.getAsJsonObject(), path, patch);
        } else if (before.isJsonArray()) {
            diffArrays(before.getAsJsonArray(), after.getAsJsonArray(), path, patch);
        } else if (!before.equals(after)) {
            patch.add(operation("replace", path, after));
        }
    }

    private static void diffObjects(JsonObject before, JsonObject after, String path, JsonArray patch) {
        for (Map.Entry<String, JsonElement> member : after.entrySet()) {
            String memberPath = path + "/" + escape(member.getKey());
            JsonElement old = before.get(member.getKey());
            if (old == null) {
                patch.add(operation("add", memberPath, member.getValue()));
            } else {
                diffValues(old, member.getValue(), memberPath, patch);
            }
        }
        for (String name : before.keySet()) {
            if (!after.has(name)) {
                patch.add(operation("remove", path + "/" + escape(name), null));
            }
        }
    }

    private static void diffArrays(JsonArray before, JsonArray after, String path, JsonArray patch) {
        if (plainValues(before) && plainValues(after)) {
            if (!before.equals(after)) {
                patch.add(operation("replace", path, after));
            }
            return;
        }
        int common = Math.min(before.size(), after.size());
        for (int i = before.size() - 1; i >= common; i--) {
            patch.add(operation("remove", path + "/" + i, null));
        }
        for (int i = common; i < after.size(); i++) {
            patch.add(operation("add", path + "/" + i, after.get(i)));
        }
        for (int i = 0; i < common; i++) {
            diffValues(before.get(i), after.get(i), path + "/" + i, patch);
        }
    }

    /** Strings, numbers and booleans only (no null, object or array), as gomodules' basic types. */
    private static boolean plainValues(JsonArray array) {
        for (JsonElement e : array) {
            if (!e.isJsonPrimitive()) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameJsonType(JsonElement a, JsonElement b) {
        if (a.isJsonPrimitive() && b.isJsonPrimitive()) {
            var x = a.getAsJsonPrimitive();
            var y = b.getAsJsonPrimitive();
            return x.isString() == y.isString() && x.isNumber() == y.isNumber() && x.isBoolean() == y.isBoolean();
        }
        return a.isJsonObject() == b.isJsonObject() && a.isJsonArray() == b.isJsonArray() && a.isJsonNull() == b.isJsonNull();
    }

    private static JsonObject operation(String op, String path, JsonElement value) {
        JsonObject operation = new JsonObject();
        operation.addProperty("op", op);
        operation.addProperty("path", path);
        if (value != null) {
            operation.add("value", value.deepCopy());
        }
        return operation;
    }

    /** A member name as an RFC 6901 pointer token: "~" becomes "~0", then "/" becomes "~1". */
    private static String escape(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }
}
