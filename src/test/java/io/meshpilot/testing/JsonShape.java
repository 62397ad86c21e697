package io.meshpilot.testing;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A recorded JSON response shape: field paths with their JSON types, written down from the Go
 * structs (or protos) another server marshals, so a test can tell whether our JSON has the same
 * names and types. One line per field: {@code path type [always]}.
 * <ul>
 *   <li>paths: {@code .} between object fields, {@code []} for an array's elements, {@code *}
 *       for the values of a map (an object with free keys); the root is {@code $};</li>
 *   <li>types: {@code string}, {@code number}, {@code boolean}, {@code object} (fixed fields),
 *       {@code map} (free keys), {@code array}, {@code any} (a protobuf {@code Any}: an object
 *       with a string {@code @type}, its other fields not checked);</li>
 *   <li>{@code always}: Go prints the field even when empty (no {@code omitempty}), so it must
 *       be there.</li>
 * </ul>
 * Fields the shape does not know are problems, except under the paths named as extras (ours,
 * which the other side's lenient JSON decoders skip).
 */
public final class JsonShape {
    private record Field(String type, boolean always) {
    }

    private final Map<String, Field> fields = new LinkedHashMap<>();

    private JsonShape() {
    }

    public static JsonShape of(String... lines) {
        JsonShape s = new JsonShape();
        for (String line : lines) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length < 2 || parts.length > 3 || (parts.length == 3 && !parts[2].equals("always"))) {
                throw new IllegalArgumentException("shape line \"" + line + "\" is not: path type [always]");
            }
            s.fields.put(parts[0], new Field(parts[1], parts.length == 3));
        }
        return s;
    }

    /** What in {@code actual} differs from the shape; {@code extras} are paths of ours allowed besides it. */
    public List<String> problems(JsonElement actual, Set<String> extras) {
        List<String> out = new ArrayList<>();
        walk("$", "$", actual, extras, out);
        return out;
    }

    private void walk(String pattern, String where, JsonElement e, Set<String> extras, List<String> out) {
        if (extras.contains(pattern)) {
            return;
        }
        Field f = fields.get(pattern);
        if (f == null) {
            out.add(where + ": not in the recorded shape (" + pattern + ")");
            return;
        }
        String actualType = typeOf(e);
        if (actualType.equals("null") && (f.type().equals("map") || f.type().equals("array"))) {
            return; // Go prints a nil map or slice as null
        }
        boolean matches = switch (f.type()) {
            case "map", "any" -> actualType.equals("object");
            default -> actualType.equals(f.type());
        };
        if (!matches) {
            out.add(where + ": " + actualType + ", recorded " + f.type() + " (" + e + ")");
            return;
        }
        switch (f.type()) {
            case "any" -> {
                JsonElement type = e.getAsJsonObject().get("@type");
                if (type == null || !type.isJsonPrimitive() || !type.getAsJsonPrimitive().isString()) {
                    out.add(where + ": an Any without a string @type");
                }
            }
            case "map" -> e.getAsJsonObject().entrySet().forEach(en ->
                    walk(pattern + ".*", where + "." + en.getKey(), en.getValue(), extras, out));
            case "array" -> {
                for (int i = 0; i < e.getAsJsonArray().size(); i++) {
                    walk(pattern + "[]", where + "[" + i + "]", e.getAsJsonArray().get(i), extras, out);
                }
            }
            case "object" -> {
                JsonObject o = e.getAsJsonObject();
                fields.forEach((path, field) -> {
                    if (field.always() && path.startsWith(pattern + ".")
                            && !path.substring(pattern.length() + 1).matches(".*[.\\[*].*") && !o.has(path.substring(
                                    pattern.length() + 1))) {
                        out.add(where + ": missing " + path.substring(pattern.length() + 1) + " (recorded without omitempty)");
                    }
                });
                o.entrySet().forEach(en -> walk(pattern + "." + en.getKey(), where + "." + en.getKey(), en.getValue(),
                        extras, out));
            }
            default -> {
            }
        }
    }

    private static String typeOf(JsonElement e) {
        if (e.isJsonNull()) {
            return "null";
        }
        if (e.isJsonObject()) {
            return "object";
        }
        if (e.isJsonArray()) {
            return "array";
        }
        var p = e.getAsJsonPrimitive();
        return p.isBoolean() ? "boolean" : p.isNumber() ? "number" : "string";
    }
}
