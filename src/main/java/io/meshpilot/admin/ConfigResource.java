package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.util.RequestBodies;
import io.meshpilot.config.Config;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.ConfigJson;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.FieldValidation;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.xds.DiscoveryServer;
import io.meshpilot.xds.DistributionStatus;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Istio config over REST: list, get, create-or-replace (PUT) and delete, with Kubernetes
 * object JSON (or YAML) bodies. Writes go to the writable store after istiod's validation
 * and are on disk when acknowledged: 422 with field errors when invalid, 409 on a stale
 * resourceVersion or when a file owns the object, 404 for a PUT naming a resourceVersion of
 * an object that does not exist (any more), 413 for a body past 8 MiB or an object too big to
 * be loaded back from its state file. Unknown fields follow
 * {@code ?fieldValidation=} (Kubernetes' Strict, Warn, Ignore).
 * {@code /api/v1/config-errors} lists what is not served and why (--configDir, --configStateDir,
 * the cluster's CRDs),
 * {@code /api/v1/config-warnings} the warnings about what loaded.
 */
@ApplicationScoped
@Path("/api/v1")
public class ConfigResource {
    @Inject
    ConfigController controller;

    @Inject
    DiscoveryServer xds;

    @GET
    @Path("configs")
    @Produces(MediaType.APPLICATION_JSON)
    public Response list(@QueryParam("kind") String kind, @QueryParam("namespace") String namespace) {
        JsonArray out = new JsonArray();
        for (Schema s : controller.schemas().all()) {
            if (kind != null && !kind.isEmpty() && !s.kind().equalsIgnoreCase(kind) && !s.plural().equalsIgnoreCase(kind)) {
                continue;
            }
            for (Config c : controller.store().list(s.kind(), namespace)) {
                out.add(withSource(c));
            }
        }
        if (kind != null && !kind.isEmpty() && controller.schemas().all().stream()
                .noneMatch(s -> s.kind().equalsIgnoreCase(kind) || s.plural().equalsIgnoreCase(kind))) {
            return error(Response.Status.BAD_REQUEST, "unknown kind \"" + kind + "\"", List.of());
        }
        return json(Response.Status.OK, out.toString());
    }

    @GET
    @Path("configs/{group}/{version}/{kind}/{namespace}/{name}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response get(@PathParam("group") String group, @PathParam("version") String version,
                        @PathParam("kind") String kind, @PathParam("namespace") String namespace,
                        @PathParam("name") String name) {
        Optional<Schema> schema = schema(group, version, kind);
        if (schema.isEmpty()) {
            return unknownType(group, version, kind);
        }
        return controller.store().get(schema.get().kind(), namespace, name)
                .map(c -> json(Response.Status.OK, withSource(c).toString()))
                .orElseGet(() -> error(Response.Status.NOT_FOUND,
                        schema.get().kind() + "/" + namespace + "/" + name + " not found", List.of()));
    }

    @PUT
    @Path("configs/{group}/{version}/{kind}/{namespace}/{name}")
    @Consumes({MediaType.APPLICATION_JSON, "application/yaml", "application/x-yaml", MediaType.TEXT_PLAIN})
    @Produces(MediaType.APPLICATION_JSON)
    public Response put(@PathParam("group") String group, @PathParam("version") String version,
                        @PathParam("kind") String kind, @PathParam("namespace") String namespace,
                        @PathParam("name") String name, @QueryParam("fieldValidation") String fieldValidation,
                        InputStream bodyStream) {
        Optional<Schema> schema = schema(group, version, kind);
        if (schema.isEmpty()) {
            return unknownType(group, version, kind);
        }
        FieldValidation fields;
        try {
            fields = FieldValidation.parse(fieldValidation);
        } catch (IllegalArgumentException e) {
            return error(Response.Status.BAD_REQUEST, e.getMessage(), List.of());
        }
        String body;
        try {
            body = RequestBodies.readUtf8(bodyStream, HttpLimits.MAX_REQUEST_BODY);
        } catch (RequestBodies.TooLarge e) {
            return error(413, e.getMessage(), List.of());
        } catch (RequestBodies.InvalidUtf8 e) {
            return error(Response.Status.BAD_REQUEST, "request body: " + e.getMessage(), List.of());
        }
        ConfigParser.Result parsed = controller.parser().parse("request body", body == null ? "" : body, fields);
        List<DocumentError> errs = new ArrayList<>(parsed.errors());
        if (errs.isEmpty() && parsed.configs().size() != 1) {
            return error(Response.Status.BAD_REQUEST, "the body must be exactly one " + schema.get().kind()
                    + " object (found " + parsed.configs().size() + ", skipped " + parsed.skipped().size() + ")", List.of());
        }
        if (!errs.isEmpty()) {
            return error(422, "invalid " + schema.get().kind(), errs);
        }
        Config c = parsed.configs().get(0);
        if (!c.gvk().kind().equals(schema.get().kind()) || !c.name().equals(name) || !c.namespace().equals(namespace)) {
            return error(Response.Status.BAD_REQUEST, "the body is " + c.key() + ", the path names "
                    + schema.get().kind() + "/" + namespace + "/" + name, List.of());
        }
        String resourceVersion = resourceVersion(body);
        ConfigStore store = controller.store();
        try {
            boolean exists = store.get(c.gvk().kind(), namespace, name).isPresent();
            // A resourceVersion says "replace the version I read": an update, never a create. The
            // API server answers an update of a missing custom resource with 404 (CRDs do not
            // create on update), so a deleted object is not brought back by a stale client.
            boolean update = exists || !resourceVersion.isEmpty();
            Config stored = update ? store.update(c.withResourceVersion(resourceVersion)) : store.create(c);
            Response.ResponseBuilder ok = Response.status(exists ? Response.Status.OK : Response.Status.CREATED)
                    .type(MediaType.APPLICATION_JSON).entity(withSource(stored).toString());
            // accepted with warnings (unknown fields left out, istiod's validation warnings): one
            // Kubernetes Warning header each, as the API server and istiod's webhook send them
            for (DocumentError w : parsed.warnings()) {
                ok.header("Warning", warningHeader(w));
            }
            return ok.build();
        } catch (ConfigStoreException e) {
            return storeError(e);
        }
    }

    @DELETE
    @Path("configs/{group}/{version}/{kind}/{namespace}/{name}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response delete(@PathParam("group") String group, @PathParam("version") String version,
                           @PathParam("kind") String kind, @PathParam("namespace") String namespace,
                           @PathParam("name") String name, @QueryParam("resourceVersion") String resourceVersion) {
        Optional<Schema> schema = schema(group, version, kind);
        if (schema.isEmpty()) {
            return unknownType(group, version, kind);
        }
        try {
            Optional<Config> old = controller.store().get(schema.get().kind(), namespace, name);
            controller.store().delete(schema.get().kind(), namespace, name, resourceVersion);
            return json(Response.Status.OK, withSource(old.orElseThrow()).toString());
        } catch (ConfigStoreException e) {
            return storeError(e);
        }
    }

    /** Has this object reached the proxies? Per connected proxy: ACKED, PENDING or NACKED (with the error). */
    @GET
    @Path("configs/{group}/{version}/{kind}/{namespace}/{name}/status")
    @Produces(MediaType.APPLICATION_JSON)
    public Response status(@PathParam("group") String group, @PathParam("version") String version,
                           @PathParam("kind") String kind, @PathParam("namespace") String namespace,
                           @PathParam("name") String name) {
        Optional<Schema> schema = schema(group, version, kind);
        if (schema.isEmpty()) {
            return unknownType(group, version, kind);
        }
        Optional<Config> config = controller.store().get(schema.get().kind(), namespace, name);
        if (config.isEmpty()) {
            return error(Response.Status.NOT_FOUND, schema.get().kind() + "/" + namespace + "/" + name + " not found",
                    List.of());
        }
        DistributionStatus st = xds.status(config.get());
        JsonObject o = new JsonObject();
        o.addProperty("config", st.config());
        o.addProperty("resourceVersion", st.resourceVersion());
        o.addProperty("pushVersion", st.pushVersion());
        o.addProperty("proxies", st.proxies().size());
        o.addProperty("acked", st.count("ACKED"));
        o.addProperty("pending", st.count("PENDING"));
        JsonArray nacked = new JsonArray();
        JsonArray details = new JsonArray();
        for (var p : st.proxies()) {
            JsonObject d = new JsonObject();
            d.addProperty("proxy", p.proxy());
            d.addProperty("connection", p.connection());
            d.addProperty("state", p.state());
            if (!p.error().isEmpty()) {
                d.addProperty("error", p.error());
                nacked.add(d);
            }
            details.add(d);
        }
        o.add("nacked", nacked);
        o.add("details", details);
        return json(Response.Status.OK, o.toString());
    }

    @GET
    @Path("config-errors")
    @Produces(MediaType.APPLICATION_JSON)
    public List<DocumentError> configErrors() {
        return controller.errors();
    }

    @GET
    @Path("config-warnings")
    @Produces(MediaType.APPLICATION_JSON)
    public List<DocumentError> configWarnings() {
        return controller.warnings();
    }

    /** RFC 7234 warn-value: code 299, agent "-", the text as a quoted-string (quotes and backslashes escaped). */
    static String warningHeader(DocumentError w) {
        String text = (w.path().isEmpty() ? "" : w.path() + ": ") + w.reason();
        StringBuilder sb = new StringBuilder("299 - \"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else {
                sb.append(c < 0x20 ? ' ' : c > 0x7e ? '?' : c); // header values are visible ASCII
            }
        }
        return sb.append('"').toString();
    }

    private Optional<Schema> schema(String group, String version, String kind) {
        return controller.schemas().forName(group, kind).filter(s -> s.serves(version));
    }

    private JsonObject withSource(Config c) {
        JsonObject o = ConfigJson.toJson(c);
        if (controller.files() != null) {
            controller.files().sourceOf(c.key()).ifPresent(f -> o.addProperty("source", "file:" + f));
        }
        if (!o.has("source")) {
            o.addProperty("source", "api");
        }
        return o;
    }

    /** metadata.resourceVersion of the body, for optimistic concurrency ("" when absent). */
    private static String resourceVersion(String body) {
        try {
            for (var doc : SafeYaml.documents("body", body)) {
                if (doc instanceof MappingNode m) {
                    for (var t : m.getValue()) {
                        if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("metadata")
                                && t.getValueNode() instanceof MappingNode meta) {
                            for (var mt : meta.getValue()) {
                                if (mt.getKeyNode() instanceof ScalarNode mk
                                        && mk.getValue().equals("resourceVersion")
                                        && mt.getValueNode() instanceof ScalarNode v) {
                                    return v.getValue();
                                }
                            }
                        }
                    }
                }
            }
        } catch (YamlBindingException e) {
            return "";
        }
        return "";
    }

    private static Response unknownType(String group, String version, String kind) {
        return error(Response.Status.NOT_FOUND, "no config kind " + kind + " in " + group + "/" + version, List.of());
    }

    private static Response storeError(ConfigStoreException e) {
        if (e instanceof ConfigStoreException.NotFound) {
            return error(Response.Status.NOT_FOUND, e.getMessage(), List.of());
        }
        if (e instanceof ConfigStoreException.TooLarge) {
            return error(413, e.getMessage(), List.of());
        }
        if (e instanceof ConfigStoreException.Unavailable) {
            return error(Response.Status.INTERNAL_SERVER_ERROR, e.getMessage() + " (the write was not made)", List.of());
        }
        if (e instanceof ConfigStoreException.Invalid inv) {
            List<DocumentError> errs = inv.result().errors().stream().map(i -> new DocumentError("request body", 0, 0,
                    e.key().kind(), e.key().namespace(), e.key().name(), i.path(), i.message())).toList();
            return error(422, e.getMessage(), errs);
        }
        return error(Response.Status.CONFLICT, e.getMessage(), List.of()); // Conflict, AlreadyExists, ReadOnly
    }

    private static Response error(Response.Status status, String message, List<DocumentError> errors) {
        return error(status.getStatusCode(), message, errors);
    }

    private static Response error(int status, String message, List<DocumentError> errors) {
        JsonObject o = new JsonObject();
        o.addProperty("error", message);
        if (!errors.isEmpty()) {
            JsonArray a = new JsonArray();
            for (DocumentError d : errors) {
                JsonObject e = new JsonObject();
                e.addProperty("path", d.path());
                e.addProperty("reason", d.reason());
                if (d.line() > 0) {
                    e.addProperty("line", d.line());
                }
                a.add(e);
            }
            o.add("errors", a);
        }
        return json(status, o.toString());
    }

    private static Response json(Response.Status status, String body) {
        return json(status.getStatusCode(), body);
    }

    private static Response json(int status, String body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(body).build();
    }
}
