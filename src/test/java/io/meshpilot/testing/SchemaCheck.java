package io.meshpilot.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Checks a parsed JSON value (maps, lists, strings, numbers, booleans, null) against an
 * OpenAPI 3.0 schema object: type, required, properties, additionalProperties, items, enum,
 * nullable, $ref into components. Returns the violations with their JSON paths.
 */
public final class SchemaCheck {
    private final Map<String, Object> document;

    public SchemaCheck(Map<String, Object> openApiDocument) {
        this.document = openApiDocument;
    }

    public List<String> check(Object value, Map<String, Object> schema) {
        List<String> errors = new ArrayList<>();
        check(value, schema, "$", errors);
        return errors;
    }

    @SuppressWarnings("unchecked")
    public Map<String, Object> resolve(Map<String, Object> schema) {
        Object ref = schema.get("$ref");
        if (ref == null) {
            return schema;
        }
        Object node = document;
        for (String part : ((String) ref).substring(2).split("/")) {
            node = ((Map<String, Object>) node).get(part);
            if (node == null) {
                throw new IllegalArgumentException("dangling $ref " + ref);
            }
        }
        return resolve((Map<String, Object>) node);
    }

    @SuppressWarnings("unchecked")
    private void check(Object value, Map<String, Object> raw, String path, List<String> errors) {
        Map<String, Object> schema = resolve(raw);
        if (value == null) {
            if (!Boolean.TRUE.equals(schema.get("nullable"))) {
                errors.add(path + ": null is not allowed");
            }
            return;
        }
        String type = (String) schema.get("type");
        if (type != null && !typeMatches(type, value)) {
            errors.add(path + ": expected " + type + ", got " + value.getClass().getSimpleName());
            return;
        }
        List<Object> en = (List<Object>) schema.get("enum");
        if (en != null && !en.contains(value)) {
            errors.add(path + ": " + value + " is not one of " + en);
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> props = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
            for (Object req : (List<Object>) schema.getOrDefault("required", List.of())) {
                if (!map.containsKey(req)) {
                    errors.add(path + ": missing required property " + req);
                }
            }
            Object additional = schema.get("additionalProperties");
            for (var e : map.entrySet()) {
                String key = String.valueOf(e.getKey());
                Map<String, Object> ps = (Map<String, Object>) props.get(key);
                if (ps != null) {
                    check(e.getValue(), ps, path + "." + key, errors);
                } else if (Boolean.FALSE.equals(additional)) {
                    errors.add(path + ": undocumented property " + key);
                } else if (additional instanceof Map<?, ?> as) {
                    check(e.getValue(), (Map<String, Object>) as, path + "." + key, errors);
                }
            }
        }
        if (value instanceof List<?> list && schema.get("items") instanceof Map<?, ?> items) {
            for (int i = 0; i < list.size(); i++) {
                check(list.get(i), (Map<String, Object>) items, path + "[" + i + "]", errors);
            }
        }
    }

    private static boolean typeMatches(String type, Object v) {
        return switch (type) {
            case "object" -> v instanceof Map;
            case "array" -> v instanceof List;
            case "string" -> v instanceof String;
            case "boolean" -> v instanceof Boolean;
            case "integer" -> v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue());
            case "number" -> v instanceof Number;
            default -> false;
        };
    }
}
