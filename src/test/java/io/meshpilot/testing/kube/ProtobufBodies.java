package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Admissionregistration;
import io.kubernetes.client.proto.V1Apps;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Request bodies in Kubernetes' protobuf encoding ({@code application/vnd.kubernetes.protobuf}),
 * which kubectl's typed clients send for built-in kinds ({@code kubectl create namespace},
 * {@code kubectl create configmap} ...), read into the JSON the store keeps. The message types
 * come from the official client's generated protos ({@code client-java-proto}); the envelope is
 * the 4-byte {@code k8s\0} magic and a {@code runtime.Unknown} carrying the type and the raw
 * message. Answers stay JSON, which those clients accept too.
 */
final class ProtobufBodies {
    private static final byte[] MAGIC = {'k', '8', 's', 0};
    /** apiVersion -> the generated file holding its messages. */
    private static final Map<String, Descriptors.FileDescriptor> FILES = Map.of(
            "v1", V1.getDescriptor(),
            "apps/v1", V1Apps.getDescriptor(),
            "admissionregistration.k8s.io/v1", V1Admissionregistration.getDescriptor());

    private ProtobufBodies() {
    }

    static JsonObject decode(byte[] body) {
        if (body.length < MAGIC.length || !Arrays.equals(Arrays.copyOf(body, MAGIC.length), MAGIC)) {
            throw ApiError.badRequest("a protobuf body must start with the k8s\\0 magic");
        }
        try {
            Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(body, MAGIC.length, body.length));
            String apiVersion = unknown.getTypeMeta().getApiVersion();
            String kind = unknown.getTypeMeta().getKind();
            Descriptors.Descriptor type = Optional.ofNullable(FILES.get(apiVersion))
                    .map(f -> f.findMessageTypeByName(kind))
                    .orElseThrow(() -> ApiError.unsupportedMediaType("application/vnd.kubernetes.protobuf for " + kind
                            + " in " + apiVersion));
            JsonObject o = (JsonObject) toJson(DynamicMessage.parseFrom(type, unknown.getRaw()));
            o.addProperty("apiVersion", apiVersion);
            o.addProperty("kind", kind);
            return o;
        } catch (InvalidProtocolBufferException e) {
            throw ApiError.badRequest("the protobuf body cannot be read: " + e.getMessage());
        }
    }

    private static JsonElement toJson(Message m) {
        Descriptors.Descriptor d = m.getDescriptorForType();
        boolean apimachinery = d.getFullName().contains("apimachinery");
        if (apimachinery) {
            switch (d.getName()) {
                case "Time", "MicroTime" -> {
                    long seconds = ((Number) field(m, "seconds")).longValue();
                    int nanos = ((Number) field(m, "nanos")).intValue();
                    return new JsonPrimitive(Instant.ofEpochSecond(seconds, d.getName().equals("Time") ? 0 : nanos)
                            .toString());
                }
                case "IntOrString" -> {
                    return ((Number) field(m, "type")).longValue() == 1
                            ? new JsonPrimitive((String) field(m, "strVal"))
                            : new JsonPrimitive((Number) field(m, "intVal"));
                }
                case "Quantity" -> {
                    return new JsonPrimitive((String) field(m, "string"));
                }
                case "RawExtension" -> {
                    ByteString raw = (ByteString) field(m, "raw");
                    return raw.isEmpty() ? JsonNull.INSTANCE : Json.parse(raw.toStringUtf8());
                }
                default -> {
                    // an ordinary message
                }
            }
        }
        JsonObject o = new JsonObject();
        for (Map.Entry<Descriptors.FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
            Descriptors.FieldDescriptor f = e.getKey();
            if (f.isMapField()) {
                JsonObject map = new JsonObject();
                for (Object entry : (List<?>) e.getValue()) {
                    Message kv = (Message) entry;
                    Descriptors.Descriptor entryType = kv.getDescriptorForType();
                    map.add(String.valueOf(kv.getField(entryType.findFieldByName("key"))),
                            value(entryType.findFieldByName("value"), kv.getField(entryType.findFieldByName("value"))));
                }
                o.add(f.getJsonName(), map);
            } else if (f.isRepeated()) {
                JsonArray array = new JsonArray();
                for (Object item : (List<?>) e.getValue()) {
                    array.add(value(f, item));
                }
                o.add(f.getJsonName(), array);
            } else if (!"".equals(e.getValue())) {
                // Go writes every string of a proto2 message, empty or not; its JSON leaves empty ones out
                o.add(f.getJsonName(), value(f, e.getValue()));
            }
        }
        return o;
    }

    private static Object field(Message m, String name) {
        return m.getField(m.getDescriptorForType().findFieldByName(name));
    }

    private static JsonElement value(Descriptors.FieldDescriptor f, Object v) {
        return switch (f.getJavaType()) {
            case MESSAGE -> toJson((Message) v);
            case BYTE_STRING -> new JsonPrimitive(Base64.getEncoder().encodeToString(((ByteString) v).toByteArray()));
            case STRING -> new JsonPrimitive((String) v);
            case BOOLEAN -> new JsonPrimitive((Boolean) v);
            case INT, LONG, FLOAT, DOUBLE -> new JsonPrimitive((Number) v);
            case ENUM -> new JsonPrimitive(((Descriptors.EnumValueDescriptor) v).getName());
        };
    }

    static boolean isProtobuf(String contentType) {
        return contentType != null && contentType.startsWith("application/vnd.kubernetes.protobuf");
    }
}
