package io.meshpilot.chart;

import java.util.List;
import java.util.Map;

/** Reading parsed YAML (maps and lists) by dotted paths; {@code [n]} indexes a list. */
final class Yamls {
    private Yamls() {
    }

    /** The value at {@code path} ({@code spec.template.spec.containers[0].args}), or null. */
    static Object at(Object root, String path) {
        Object cur = root;
        for (String part : path.split("\\.")) {
            String key = part;
            Integer index = null;
            int bracket = part.indexOf('[');
            if (bracket >= 0) {
                key = part.substring(0, bracket);
                index = Integer.parseInt(part.substring(bracket + 1, part.length() - 1));
            }
            if (!key.isEmpty()) {
                if (!(cur instanceof Map<?, ?> m)) {
                    return null;
                }
                cur = m.get(key);
            }
            if (index != null) {
                if (!(cur instanceof List<?> l) || index >= l.size()) {
                    return null;
                }
                cur = l.get(index);
            }
        }
        return cur;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object root, String path) {
        Object o = at(root, path);
        if (!(o instanceof Map<?, ?>)) {
            throw new AssertionError("no map at " + path + ": " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object root, String path) {
        Object o = at(root, path);
        if (!(o instanceof List<?>)) {
            throw new AssertionError("no list at " + path + ": " + o);
        }
        return (List<Object>) o;
    }

    /** The element of the list at {@code path} whose {@code name} is {@code name}. */
    static Map<String, Object> named(Object root, String path, String name) {
        for (Object o : list(root, path)) {
            if (o instanceof Map<?, ?> m && name.equals(m.get("name"))) {
                @SuppressWarnings("unchecked")
                Map<String, Object> found = (Map<String, Object>) m;
                return found;
            }
        }
        throw new AssertionError("no element named " + name + " in " + path + ": " + at(root, path));
    }
}
