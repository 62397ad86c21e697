package io.meshpilot.config.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigJson;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.FieldValidation;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;

/**
 * Istio objects as the API server holds them (JSON) and as MeshPilot serves them
 * ({@link Config}): read through the same parser and validation as files, so an object
 * is accepted or rejected from the cluster exactly as it would be from --configDir.
 */
final class KubeObjects {
    private KubeObjects() {
    }

    /** What one API server object turned into: a config, or the reasons it is not served. */
    record Read(Config config, List<DocumentError> errors) {
        boolean valid() {
            return config != null;
        }
    }

    /**
     * Parses and validates an object from the API server; the config carries the server's
     * resourceVersion, generation and creation time. Unknown fields are left out (istiod
     * reads stored config leniently).
     */
    static Read read(ConfigParser parser, String source, DynamicKubernetesObject object) {
        JsonObject raw = object.getRaw();
        ConfigParser.Result r = parser.parse(source, raw.toString(), FieldValidation.WARN);
        if (!r.errors().isEmpty() || r.configs().size() != 1) {
            // the object is one JSON line: a line number would say nothing
            List<DocumentError> errors = r.errors().isEmpty()
                    ? List.of(new DocumentError(source, 0, 0, object.getKind(), namespace(object), name(object), "",
                            "not an Istio config object (" + r.skipped().size() + " skipped)"))
                    : r.errors().stream().map(e -> new DocumentError(e.source(), e.document(), 0, e.kind(), e.namespace(),
                            e.name(), e.path(), e.reason())).toList();
            return new Read(null, errors);
        }
        JsonObject meta = raw.has("metadata") && raw.get("metadata").isJsonObject() ? raw.getAsJsonObject("metadata")
                : new JsonObject();
        Config c = r.configs().get(0);
        return new Read(c.withMeta(string(meta, "resourceVersion"), number(meta, "generation"),
                instant(meta, "creationTimestamp")), List.of());
    }

    /**
     * The object to send for a create or update, as {@code group/version}: metadata the
     * caller may set (name, namespace, labels, annotations, resourceVersion) and the spec;
     * status is written through the status subresource only.
     */
    static DynamicKubernetesObject toObject(Config c, String version) {
        JsonObject o = ConfigJson.toJson(c.withStatus(null));
        o.addProperty("apiVersion", c.gvk().group() + "/" + version);
        JsonObject meta = o.getAsJsonObject("metadata");
        meta.remove("generation");
        meta.remove("creationTimestamp");
        return new DynamicKubernetesObject(o);
    }

    static String name(DynamicKubernetesObject o) {
        return o.getMetadata() == null || o.getMetadata().getName() == null ? "" : o.getMetadata().getName();
    }

    static String namespace(DynamicKubernetesObject o) {
        return o.getMetadata() == null || o.getMetadata().getNamespace() == null ? "" : o.getMetadata().getNamespace();
    }

    /** Its labels; null when it has none. */
    static Map<String, String> labels(DynamicKubernetesObject o) {
        return o.getMetadata() == null ? null : o.getMetadata().getLabels();
    }

    static String resourceVersion(DynamicKubernetesObject o) {
        return o.getMetadata() == null || o.getMetadata().getResourceVersion() == null ? ""
                : o.getMetadata().getResourceVersion();
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    private static long number(JsonObject o, String field) {
        JsonElement e = o.get(field);
        try {
            return e != null && e.isJsonPrimitive() ? e.getAsLong() : 0;
        } catch (NumberFormatException ex) {
            return 0;
        }
    }

    private static Instant instant(JsonObject o, String field) {
        String s = string(o, field);
        try {
            return s.isEmpty() ? null : Instant.parse(s);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
