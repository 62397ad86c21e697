package io.meshpilot.config;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

/**
 * Renders configs as Kubernetes objects (apiVersion, kind, metadata, spec, status), the
 * shape istiod's /debug/configz and kubectl show: spec in protobuf JSON with Istio's field
 * names.
 */
public final class ConfigJson {
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();

    private ConfigJson() {
    }

    public static JsonObject toJson(Config c) {
        JsonObject o = new JsonObject();
        o.addProperty("apiVersion", c.gvk().apiVersion());
        o.addProperty("kind", c.gvk().kind());
        JsonObject meta = new JsonObject();
        meta.addProperty("name", c.name());
        if (!c.namespace().isEmpty()) {
            meta.addProperty("namespace", c.namespace());
        }
        if (!c.labels().isEmpty()) {
            meta.add("labels", map(c.labels()));
        }
        if (!c.annotations().isEmpty()) {
            meta.add("annotations", map(c.annotations()));
        }
        if (!c.resourceVersion().isEmpty()) {
            meta.addProperty("resourceVersion", c.resourceVersion());
        }
        if (c.generation() > 0) {
            meta.addProperty("generation", c.generation());
        }
        if (c.creationTimestamp() != null) {
            meta.addProperty("creationTimestamp", c.creationTimestamp().truncatedTo(ChronoUnit.SECONDS)
                    .toString());
        }
        o.add("metadata", meta);
        try {
            o.add("spec", JsonParser.parseString(PRINTER.print(c.spec())));
            if (c.status().getFieldsCount() > 0) {
                o.add("status", JsonParser.parseString(PRINTER.print(c.status())));
            }
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("spec of " + c.key() + " cannot be printed", e); // no Any fields: cannot happen
        }
        return o;
    }

    public static JsonArray toJson(Collection<Config> configs) {
        JsonArray a = new JsonArray();
        configs.forEach(c -> a.add(toJson(c)));
        return a;
    }

    private static JsonObject map(Map<String, String> m) {
        JsonObject o = new JsonObject();
        new TreeMap<>(m).forEach(o::addProperty);
        return o;
    }
}
