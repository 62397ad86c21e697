package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The PATCH bodies the API server accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
 * and Kubernetes' strategic merge patch as kubectl sends it. Strategic merge is the merge
 * patch plus kubectl's directives ({@code $patch: delete|replace}, {@code $setElementOrder},
 * {@code $retainKeys}, {@code $deleteFromPrimitiveList}) and lists of objects merged by the
 * merge keys of the built-in kinds (name, port, containerPort, ip, mountPath, type...); the
 * real server reads those keys from the Go structs, which a stand-in cannot have, so a list
 * whose items carry none of them is replaced, as a merge patch would.
 */
final class Patches {
    private static final List<String> MERGE_KEYS = List.of("name", "containerPort", "port", "ip", "mountPath",
            "devicePath", "type", "topologyKey", "key");

    private Patches() {
    }

    static JsonElement merge(JsonElement target, JsonElement patch) {
        if (!patch.isJsonObject()) {
            return patch.deepCopy();
        }
        JsonObject result = target != null && target.isJsonObject() ? target.getAsJsonObject().deepCopy() : new JsonObject();
        for (Map.Entry<String, JsonElement> e : patch.getAsJsonObject().entrySet()) {
            if (e.getValue().isJsonNull()) {
                result.remove(e.getKey());
            } else {
                result.add(e.getKey(), merge(result.get(e.getKey()), e.getValue()));
            }
        }
        return result;
    }

    /**
     * A strategic merge patch removing what {@code previous} (a manager's last applied
     * configuration, or null) set and {@code next} no longer does: absent fields, and list entries
     * whose merge key is absent. Server-side apply does this through managed fields.
     */
    static JsonObject withdrawn(JsonObject previous, JsonObject next) {
        JsonObject patch = new JsonObject();
        if (previous == null) {
            return patch;
        }
        for (Map.Entry<String, JsonElement> e : previous.entrySet()) {
            JsonElement now = next.get(e.getKey());
            if (now == null) {
                patch.add(e.getKey(), JsonNull.INSTANCE);
            } else if (e.getValue().isJsonObject() && now.isJsonObject()) {
                JsonObject nested = withdrawn(e.getValue().getAsJsonObject(), now.getAsJsonObject());
                if (!nested.isEmpty()) {
                    patch.add(e.getKey(), nested);
                }
            } else if (e.getValue().isJsonArray() && now.isJsonArray()) {
                JsonArray removed = withdrawnEntries(e.getValue().getAsJsonArray(), now.getAsJsonArray());
                if (!removed.isEmpty()) {
                    patch.add(e.getKey(), removed);
                }
            }
        }
        return patch;
    }

    private static JsonArray withdrawnEntries(JsonArray previous, JsonArray next) {
        JsonArray removed = new JsonArray();
        String mergeKey = mergeKey(previous);
        if (mergeKey == null) {
            return removed; // a list without a merge key is replaced whole by the apply itself
        }
        for (JsonElement item : previous) {
            JsonElement keyValue = item.getAsJsonObject().get(mergeKey);
            if (indexOf(next, mergeKey, keyValue) < 0) {
                JsonObject delete = new JsonObject();
                delete.add(mergeKey, keyValue);
                delete.addProperty("$patch", "delete");
                removed.add(delete);
            }
        }
        return removed;
    }

    static JsonElement strategic(JsonElement target, JsonElement patch) {
        if (!patch.isJsonObject()) {
            return patch.deepCopy();
        }
        JsonObject p = patch.getAsJsonObject();
        String directive = Json.string(p, "$patch");
        if ("replace".equals(directive)) {
            JsonObject replaced = p.deepCopy();
            replaced.remove("$patch");
            return replaced;
        }
        JsonObject result = target != null && target.isJsonObject() ? target.getAsJsonObject().deepCopy() : new JsonObject();
        for (Map.Entry<String, JsonElement> e : p.entrySet()) {
            String key = e.getKey();
            JsonElement value = e.getValue();
            if (key.startsWith("$setElementOrder/") || key.equals("$retainKeys") || key.equals("$patch")) {
                continue;
            }
            if (key.startsWith("$deleteFromPrimitiveList/")) {
                String field = key.substring("$deleteFromPrimitiveList/".length());
                JsonElement current = result.get(field);
                if (current != null && current.isJsonArray() && value.isJsonArray()) {
                    JsonArray kept = new JsonArray();
                    current.getAsJsonArray().forEach(x -> {
                        if (!value.getAsJsonArray().contains(x)) {
                            kept.add(x);
                        }
                    });
                    result.add(field, kept);
                }
                continue;
            }
            if (value.isJsonNull()) {
                result.remove(key);
            } else if (value.isJsonObject() && "delete".equals(Json.string(value.getAsJsonObject(), "$patch"))) {
                result.remove(key);
            } else if (value.isJsonArray()) {
                result.add(key, strategicList(result.get(key), value.getAsJsonArray()));
            } else {
                result.add(key, strategic(result.get(key), value));
            }
        }
        return result;
    }

    private static JsonElement strategicList(JsonElement target, JsonArray patch) {
        String mergeKey = mergeKey(patch);
        if (mergeKey == null || target == null || !target.isJsonArray()) {
            JsonArray copy = new JsonArray();
            patch.forEach(item -> {
                if (!(item.isJsonObject() && item.getAsJsonObject().has("$patch"))) {
                    copy.add(item.deepCopy());
                }
            });
            return copy;
        }
        JsonArray result = target.getAsJsonArray().deepCopy();
        for (JsonElement item : patch) {
            JsonObject patchItem = item.getAsJsonObject();
            JsonElement keyValue = patchItem.get(mergeKey);
            int index = indexOf(result, mergeKey, keyValue);
            if ("delete".equals(Json.string(patchItem, "$patch"))) {
                if (index >= 0) {
                    result.remove(index);
                }
            } else if (index >= 0) {
                result.set(index, strategic(result.get(index), patchItem));
            } else {
                result.add(strategic(new JsonObject(), patchItem));
            }
        }
        return result;
    }

    private static String mergeKey(JsonArray items) {
        if (items.isEmpty() || !items.get(0).isJsonObject()) {
            return null;
        }
        for (String key : MERGE_KEYS) {
            boolean all = true;
            for (JsonElement item : items) {
                all &= item.isJsonObject() && item.getAsJsonObject().has(key);
            }
            if (all) {
                return key;
            }
        }
        return null;
    }

    private static int indexOf(JsonArray array, String key, JsonElement value) {
        for (int i = 0; i < array.size(); i++) {
            JsonElement item = array.get(i);
            if (item.isJsonObject() && value.equals(item.getAsJsonObject().get(key))) {
                return i;
            }
        }
        return -1;
    }

    /** RFC 6902 operations in order; a failed {@code test} or a missing path is a bad request. */
    static JsonElement jsonPatch(JsonElement target, JsonElement patch) {
        if (!patch.isJsonArray()) {
            throw ApiError.badRequest("a JSON patch must be an array of operations");
        }
        JsonElement doc = target.deepCopy();
        for (JsonElement opElement : patch.getAsJsonArray()) {
            JsonObject op = opElement.getAsJsonObject();
            String kind = Json.string(op, "op");
            String path = Json.string(op, "path");
            if (kind == null || path == null) {
                throw ApiError.badRequest("a JSON patch operation needs op and path: " + op);
            }
            switch (kind) {
                case "add" -> doc = add(doc, path, op.get("value"));
                case "remove" -> doc = remove(doc, path);
                case "replace" -> doc = add(remove(doc, path), path, op.get("value"));
                case "move" -> {
                    JsonElement value = get(doc, Json.string(op, "from"));
                    doc = add(remove(doc, Json.string(op, "from")), path, value);
                }
                case "copy" -> doc = add(doc, path, get(doc, Json.string(op, "from")).deepCopy());
                case "test" -> {
                    if (!get(doc, path).equals(op.get("value"))) {
                        throw new ApiError(422, "Invalid", "the server rejected our request due to an error in our "
                                + "request: test failed at " + path, null, null);
                    }
                }
                default -> throw ApiError.badRequest("unknown JSON patch operation " + kind);
            }
        }
        return doc;
    }

    private static List<String> pointer(String path) {
        if (path.isEmpty()) {
            return List.of();
        }
        if (!path.startsWith("/")) {
            throw ApiError.badRequest("JSON pointer must start with '/': " + path);
        }
        return Arrays.stream(path.substring(1).split("/", -1))
                .map(s -> s.replace("~1", "/").replace("~0", "~")).toList();
    }

    private static JsonElement get(JsonElement doc, String path) {
        JsonElement e = doc;
        for (String token : pointer(path)) {
            e = child(e, token, path);
        }
        return e;
    }

    private static JsonElement child(JsonElement e, String token, String path) {
        JsonElement c = null;
        if (e.isJsonObject()) {
            c = e.getAsJsonObject().get(token);
        } else if (e.isJsonArray() && token.matches("\\d+") && Integer.parseInt(token) < e.getAsJsonArray().size()) {
            c = e.getAsJsonArray().get(Integer.parseInt(token));
        }
        if (c == null) {
            throw new ApiError(422, "Invalid", "the server rejected our request: path " + path + " does not exist",
                    null, null);
        }
        return c;
    }

    private static JsonElement add(JsonElement doc, String path, JsonElement value) {
        List<String> tokens = pointer(path);
        JsonElement v = value == null ? JsonNull.INSTANCE : value.deepCopy();
        if (tokens.isEmpty()) {
            return v;
        }
        JsonElement parent = doc;
        for (String token : tokens.subList(0, tokens.size() - 1)) {
            parent = child(parent, token, path);
        }
        String last = tokens.get(tokens.size() - 1);
        if (parent.isJsonObject()) {
            parent.getAsJsonObject().add(last, v);
        } else if (parent.isJsonArray()) {
            JsonArray a = parent.getAsJsonArray();
            if (last.equals("-")) {
                a.add(v);
            } else {
                int index = Integer.parseInt(last);
                JsonArray rebuilt = new JsonArray();
                for (int i = 0; i <= a.size(); i++) {
                    if (i == index) {
                        rebuilt.add(v);
                    }
                    if (i < a.size()) {
                        rebuilt.add(a.get(i));
                    }
                }
                while (a.size() > 0) {
                    a.remove(0);
                }
                a.addAll(rebuilt);
            }
        } else {
            throw ApiError.badRequest("cannot add at " + path);
        }
        return doc;
    }

    private static JsonElement remove(JsonElement doc, String path) {
        List<String> tokens = pointer(path);
        JsonElement parent = doc;
        for (String token : tokens.subList(0, tokens.size() - 1)) {
            parent = child(parent, token, path);
        }
        String last = tokens.get(tokens.size() - 1);
        child(parent, last, path);
        if (parent.isJsonObject()) {
            parent.getAsJsonObject().remove(last);
        } else {
            parent.getAsJsonArray().remove(Integer.parseInt(last));
        }
        return doc;
    }
}
