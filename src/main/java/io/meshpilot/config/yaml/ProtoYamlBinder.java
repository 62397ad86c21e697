package io.meshpilot.config.yaml;

import com.google.protobuf.BoolValue;
import com.google.protobuf.BytesValue;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.DoubleValue;
import com.google.protobuf.FloatValue;
import com.google.protobuf.Int32Value;
import com.google.protobuf.Int64Value;
import com.google.protobuf.ListValue;
import com.google.protobuf.Message;
import com.google.protobuf.NullValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.UInt64Value;
import com.google.protobuf.Value;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.FieldMaskUtil;
import com.google.protobuf.util.Timestamps;
import io.meshpilot.util.GoDuration;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Binds a YAML node tree to a protobuf message the way Istio reads its YAML: proto3 JSON
 * field names (or the original proto names), enums by name, durations as {@code "10s"} (or
 * Go's {@code "1m30s"}), well-known types in their JSON forms. Builds the message directly
 * from the nodes and reports every problem with its field path and line (unknown field, wrong
 * type, bad enum, bad duration, two members of a oneof, a value out of range); a document
 * with any problem binds nothing.
 *
 * <p>Why this is not protobuf's {@code JsonFormat} over the YAML turned into JSON (checked with
 * protobuf-java 4.35.1): JsonFormat stops at the first problem and names neither the field
 * path nor a line ({@code Cannot find field: prot in message istio.networking.v1alpha3.Destination},
 * {@code Not an int32 value: "x"}), while users get every problem of a document with
 * {@code http[0].route[0].destination.prot} and its line, as the admin API and the
 * validation webhook report them; its {@code ignoringUnknownFields()} drops unknown keys
 * without saying which, while istiod's lenient reading is reported here key by key as
 * accepted-but-not-applied; it refuses Go's durations ({@code "1m30s"}); and it reads JSON,
 * so YAML's own scalars (YAML 1.1 booleans and integers, {@code .inf}) and the alias budget
 * would need this walk over the nodes anyway. What JsonFormat does that the walk needs is
 * reused: {@code Durations}, {@code Timestamps} and {@code FieldMaskUtil} parse those types.
 */
public final class ProtoYamlBinder {
    private static final Pattern DURATION = Pattern.compile("-?\\d+(\\.\\d{1,9})?s");
    /** Nodes visited per document: bounds what aliases can expand to. */
    private static final int MAX_NODES = 250_000;

    /**
     * Binds {@code node} into {@code builder}: the fields it names are set, lists and maps add
     * to what the builder holds. When it throws, the builder may hold part of the document:
     * callers bind into a fresh builder and drop it then.
     */
    public void bind(String source, Node node, Message.Builder builder) throws YamlBindingException {
        bind(source, node, builder, false);
    }

    /**
     * As {@link #bind(String, Node, Message.Builder)}; with {@code allowUnknownFields} a key
     * that names no field of its message (at any depth) is left out instead of being an error,
     * as istiod reads stored config (protomarshal.ApplyJSON: strict, then again allowing unknown
     * fields), so config written for an older or newer Istio still loads. Returns the keys
     * left out, each with its path and line; wrong types and bad values are errors either way.
     */
    public List<FieldError> bind(String source, Node node, Message.Builder builder, boolean allowUnknownFields)
            throws YamlBindingException {
        Walk walk = new Walk(allowUnknownFields);
        try {
            walk.message(node, builder, "", 0);
        } catch (TooLarge e) {
            walk.errors.add(new FieldError("", line(node), 0, e.getMessage()));
        }
        if (!walk.errors.isEmpty()) {
            throw new YamlBindingException(source, walk.errors);
        }
        return List.copyOf(walk.unknown);
    }

    /** A mapping node as a {@code google.protobuf.Struct} (for Struct-typed content such as a status). */
    public static Struct toStruct(Node node) throws YamlBindingException {
        Walk walk = new Walk(false);
        Struct struct = null;
        try {
            if (!(node instanceof MappingNode)) {
                walk.error(node, "", "expected an object, got " + describe(node));
            } else {
                struct = walk.untyped(node, "", 0).getStructValue();
            }
        } catch (TooLarge e) {
            walk.errors.add(new FieldError("", line(node), 0, e.getMessage()));
        }
        if (!walk.errors.isEmpty()) {
            throw new YamlBindingException("", walk.errors);
        }
        return struct;
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

    /** One document's walk: collected errors and the node budget. A value that failed is returned as null. */
    private static final class Walk {
        final List<FieldError> errors = new ArrayList<>();
        /** Keys that name no field, left out (only when unknown fields are allowed). */
        final List<FieldError> unknown = new ArrayList<>();
        final boolean allowUnknownFields;
        int nodes;

        Walk(boolean allowUnknownFields) {
            this.allowUnknownFields = allowUnknownFields;
        }

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

        /** Sets the fields {@code node} names on {@code b}; null leaves {@code b} as it is. */
        void message(Node node, Message.Builder b, String path, int depth) {
            count(depth);
            if (isNull(node)) {
                return;
            }
            if (!(node instanceof MappingNode map)) {
                error(node, path, "expected an object (" + b.getDescriptorForType().getName() + "), got " + describe(node));
                return;
            }
            Descriptor type = b.getDescriptorForType();
            Map<OneofDescriptor, String> oneofSeen = null;
            Set<String> keys = new HashSet<>();
            Map<FieldDescriptor, String> fieldsSeen = new HashMap<>();
            for (NodeTuple t : map.getValue()) {
                String key = scalarText(t.getKeyNode());
                if (key == null) {
                    error(t.getKeyNode(), path, "keys must be strings");
                    continue;
                }
                String fieldPath = path.isEmpty() ? key : path + "." + key;
                if (!keys.add(key)) {
                    error(t.getKeyNode(), fieldPath, "duplicate key \"" + key + "\"");
                    continue;
                }
                FieldDescriptor f = type.findFieldByName(key);
                if (f == null) {
                    f = byJsonName(type, key);
                }
                if (f == null) {
                    String reason = "unknown field \"" + key + "\" in " + type.getFullName();
                    if (!allowUnknownFields) {
                        error(t.getKeyNode(), fieldPath, reason);
                    } else if (unknown.size() < 50) {
                        unknown.add(new FieldError(fieldPath, line(t.getKeyNode()), column(t.getKeyNode()), reason));
                    } else if (unknown.size() == 50) {
                        unknown.add(new FieldError(fieldPath, line(t.getKeyNode()), column(t.getKeyNode()),
                                "more unknown fields from here on, left out and not listed"));
                    }
                    continue;
                }
                String sameField = fieldsSeen.putIfAbsent(f, key);
                if (sameField != null) {
                    // exportTo and export_to are one field: protobuf's JSON reading rejects it twice
                    error(t.getKeyNode(), fieldPath, "\"" + sameField + "\" and \"" + key + "\" are the same field");
                    continue;
                }
                OneofDescriptor oneof = f.getRealContainingOneof();
                if (oneof != null && !isNull(t.getValueNode())) {
                    oneofSeen = oneofSeen == null ? new HashMap<>() : oneofSeen;
                    String other = oneofSeen.putIfAbsent(oneof, key);
                    if (other != null) {
                        error(t.getKeyNode(), fieldPath, "only one of \"" + other + "\" and \"" + key + "\" may be set");
                        continue;
                    }
                }
                field(t.getValueNode(), f, b, fieldPath, depth + 1);
            }
        }

        private static FieldDescriptor byJsonName(Descriptor type, String key) {
            for (FieldDescriptor f : type.getFields()) {
                if (f.getJsonName().equals(key)) {
                    return f;
                }
            }
            return null;
        }

        /** One field of {@code b}: null (or ~) leaves it unset, as protobuf's JSON reading does. */
        void field(Node node, FieldDescriptor f, Message.Builder b, String path, int depth) {
            if (isNull(node)) {
                if (!f.isRepeated() && isValue(f)) {
                    b.setField(f, NULL_VALUE); // a Value field holds null itself
                }
                return;
            }
            if (f.isMapField()) {
                if (!(node instanceof MappingNode map)) {
                    error(node, path, "expected a map, got " + describe(node));
                    return;
                }
                FieldDescriptor keyField = f.getMessageType().findFieldByName("key");
                FieldDescriptor valueField = f.getMessageType().findFieldByName("value");
                Set<String> keys = new HashSet<>();
                for (NodeTuple t : map.getValue()) {
                    String key = scalarText(t.getKeyNode());
                    if (key == null) {
                        error(t.getKeyNode(), path, "map keys must be scalars");
                        continue;
                    }
                    String entryPath = path + "[" + key + "]";
                    if (!keys.add(key)) {
                        error(t.getKeyNode(), entryPath, "duplicate key \"" + key + "\"");
                        continue;
                    }
                    Message.Builder entry = b.newBuilderForField(f);
                    Object k = mapKey(t.getKeyNode(), key, keyField, entryPath);
                    Object v = element(t.getValueNode(), valueField, entry, entryPath, depth + 1, "a map value");
                    if (k != null && v != null) {
                        entry.setField(keyField, k);
                        entry.setField(valueField, v);
                        b.addRepeatedField(f, entry.build());
                    }
                }
            } else if (f.isRepeated()) {
                if (!(node instanceof SequenceNode seq)) {
                    error(node, path, "expected a list, got " + describe(node));
                    return;
                }
                int i = 0;
                for (Node item : seq.getValue()) {
                    Object v = element(item, f, b, path + "[" + i++ + "]", depth + 1, "a list item");
                    if (v != null) {
                        b.addRepeatedField(f, v);
                    }
                }
            } else {
                Object v = single(node, f, b, path, depth);
                if (v != null) {
                    b.setField(f, v);
                }
            }
        }

        /** A list item or map value: null only where the type is {@code google.protobuf.Value}. */
        private Object element(Node node, FieldDescriptor f, Message.Builder parent, String path, int depth, String what) {
            if (isNull(node)) {
                count(depth);
                if (isValue(f)) {
                    return NULL_VALUE;
                }
                error(node, path, what + " cannot be null");
                return null;
            }
            return single(node, f, parent, path, depth);
        }

        /** Map keys are text in YAML as in JSON; a non-string key type reads it as that type. */
        private Object mapKey(Node node, String key, FieldDescriptor keyField, String path) {
            return switch (keyField.getJavaType()) {
                case STRING -> key;
                case BOOLEAN -> switch (key) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    default -> {
                        error(node, path, "map key must be true or false, got \"" + key + "\"");
                        yield null;
                    }
                };
                case INT, LONG -> decimalKey(node, key, keyField.getType(), path);
                default -> throw new IllegalStateException("protobuf has no " + keyField.getJavaType() + " map keys");
            };
        }

        /**
         * One value of {@code f}'s type, or null after reporting why it does not fit.
         * {@code parent} makes the builder of a nested message.
         */
        Object single(Node node, FieldDescriptor f, Message.Builder parent, String path, int depth) {
            count(depth);
            return switch (f.getJavaType()) {
                case MESSAGE -> wellKnownOrMessage(node, f, parent, path, depth);
                case ENUM -> enumValue(node, f.getEnumType(), path);
                case BOOLEAN -> bool(node, path);
                case INT, LONG -> wholeNumber(node, f.getType(), path);
                case FLOAT -> floatValue(node, path);
                case DOUBLE -> decimal(node, path);
                case STRING -> string(node, path);
                case BYTE_STRING -> bytes(node, path);
            };
        }

        Object wellKnownOrMessage(Node node, FieldDescriptor f, Message.Builder parent, String path, int depth) {
            return switch (f.getMessageType().getFullName()) {
                case "google.protobuf.Duration" -> {
                    String s = node instanceof ScalarNode ? scalarText(node) : null;
                    String seconds = s == null ? null : durationSeconds(s);
                    if (seconds != null) {
                        try {
                            yield Durations.parse(seconds);
                        } catch (ParseException e) {
                            // beyond Duration's range: reported below
                        }
                    }
                    error(node, path, "invalid duration " + describe(node)
                            + " (expected e.g. \"10s\", \"500ms\", \"5m\", \"1h30m\")");
                    yield null;
                }
                case "google.protobuf.Timestamp" -> {
                    String s = string(node, path);
                    try {
                        yield s == null ? null : Timestamps.parse(s);
                    } catch (ParseException e) {
                        error(node, path, "invalid timestamp \"" + s + "\" (expected RFC 3339, e.g. \"2026-01-01T00:00:00Z\")");
                        yield null;
                    }
                }
                case "google.protobuf.FieldMask" -> {
                    String s = string(node, path);
                    yield s == null ? null : FieldMaskUtil.fromJsonString(s);
                }
                case "google.protobuf.Struct" -> {
                    if (!(node instanceof MappingNode)) {
                        error(node, path, "expected an object, got " + describe(node));
                        yield null;
                    }
                    Value v = untyped(node, path, depth);
                    yield v == null ? null : v.getStructValue();
                }
                case "google.protobuf.ListValue" -> {
                    if (!(node instanceof SequenceNode)) {
                        error(node, path, "expected a list, got " + describe(node));
                        yield null;
                    }
                    Value v = untyped(node, path, depth);
                    yield v == null ? null : v.getListValue();
                }
                case "google.protobuf.Value" -> untyped(node, path, depth);
                case "google.protobuf.BoolValue" -> bool(node, path) instanceof Boolean v ? BoolValue.of(v) : null;
                case "google.protobuf.Int32Value" ->
                        wholeNumber(node, FieldDescriptor.Type.INT32, path) instanceof Integer v ? Int32Value.of(v) : null;
                case "google.protobuf.UInt32Value" ->
                        wholeNumber(node, FieldDescriptor.Type.UINT32, path) instanceof Integer v ? UInt32Value.of(v) : null;
                case "google.protobuf.Int64Value" ->
                        wholeNumber(node, FieldDescriptor.Type.INT64, path) instanceof Long v ? Int64Value.of(v) : null;
                case "google.protobuf.UInt64Value" ->
                        wholeNumber(node, FieldDescriptor.Type.UINT64, path) instanceof Long v ? UInt64Value.of(v) : null;
                case "google.protobuf.FloatValue" -> floatValue(node, path) instanceof Float v ? FloatValue.of(v) : null;
                case "google.protobuf.DoubleValue" -> decimal(node, path) instanceof Double v ? DoubleValue.of(v) : null;
                case "google.protobuf.StringValue" -> string(node, path) instanceof String v ? StringValue.of(v) : null;
                case "google.protobuf.BytesValue" -> bytes(node, path) instanceof ByteString v ? BytesValue.of(v) : null;
                case "google.protobuf.Any" -> {
                    error(node, path, "google.protobuf.Any fields are not supported here");
                    yield null;
                }
                default -> {
                    Message.Builder nested = parent.newBuilderForField(f);
                    message(node, nested, path, depth);
                    yield nested.build();
                }
            };
        }

        Object enumValue(Node node, EnumDescriptor type, String path) {
            String s = scalarText(node);
            if (!(node instanceof ScalarNode scalar) || s == null) {
                error(node, path, "expected one of " + enumNames(type) + ", got " + describe(node));
                return null;
            }
            if (scalar.getTag().equals(Tag.INT)) {
                try {
                    int number = Integer.parseInt(s);
                    EnumValueDescriptor v = type.isClosed() ? type.findValueByNumber(number)
                            : type.findValueByNumberCreatingIfUnknown(number);
                    if (v != null) {
                        return v;
                    }
                } catch (NumberFormatException e) {
                    // fall through to the name check and its error
                }
            }
            EnumValueDescriptor v = type.findValueByName(s);
            if (v == null) {
                error(node, path, "unknown value \"" + s + "\", expected one of " + enumNames(type));
            }
            return v;
        }

        private static String enumNames(EnumDescriptor type) {
            return type.getValues().stream().map(EnumValueDescriptor::getName).toList().toString();
        }

        Object bool(Node node, String path) {
            if (node instanceof ScalarNode s && s.getTag().equals(Tag.BOOL)) {
                return parseBool(s.getValue());
            }
            if (node instanceof ScalarNode s && (s.getValue().equals("true") || s.getValue().equals("false"))) {
                return Boolean.parseBoolean(s.getValue()); // quoted "true"
            }
            error(node, path, "expected true or false, got " + describe(node));
            return null;
        }

        /** A whole number of a protobuf integer type, as the Java value protobuf stores for it (unsigned as bits). */
        Object wholeNumber(Node node, FieldDescriptor.Type type, String path) {
            BigInteger v = node instanceof ScalarNode s ? parseInteger(s.getValue()) : null;
            if (v == null) {
                error(node, path, "expected a whole number, got " + describe(node));
                return null;
            }
            return inRange(node, v, type, path);
        }

        /** An integer map key: map keys are text, read as plain decimal (as protobuf's JSON reading does). */
        private Object decimalKey(Node node, String text, FieldDescriptor.Type type, String path) {
            BigInteger v;
            try {
                v = text.matches("[-+]?\\d+") ? new BigInteger(text) : null;
            } catch (NumberFormatException e) {
                v = null;
            }
            if (v == null) {
                error(node, path, "map key must be a whole number, got \"" + text + "\"");
                return null;
            }
            return inRange(node, v, type, path);
        }

        private Object inRange(Node node, BigInteger v, FieldDescriptor.Type type, String path) {
            BigInteger min;
            BigInteger max;
            boolean wide;
            switch (type) {
                case INT32, SINT32, SFIXED32 -> {
                    min = BigInteger.valueOf(Integer.MIN_VALUE);
                    max = BigInteger.valueOf(Integer.MAX_VALUE);
                    wide = false;
                }
                case UINT32, FIXED32 -> {
                    min = BigInteger.ZERO;
                    max = BigInteger.valueOf(0xFFFFFFFFL);
                    wide = false;
                }
                case UINT64, FIXED64 -> {
                    min = BigInteger.ZERO;
                    max = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
                    wide = true;
                }
                default -> {
                    min = BigInteger.valueOf(Long.MIN_VALUE);
                    max = BigInteger.valueOf(Long.MAX_VALUE);
                    wide = true;
                }
            }
            if (v.compareTo(min) < 0 || v.compareTo(max) > 0) {
                error(node, path, "number " + v + " is out of range [" + min + ", " + max + "]");
                return null;
            }
            return wide ? (Object) v.longValue() : (Object) v.intValue();
        }

        Object floatValue(Node node, String path) {
            if (!(decimal(node, path) instanceof Double d)) {
                return null;
            }
            if (Double.isFinite(d) && Math.abs(d) > Float.MAX_VALUE) {
                error(node, path, "number " + scalarText(node) + " is out of range for a float");
                return null;
            }
            return d.floatValue();
        }

        Object decimal(Node node, String path) {
            if (node instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.FLOAT)
                    || s.getTag().equals(Tag.STR))) {
                String v = s.getValue().replace("_", "");
                try {
                    double d = switch (v.toLowerCase(Locale.ROOT)) {
                        case ".inf", "+.inf", "infinity" -> Double.POSITIVE_INFINITY;
                        case "-.inf", "-infinity" -> Double.NEGATIVE_INFINITY;
                        case ".nan", "nan" -> Double.NaN;
                        default -> new BigDecimal(v).doubleValue();
                    };
                    if (Double.isInfinite(d) && !v.toLowerCase(Locale.ROOT).contains("inf")) {
                        error(node, path, "number " + v + " is out of range for a double");
                        return null;
                    }
                    return d;
                } catch (NumberFormatException e) {
                    // reported below
                }
            }
            error(node, path, "expected a number, got " + describe(node));
            return null;
        }

        String string(Node node, String path) {
            if (node instanceof ScalarNode s && (s.getTag().equals(Tag.STR) || s.getTag().equals(Tag.TIMESTAMP)
                    || s.getTag().equals(Tag.BINARY))) {
                return s.getValue();
            }
            error(node, path, "expected a string, got " + describe(node)
                    + (node instanceof ScalarNode ? " (quote it to make it a string)" : ""));
            return null;
        }

        /** Bytes are base64 text, as in protobuf's JSON (standard or URL-safe alphabet). */
        Object bytes(Node node, String path) {
            String s = string(node, path);
            if (s == null) {
                return null;
            }
            String text = s.replace("\r", "").replace("\n", ""); // line breaks only, as Go's decoder
            try {
                return ByteString.copyFrom(Base64.getDecoder().decode(text));
            } catch (IllegalArgumentException e) {
                try {
                    return ByteString.copyFrom(Base64.getUrlDecoder().decode(text));
                } catch (IllegalArgumentException e2) {
                    error(node, path, "expected base64 text, got " + describe(node));
                    return null;
                }
            }
        }

        /** Schema-less content (Struct, Value, ListValue): numbers become doubles, as in protobuf's JSON. */
        Value untyped(Node node, String path, int depth) {
            count(depth);
            if (node instanceof MappingNode map) {
                Struct.Builder struct = Struct.newBuilder();
                Set<String> keys = new HashSet<>();
                for (NodeTuple t : map.getValue()) {
                    String key = scalarText(t.getKeyNode());
                    if (key == null) {
                        error(t.getKeyNode(), path, "keys must be scalars");
                        continue;
                    }
                    String keyPath = path.isEmpty() ? key : path + "." + key;
                    if (!keys.add(key)) {
                        error(t.getKeyNode(), keyPath, "duplicate key \"" + key + "\"");
                        continue;
                    }
                    Value v = untyped(t.getValueNode(), keyPath, depth + 1);
                    if (v != null) {
                        struct.putFields(key, v);
                    }
                }
                return Value.newBuilder().setStructValue(struct).build();
            }
            if (node instanceof SequenceNode seq) {
                ListValue.Builder list = ListValue.newBuilder();
                int i = 0;
                for (Node item : seq.getValue()) {
                    Value v = untyped(item, path + "[" + i++ + "]", depth + 1);
                    if (v != null) {
                        list.addValues(v);
                    }
                }
                return Value.newBuilder().setListValue(list).build();
            }
            ScalarNode s = (ScalarNode) node;
            Tag tag = s.getTag();
            if (tag.equals(Tag.NULL)) {
                return NULL_VALUE;
            }
            if (tag.equals(Tag.BOOL)) {
                return Value.newBuilder().setBoolValue(parseBool(s.getValue())).build();
            }
            if (tag.equals(Tag.INT) && parseInteger(s.getValue()) instanceof BigInteger i) {
                return Value.newBuilder().setNumberValue(i.doubleValue()).build();
            }
            if (tag.equals(Tag.FLOAT)) {
                try {
                    return Value.newBuilder().setNumberValue(new BigDecimal(s.getValue().replace("_", "")).doubleValue())
                            .build();
                } catch (NumberFormatException e) {
                    // .inf / .nan have no JSON number form: kept as their text
                }
            }
            return Value.newBuilder().setStringValue(s.getValue()).build();
        }
    }

    private static final Value NULL_VALUE = Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();

    private static boolean isValue(FieldDescriptor f) {
        return f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
                && f.getMessageType().getFullName().equals("google.protobuf.Value");
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
            Duration d = GoDuration.parse(text);
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
        return switch (v.toLowerCase(Locale.ROOT)) {
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
