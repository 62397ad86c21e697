package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.config.Config;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's model structs as Go's encoding/json writes them, for the debug endpoints that dump
 * them: Istio API messages as protobuf JSON (istio.io/api's generated MarshalJSON), Go fields
 * without json tags under their Go names, nil maps and slices as {@code null}.
 */
final class IstioModelJson {
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();
    /** Go's zero time.Time, which encoding/json writes even with omitempty. */
    private static final String ZERO_TIME = "0001-01-01T00:00:00Z";

    private IstioModelJson() {
    }

    /** An Istio API message, or {@code null} for a nil pointer. */
    static JsonElement message(Message m) {
        if (m == null) {
            return JsonNull.INSTANCE;
        }
        try {
            return JsonParser.parseString(PRINTER.print(m));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print " + m.getDescriptorForType().getFullName(), e);
        }
    }

    /** A Go {@code map[string]string}: {@code null} when empty (nil in istiod's model). */
    static JsonElement stringMap(Map<String, String> m) {
        return m == null || m.isEmpty() ? JsonNull.INSTANCE : RegistryJson.map(new TreeMap<>(m));
    }

    /** types.NamespacedName: no json tags, so {@code Namespace} and {@code Name}; both "" for the zero value. */
    static JsonObject namespacedName(Config c) {
        JsonObject o = new JsonObject();
        o.addProperty("Namespace", c == null ? "" : c.namespace());
        o.addProperty("Name", c == null ? "" : c.name());
        return o;
    }

    /**
     * config.Config (pkg/config/model.go): Meta's json-tagged fields promoted, then Spec,
     * Status and Extra under their Go names.
     */
    static JsonObject config(Config c) {
        JsonObject o = new JsonObject();
        JsonObject type = new JsonObject();
        type.addProperty("group", c.gvk().group());
        type.addProperty("version", c.gvk().version());
        type.addProperty("kind", c.gvk().kind());
        o.add("type", type);
        o.addProperty("name", c.name());
        o.addProperty("namespace", c.namespace());
        if (!c.labels().isEmpty()) {
            o.add("labels", stringMap(c.labels()));
        }
        if (!c.annotations().isEmpty()) {
            o.add("annotations", stringMap(c.annotations()));
        }
        if (c.resourceVersion() != null && !c.resourceVersion().isEmpty()) {
            o.addProperty("resourceVersion", c.resourceVersion());
        }
        o.addProperty("creationTimestamp", c.creationTimestamp() == null ? ZERO_TIME : c.creationTimestamp().toString());
        if (c.generation() != 0) {
            o.addProperty("generation", c.generation());
        }
        o.add("Spec", message(c.spec()));
        o.add("Status", c.status() == null ? JsonNull.INSTANCE : message(c.status()));
        o.add("Extra", JsonNull.INSTANCE);
        return o;
    }

    /** model.AuthorizationPolicy / model.Telemetry: {@code name}, {@code namespace}, ({@code annotations}), {@code spec}. */
    static JsonObject policy(Config c, boolean withAnnotations) {
        JsonObject o = new JsonObject();
        o.addProperty("name", c.name());
        o.addProperty("namespace", c.namespace());
        if (withAnnotations) {
            o.add("annotations", stringMap(c.annotations()));
        }
        o.add("spec", message(c.spec()));
        return o;
    }

    static JsonArray array(Iterable<? extends JsonElement> items) {
        JsonArray a = new JsonArray();
        items.forEach(a::add);
        return a;
    }
}
