package io.meshpilot.config.yaml;

import com.google.gson.stream.JsonWriter;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Binds a YAML node tree to a protobuf message the way Istio reads its YAML: proto3 JSON
 * field names (or the original proto names), enums by name, durations as {@code "10s"}.
 * Walks the tree against the message descriptor first, so every problem is reported with its
 * field path and line (unknown field, wrong type, bad enum, bad duration, two members of a
 * oneof), then lets protobuf's JsonFormat build the message.
 */
public final class ProtoYamlBinder {
    private static final Pattern DURATION = Pattern.compile("-?\\d+(\\.\\d{1,9})?s");
    /** Nodes visited per document: bounds what aliases can expand to. */
    private static final int MAX_NODES = 250_000;

    private final JsonFormat.Parser parser = JsonFormat.parser();

    /** Binds {@code node} into {@code builder} (merging over what it holds). */
    public void bind(String source, Node node, Message.Builder builder) throws YamlBindingException {
        Walk walk = new Walk();
        StringWriter out = new StringWriter();
        try (JsonWriter json = new JsonWriter(out)) {
            json.setSerializeNulls(true);
            walk.message(node, builder.getDescriptorForType(), "", json, 0);
        } catch (IOException e) {
            throw new IllegalStateException(e); // StringWriter does not fail
        } catch (TooLarge e) {
            walk.errors.add(new FieldError("", line(node), 0, e.getMessage()));
        }
        if (!walk.errors.isEmpty()) {
            throw new YamlBindingException(source, walk.errors);
        }
        try {
            parser.merge(out.toString(), builder);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            // The walk accepts what JsonFormat accepts; this is a last line of defence.
            throw new YamlBindingException(source, List.of(new FieldError("", line(node), 0, e.getMessage())));
        }
    }

    /** Converts a node tree to JSON text with no schema (for Struct-typed content and metadata). */
    public static String toJson(Node node) throws YamlBindingException {
        Walk walk = new Walk();
        StringWriter out = new StringWriter();
        try (JsonWriter json = new JsonWriter(out)) {
            json.setSerializeNulls(true);
            walk.untyped(node, "", json, 0);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (TooLarge e) {
            walk.errors.add(new FieldError("", line(node), 0, e.getMessage()));
        }
        if (!walk.errors.isEmpty()) {
            throw new YamlBindingException("", walk.errors);
        }
        return out.toString();
    }

    static int line(Node n) {
        return n == null || n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }

    static int column(Node n) {
        return n == null || n.getStartMark() == null ? 0 : n.getStartMark().getColumn() + 1;
    }

    private static final class TooLarge extends RuntimeException {
        TooLarge(String msg) {
            super(msg, null, false, false);
        }
    }

    /** One document's walk: collected errors and the node budget. */
    private static final class Walk {
        final List<FieldError> errors = new ArrayList<>();
        int nodes;

        void error(Node n, String path, String reason) {
            if (errors.size() < 50) {
                errors.add(new FieldError(path, line(n), column(n), reason));
            }
        }

        void count(int depth) {
            if (++nodes > MAX_NODES) {
                throw new TooLarge("document expands to more than " + MAX_NODES + " nodes (YAML aliases?)");
            }
            if (depth > SafeYaml.MAX_DEPTH) {
                throw new TooLarge("document nests deeper than " + SafeYaml.MAX_DEPTH + " levels");
            }
        }

        void message(Node node, Descriptor type, String path, JsonWriter json, int depth) throws IOException {
            count(depth);
            if (isNull(node)) {
                json.nullValue();
                return;
            }
            if (!(node instanceof MappingNode map)) {
                error(node, path, "expected an object (" + type.getName() + "), got " + describe(node));
                json.nullValue();
                return;
            }
            Map<OneofDescriptor, String> oneofSeen = new HashMap<>();
            java.util.Set<String> keys = new java.util.HashSet<>();
            json.beginObject();
            for (NodeTuple t : map.getValue()) {
                String key = scalarText(t.getKeyNode());
                String fieldPath = path.isEmpty() ? key : path + "." + key;
                if (key == null) {
                    error(t.getKeyNode(), path, "keys must be strings");
                    continue;
                }
                if (!keys.add(key)) {
                    error(t.getKeyNode(), fieldPath, "duplicate key \"" + key + "\"");
                    continue;
                }
                FieldDescriptor f = type.findFieldByName(key);
                if (f == null) {
                    f = byJsonName(type, key);
                }
                if (f == null) {
                    error(t.getKeyNode(), fieldPath, "unknown field \"" + key + "\" in " + type.getFullName());
                    continue;
                }
                OneofDescriptor oneof = f.getRealContainingOneof();
                if (oneof != null && !isNull(t.getValueNode())) {
                    String other = oneofSeen.putIfAbsent(oneof, key);
                    if (other != null) {
                        error(t.getKeyNode(), fieldPath, "only one of \"" + other + "\" and \"" + key + "\" may be set");
                        continue;
                    }
                }
                json.name(f.getJsonName());
                field(t.getValueNode(), f, fieldPath, json, depth + 1);
            }
            json.endObject();
        }

        private static FieldDescriptor byJsonName(Descriptor type, String key) {
            for (FieldDescriptor f : type.getFields()) {
                if (f.getJsonName().equals(key)) {
                    return f;
                }
            }
            return null;
        }

        void field(Node node, FieldDescriptor f, String path, JsonWriter json, int depth) throws IOException {
            if (isNull(node)) {
                json.nullValue();
                return;
            }
            if (f.isMapField()) {
                if (!(node instanceof MappingNode map)) {
                    error(node, path, "expected a map, got " + describe(node));
                    json.nullValue();
                    return;
                }
                FieldDescriptor valueField = f.getMessageType().findFieldByName("value");
                java.util.Set<String> keys = new java.util.HashSet<>();
                json.beginObject();
                for (NodeTuple t : map.getValue()) {
                    String key = scalarText(t.getKeyNode());
                    if (key == null) {
                        error(t.getKeyNode(), path, "map keys must be scalars");
                        continue;
                    }
                    if (!keys.add(key)) {
                        error(t.getKeyNode(), path + "[" + key + "]", "duplicate key \"" + key + "\"");
                        continue;
                    }
                    json.name(key);
                    single(t.getValueNode(), valueField, path + "[" + key + "]", json, depth + 1);
                }
                json.endObject();
            } else if (f.isRepeated()) {
                if (!(node instanceof SequenceNode seq)) {
                    error(node, path, "expected a list, got " + describe(node));
                    json.nullValue();
                    return;
                }
                json.beginArray();
                int i = 0;
                for (Node item : seq.getValue()) {
                    single(item, f, path + "[" + i++ + "]", json, depth + 1);
                }
                json.endArray();
            } else {
                single(node, f, path, json, depth);
            }
        }

        void single(Node node, FieldDescriptor f, String path, JsonWriter json, int depth) throws IOException {
            count(depth);
            if (isNull(node)) {
                json.nullValue();
                return;
            }
            switch (f.getJavaType()) {
                case MESSAGE -> wellKnownOrMessage(node, f.getMessageType(), path, json, depth);
                case ENUM -> enumValue(node, f.getEnumType(), path, json);
                case BOOLEAN -> bool(node, path, json);
                case INT, LONG -> integer(node, f.getType(), path, json);
                case FLOAT, DOUBLE -> decimal(node, path, json);
                case STRING -> string(node, path, json);
                case BYTE_STRING -> string(node, path, json);
                default -> throw new IllegalStateException("unhandled type " + f.getJavaType());
            }
        }

        void wellKnownOrMessage(Node node, Descriptor type, String path, JsonWriter json, int depth) throws IOException {
            switch (type.getFullName()) {
                case "google.protobuf.Duration" -> {
                    String s = scalarText(node);
                    String seconds = s == null ? null : durationSeconds(s);
                    if (!(node instanceof ScalarNode) || seconds == null) {
                        error(node, path, "invalid duration " + describe(node)
                                + " (expected e.g. \"10s\", \"500ms\", \"5m\", \"1h30m\")");
                        json.nullValue();
                    } else {
                        json.value(seconds);
                    }
                }
                case "google.protobuf.Timestamp", "google.protobuf.FieldMask" -> string(node, path, json);
                case "google.protobuf.Struct" -> {
                    if (!(node instanceof MappingNode)) {
                        error(node, path, "expected an object, got " + describe(node));
                        json.nullValue();
                    } else {
                        untyped(node, path, json, depth);
                    }
                }
                case "google.protobuf.ListValue" -> {
                    if (!(node instanceof SequenceNode)) {
                        error(node, path, "expected a list, got " + describe(node));
                        json.nullValue();
                    } else {
                        untyped(node, path, json, depth);
                    }
                }
                case "google.protobuf.Value" -> untyped(node, path, json, depth);
                case "google.protobuf.BoolValue" -> bool(node, path, json);
                case "google.protobuf.Int32Value", "google.protobuf.UInt32Value" ->
                        integer(node, FieldDescriptor.Type.INT32, path, json);
                case "google.protobuf.Int64Value", "google.protobuf.UInt64Value" ->
                        integer(node, FieldDescriptor.Type.INT64, path, json);
                case "google.protobuf.FloatValue", "google.protobuf.DoubleValue" -> decimal(node, path, json);
                case "google.protobuf.StringValue", "google.protobuf.BytesValue" -> string(node, path, json);
                case "google.protobuf.Any" -> {
                    error(node, path, "google.protobuf.Any fields are not supported here");
                    json.nullValue();
                }
                default -> message(node, type, path, json, depth);
            }
        }

        void enumValue(Node node, EnumDescriptor type, String path, JsonWriter json) throws IOException {
            String s = scalarText(node);
            if (!(node instanceof ScalarNode) || s == null) {
                error(node, path, "expected one of " + enumNames(type) + ", got " + describe(node));
                json.nullValue();
                return;
            }
            if (((ScalarNode) node).getTag().equals(Tag.INT)) {
                try {
                    json.value(Integer.parseInt(s));
                    return;
                } catch (NumberFormatException e) {
                    // fall through to the name check and its error
                }
            }
            if (type.findValueByName(s) == null) {
                error(node, path, "unknown value \"" + s + "\", expected one of " + enumNames(type));
                json.nullValue();
                return;
            }
            json.value(s);
        }

        private static String enumNames(EnumDescriptor type) {
            return type.getValues().stream().map(v -> v.getName()).toList().toString();
        }

        void bool(Node node, String path, JsonWriter json) throws IOException {
            if (node instanceof ScalarNode s && s.getTag().equals(Tag.BOOL)) {
                json.value(parseBool(s.getValue()));
            } else if (node instanceof ScalarNode s && (s.getValue().equals("true") || s.getValue().equals("false"))) {
                json.value(Boolean.parseBoolean(s.getValue())); // quoted "true"
            } else {
                error(node, path, "expected true or false, got " + describe(node));
                json.nullValue();
            }
        }

        void integer(Node node, FieldDescriptor.Type type, String path, JsonWriter json) throws IOException {
            BigInteger v = null;
            if (node instanceof ScalarNode s) {
                v = parseInteger(s.getValue());
            }
            if (v == null) {
                error(node, path, "expected a whole number, got " + describe(node));
                json.nullValue();
                return;
            }
            BigInteger min;
            BigInteger max;
            switch (type) {
                case INT32, SINT32, SFIXED32 -> {
                    min = BigInteger.valueOf(Integer.MIN_VALUE);
                    max = BigInteger.valueOf(Integer.MAX_VALUE);
                }
                case UINT32, FIXED32 -> {
                    min = BigInteger.ZERO;
                    max = BigInteger.valueOf(0xFFFFFFFFL);
                }
                case UINT64, FIXED64 -> {
                    min = BigInteger.ZERO;
                    max = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
                }
                default -> {
                    min = BigInteger.valueOf(Long.MIN_VALUE);
                    max = BigInteger.valueOf(Long.MAX_VALUE);
                }
            }
            if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
                error(node, path, "number " + v + " is out of range [" + min + ", " + max + "]");
                json.nullValue();
                return;
            }
            json.value(v);
        }

        void decimal(Node node, String path, JsonWriter json) throws IOException {
            if (node instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.FLOAT)
                    || s.getTag().equals(Tag.STR))) {
                String v = s.getValue().replace("_", "");
                try {
                    double d = switch (v.toLowerCase(java.util.Locale.ROOT)) {
                        case ".inf", "+.inf" -> Double.POSITIVE_INFINITY;
                        case "-.inf" -> Double.NEGATIVE_INFINITY;
                        case ".nan" -> Double.NaN;
                        default -> Double.parseDouble(v);
                    };
                    if (Double.isNaN(d) || Double.isInfinite(d)) {
                        json.value(Double.isNaN(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
                    } else {
                        json.value(new BigDecimal(v));
                    }
                    return;
                } catch (NumberFormatException e) {
                    // reported below
                }
            }
            error(node, path, "expected a number, got " + describe(node));
            json.nullValue();
        }

        void string(Node node, String path, JsonWriter json) throws IOException {
            if (node instanceof ScalarNode s && (s.getTag().equals(Tag.STR) || s.getTag().equals(Tag.TIMESTAMP)
                    || s.getTag().equals(Tag.BINARY))) {
                json.value(s.getValue());
            } else {
                error(node, path, "expected a string, got " + describe(node)
                        + (node instanceof ScalarNode ? " (quote it to make it a string)" : ""));
                json.nullValue();
            }
        }

        /** Schema-less conversion (Struct, Value, metadata). */
        void untyped(Node node, String path, JsonWriter json, int depth) throws IOException {
            count(depth);
            if (node instanceof MappingNode map) {
                java.util.Set<String> keys = new java.util.HashSet<>();
                json.beginObject();
                for (NodeTuple t : map.getValue()) {
                    String key = scalarText(t.getKeyNode());
                    if (key == null) {
                        error(t.getKeyNode(), path, "keys must be scalars");
                        continue;
                    }
                    if (!keys.add(key)) {
                        error(t.getKeyNode(), path.isEmpty() ? key : path + "." + key, "duplicate key \"" + key + "\"");
                        continue;
                    }
                    json.name(key);
                    untyped(t.getValueNode(), path.isEmpty() ? key : path + "." + key, json, depth + 1);
                }
                json.endObject();
            } else if (node instanceof SequenceNode seq) {
                json.beginArray();
                int i = 0;
                for (Node item : seq.getValue()) {
                    untyped(item, path + "[" + i++ + "]", json, depth + 1);
                }
                json.endArray();
            } else {
                ScalarNode s = (ScalarNode) node;
                Tag tag = s.getTag();
                if (tag.equals(Tag.NULL)) {
                    json.nullValue();
                } else if (tag.equals(Tag.BOOL)) {
                    json.value(parseBool(s.getValue()));
                } else if (tag.equals(Tag.INT) && parseInteger(s.getValue()) != null) {
                    json.value(parseInteger(s.getValue()));
                } else if (tag.equals(Tag.FLOAT)) {
                    try {
                        json.value(new BigDecimal(s.getValue().replace("_", "")));
                    } catch (NumberFormatException e) {
                        json.value(s.getValue()); // .inf / .nan have no JSON number form
                    }
                } else {
                    json.value(s.getValue());
                }
            }
        }
    }

    /**
     * Istio accepts Go durations ("5m", "1h", "100ms") where protobuf JSON only takes seconds
     * ("300s"); returns the protobuf form, or null when the text is no duration.
     */
    static String durationSeconds(String text) {
        if (DURATION.matcher(text).matches()) {
            return text;
        }
        try {
            java.time.Duration d = io.meshpilot.util.GoDuration.parse(text);
            if (d.getSeconds() > 315_576_000_000L) {
                return null; // beyond protobuf Duration's range
            }
            return BigDecimal.valueOf(d.getSeconds()).add(BigDecimal.valueOf(d.getNano(), 9))
                    .stripTrailingZeros().toPlainString() + "s";
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static boolean isNull(Node n) {
        return n == null || (n instanceof ScalarNode s && s.getTag().equals(Tag.NULL));
    }

    static String scalarText(Node n) {
        return n instanceof ScalarNode s ? s.getValue() : null;
    }

    static String describe(Node n) {
        if (n instanceof MappingNode) {
            return "an object";
        }
        if (n instanceof SequenceNode) {
            return "a list";
        }
        ScalarNode s = (ScalarNode) n;
        String v = s.getValue();
        if (v.length() > 40) {
            v = v.substring(0, 40) + "...";
        }
        String kind = s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.FLOAT) ? "number "
                : s.getTag().equals(Tag.BOOL) ? "boolean " : "";
        return kind + "\"" + v + "\"";
    }

    static boolean parseBool(String v) {
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "true", "yes", "on", "y" -> true;
            default -> false;
        };
    }

    /** YAML 1.1 integers: decimal, 0x hex, 0o / leading-0 octal, 0b binary, underscores. */
    static BigInteger parseInteger(String raw) {
        String v = raw.replace("_", "");
        int sign = 1;
        if (v.startsWith("-") || v.startsWith("+")) {
            sign = v.startsWith("-") ? -1 : 1;
            v = v.substring(1);
        }
        if (v.isEmpty()) {
            return null;
        }
        try {
            BigInteger r;
            if (v.startsWith("0x") || v.startsWith("0X")) {
                r = new BigInteger(v.substring(2), 16);
            } else if (v.startsWith("0o")) {
                r = new BigInteger(v.substring(2), 8);
            } else if (v.startsWith("0b")) {
                r = new BigInteger(v.substring(2), 2);
            } else if (v.length() > 1 && v.startsWith("0")) {
                r = new BigInteger(v.substring(1), 8);
            } else {
                r = new BigInteger(v);
            }
            return sign < 0 ? r.negate() : r;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
