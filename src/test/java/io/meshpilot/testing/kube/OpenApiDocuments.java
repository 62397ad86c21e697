package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code /openapi/v3}: the index of group versions and, per group version, one PATCH operation
 * per resource tagged with its group/version/kind and the {@code fieldValidation} query
 * parameter. That is what kubectl (1.27 and later) reads to decide that the server validates
 * fields itself, so {@code kubectl apply} works with its default {@code --validate=strict}
 * without the (very large) schema documents. No schemas are served: kubectl then computes its
 * strategic merge patches from the types compiled into it, as it does for any server whose
 * OpenAPI lacks them.
 */
final class OpenApiDocuments {
    private static final String VERSION = "v1.32.0";
    private final ResourceCatalog catalog;

    OpenApiDocuments(ResourceCatalog catalog) {
        this.catalog = catalog;
    }

    JsonObject index() {
        JsonObject paths = new JsonObject();
        for (Map.Entry<String, List<ResourceType>> gv : catalog.typesByGroupVersion().entrySet()) {
            String path = gv.getKey().contains("/") ? "apis/" + gv.getKey() : "api/" + gv.getKey();
            JsonObject entry = new JsonObject();
            entry.addProperty("serverRelativeURL", "/openapi/v3/" + path + "?hash=" + hash(document(gv.getValue())));
            paths.add(path, entry);
        }
        JsonObject o = new JsonObject();
        o.add("paths", paths);
        return o;
    }

    /** The document of {@code api/v1} or {@code apis/<group>/<version>}, if served. */
    Optional<JsonObject> groupVersion(String path) {
        String gv = path.startsWith("api/") ? path.substring("api/".length()) : path.substring("apis/".length());
        List<ResourceType> types = catalog.typesByGroupVersion().get(gv);
        return types == null ? Optional.empty() : Optional.of(document(types));
    }

    private static JsonObject document(List<ResourceType> types) {
        JsonObject paths = new JsonObject();
        for (ResourceType t : types) {
            String collection = t.groupVersionPath() + (t.namespaced() ? "/namespaces/{namespace}/" : "/") + t.plural();
            JsonObject item = new JsonObject();
            item.add("patch", patchOperation(t));
            paths.add(collection + "/{name}", item);
        }
        JsonObject info = new JsonObject();
        info.addProperty("title", "Kubernetes");
        info.addProperty("version", VERSION);
        JsonObject components = new JsonObject();
        components.add("schemas", new JsonObject());
        JsonObject doc = new JsonObject();
        doc.addProperty("openapi", "3.0.0");
        doc.add("info", info);
        doc.add("paths", paths);
        doc.add("components", components);
        return doc;
    }

    private static JsonObject patchOperation(ResourceType t) {
        JsonObject gvk = new JsonObject();
        gvk.addProperty("group", t.group());
        gvk.addProperty("version", t.version());
        gvk.addProperty("kind", t.kind());
        JsonArray parameters = new JsonArray();
        for (String name : List.of("dryRun", "fieldManager", "fieldValidation", "force")) {
            JsonObject p = new JsonObject();
            p.addProperty("name", name);
            p.addProperty("in", "query");
            JsonObject schema = new JsonObject();
            schema.addProperty("type", name.equals("force") ? "boolean" : "string");
            p.add("schema", schema);
            parameters.add(p);
        }
        JsonObject ok = new JsonObject();
        ok.addProperty("description", "OK");
        JsonObject responses = new JsonObject();
        responses.add("200", ok);
        JsonObject op = new JsonObject();
        op.addProperty("operationId", "patch" + t.kind());
        op.add("parameters", parameters);
        op.add("responses", responses);
        op.add("x-kubernetes-group-version-kind", gvk);
        op.addProperty("x-kubernetes-action", "patch");
        return op;
    }

    private static String hash(JsonObject doc) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(doc.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16).toUpperCase(Locale.ROOT);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Swagger 2.0 with only its info: as JSON. */
    static JsonObject emptySwagger() {
        JsonObject info = new JsonObject();
        info.addProperty("title", "Kubernetes");
        info.addProperty("version", VERSION);
        JsonObject doc = new JsonObject();
        doc.addProperty("swagger", "2.0");
        doc.add("info", info);
        doc.add("paths", new JsonObject());
        return doc;
    }

    /**
     * The same as gnostic's {@code openapi.v2.Document} protobuf: field 1 {@code swagger},
     * field 2 {@code info} (field 1 title, field 2 version). Short strings only, so every
     * length fits in one varint byte.
     */
    static byte[] emptySwaggerProtobuf() {
        ByteArrayOutputStream info = new ByteArrayOutputStream();
        field(info, 1, "Kubernetes".getBytes(StandardCharsets.UTF_8));
        field(info, 2, VERSION.getBytes(StandardCharsets.UTF_8));
        ByteArrayOutputStream doc = new ByteArrayOutputStream();
        field(doc, 1, "2.0".getBytes(StandardCharsets.UTF_8));
        field(doc, 2, info.toByteArray());
        return doc.toByteArray();
    }

    private static void field(ByteArrayOutputStream out, int number, byte[] value) {
        out.write(number << 3 | 2);
        out.write(value.length);
        out.writeBytes(value);
    }

    static JsonObject version() {
        JsonObject v = new JsonObject();
        v.addProperty("major", "1");
        v.addProperty("minor", "32");
        v.addProperty("gitVersion", VERSION);
        v.addProperty("gitCommit", "meshpilot-standin");
        v.addProperty("gitTreeState", "clean");
        v.addProperty("buildDate", "2026-01-01T00:00:00Z");
        v.addProperty("goVersion", "go1.23");
        v.addProperty("compiler", "gc");
        v.addProperty("platform", "linux/amd64");
        return v;
    }
}
