package io.meshpilot.testing.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code labelSelector} and {@code fieldSelector} query parameters of list, watch and
 * delete-collection: equality ({@code =}, {@code ==}, {@code !=}), set ({@code in},
 * {@code notin}) and existence ({@code key}, {@code !key}) requirements on labels; equality on
 * dotted field paths such as {@code metadata.name}, {@code metadata.namespace} or
 * {@code spec.nodeName}.
 */
final class Selector {
    private static final Pattern SET = Pattern.compile("\\s*([^\\s!=]+)\\s+(in|notin)\\s+\\(([^)]*)\\)\\s*");
    private static final Pattern EQUALITY = Pattern.compile("\\s*([^\\s!=]+)\\s*(==|=|!=)\\s*([^\\s]*)\\s*");
    private static final Pattern EXISTS = Pattern.compile("\\s*(!?)\\s*([^\\s!=(),]+)\\s*");

    private Selector() {
    }

    /** Both selectors (either may be null or empty) as one predicate over objects. */
    static Predicate<JsonObject> of(String labelSelector, String fieldSelector) {
        Predicate<JsonObject> labels = labels(labelSelector);
        Predicate<JsonObject> fields = fields(fieldSelector);
        return labels.and(fields);
    }

    static Predicate<JsonObject> labels(String selector) {
        Predicate<JsonObject> all = o -> true;
        if (selector == null || selector.isBlank()) {
            return all;
        }
        for (String requirement : splitTopLevel(selector)) {
            all = all.and(labelRequirement(requirement));
        }
        return all;
    }

    private static Predicate<JsonObject> labelRequirement(String r) {
        Matcher m = SET.matcher(r);
        if (m.matches()) {
            String key = m.group(1);
            Set<String> values = Set.copyOf(List.of(m.group(3).trim().split("\\s*,\\s*")));
            boolean in = m.group(2).equals("in");
            return o -> {
                String v = label(o, key);
                return in ? v != null && values.contains(v) : v == null || !values.contains(v);
            };
        }
        m = EQUALITY.matcher(r);
        if (m.matches()) {
            String key = m.group(1);
            String value = m.group(3);
            boolean equal = !m.group(2).equals("!=");
            return o -> equal == value.equals(label(o, key));
        }
        m = EXISTS.matcher(r);
        if (m.matches()) {
            String key = m.group(2);
            boolean exists = m.group(1).isEmpty();
            return o -> exists == (label(o, key) != null);
        }
        throw ApiError.badRequest("unable to parse requirement: \"" + r + "\" in labelSelector");
    }

    private static String label(JsonObject o, String key) {
        JsonElement labels = Json.metadata(o).get("labels");
        if (labels == null || !labels.isJsonObject()) {
            return null;
        }
        JsonElement v = labels.getAsJsonObject().get(key);
        return v == null || v.isJsonNull() ? null : v.getAsString();
    }

    static Predicate<JsonObject> fields(String selector) {
        Predicate<JsonObject> all = o -> true;
        if (selector == null || selector.isBlank()) {
            return all;
        }
        for (String requirement : selector.split(",")) {
            Matcher m = EQUALITY.matcher(requirement);
            if (!m.matches()) {
                throw ApiError.badRequest("invalid selector: '" + selector + "'; can't understand '" + requirement + "'");
            }
            String[] path = m.group(1).split("\\.");
            String value = m.group(3);
            boolean equal = !m.group(2).equals("!=");
            // a missing field compares as the empty string, as the real server's field sets do
            all = all.and(o -> equal == value.equals(Objects.requireNonNullElse(Json.string(o, path), "")));
        }
        return all;
    }

    /** Splits on commas that are not inside the parentheses of a set requirement. */
    private static List<String> splitTopLevel(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        out.add(s.substring(start));
        return out;
    }
}
