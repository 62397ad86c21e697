package io.meshpilot.webhook;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.FieldValidation;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.kube.admission.AdmissionRequest;
import io.meshpilot.kube.admission.AdmissionResponse;
import io.meshpilot.monitoring.IstioCounter;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * istiod's config validation webhook ({@code /validate}): an Istio object the API server is
 * about to store goes through the same parser and validation as a file in --configDir or an
 * object read from the cluster, and is refused with istiod's words ("configuration is
 * invalid: ...") when they reject it. Warnings come back as admission warnings (kubectl prints
 * them). As istiod: only CREATE and UPDATE are checked (anything else is allowed), the version
 * of a known kind does not matter (a newer version than MeshPilot serves is validated as the
 * kind), a kind MeshPilot does not know is refused as "unrecognized type", top-level fields
 * other than apiVersion, kind, metadata, spec and status are refused, and so is istiod's
 * always-reject annotation (its own readiness probe sends it). Nothing is stored, so dry-run
 * requests are answered alike; they are left out of the failure metric, as istiod does.
 *
 * <p>Metrics, istiod's names and labels: {@code galley_validation_passed} (group, version,
 * resource; "unknown" for a resource MeshPilot does not know), {@code galley_validation_failed}
 * (same and reason), {@code galley_validation_http_error} (status).
 */
public final class ValidationWebhook implements AdmissionWebhook {
    private static final System.Logger LOG = System.getLogger(ValidationWebhook.class.getName());

    /** istiod's paths: "/validate" and everything under "/validate/". */
    public static final List<String> PATHS = List.of("/validate", "/validate/*");
    /** istiod's constants.AlwaysReject: the validation controller's probe object carries it. */
    public static final String ALWAYS_REJECT = "internal.istio.io/webhook-always-reject";
    private static final Set<String> TOP_LEVEL = Set.of("apiVersion", "kind", "metadata", "spec", "status");

    static final String REASON_UNSUPPORTED_OPERATION = "unsupported_operation";
    static final String REASON_DECODE = "yaml_decode_error";
    static final String REASON_UNKNOWN_TYPE = "unknown_type";
    static final String REASON_INVALID = "invalid_resource";
    /** The label value of a resource MeshPilot does not know. */
    static final String UNKNOWN = "unknown";

    private static final IstioCounter PASSED = IstioCounter.of("galley_validation_passed",
            List.of("group", "version", "resource"), "Resource is valid");
    private static final IstioCounter FAILED = IstioCounter.of("galley_validation_failed",
            List.of("group", "version", "resource", "reason"), "Resource validation failed");
    private static final IstioCounter HTTP_ERROR = IstioCounter.of("galley_validation_http_error", "status",
            "Resource validation http serve errors");

    private final ConfigParser parser;
    private final Schemas schemas;

    /** @param parser the config controller's parser, so the webhook judges as the stores do */
    public ValidationWebhook(ConfigParser parser, Schemas schemas) {
        this.parser = parser;
        this.schemas = schemas;
    }

    @Override
    public List<String> paths() {
        return PATHS;
    }

    @Override
    public void httpError(int status) {
        HTTP_ERROR.increment(Integer.toString(status));
    }

    @Override
    public AdmissionResponse admit(AdmissionRequest request) {
        String op = request.operation();
        if (!"CREATE".equals(op) && !"UPDATE".equals(op)) {
            failed(request, REASON_UNSUPPORTED_OPERATION);
            return AdmissionResponse.allow();
        }
        JsonObject object = request.object();
        if (object == null) {
            failed(request, REASON_DECODE);
            return AdmissionResponse.refuse("cannot decode configuration: the request has no object");
        }
        String apiVersion = string(object, "apiVersion");
        String kind = string(object, "kind");
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        String version = apiVersion.substring(apiVersion.indexOf('/') + 1);
        Schema schema = schemas.forKind(kind).filter(s -> s.group().equals(group)).orElse(null);
        if (schema == null) {
            failed(request, REASON_UNKNOWN_TYPE);
            return AdmissionResponse.refuse("unrecognized type " + group + "/" + version + ", Kind=" + kind);
        }
        JsonObject candidate = asServed(object, schema, version, request);
        ConfigParser.Result parsed = parser.parse("admission request", candidate.toString(), FieldValidation.WARN);
        List<String> errors = new ArrayList<>(parsed.errors().stream().map(ValidationWebhook::text).toList());
        if (errors.isEmpty() && parsed.configs().size() != 1) {
            errors.add("not one " + kind + " object");
        }
        JsonObject meta = object.has("metadata") && object.get("metadata").isJsonObject()
                ? object.getAsJsonObject("metadata") : new JsonObject();
        if (meta.has("annotations") && meta.get("annotations").isJsonObject()
                && meta.getAsJsonObject("annotations").has(ALWAYS_REJECT)) {
            errors.add("\"" + ALWAYS_REJECT + "\" annotation found, rejecting");
        }
        if (!errors.isEmpty()) {
            failed(request, REASON_INVALID);
            String message = "configuration is invalid: " + multiError(errors);
            LOG.log(Level.DEBUG, () -> kind + " " + request.namespace() + "/" + request.name() + (request.dryRun()
                    ? " (dry run)" : "") + ": " + message);
            return AdmissionResponse.refuse(message);
        }
        for (String field : object.keySet()) {
            if (!TOP_LEVEL.contains(field)) {
                failed(request, REASON_INVALID);
                return AdmissionResponse.refuse("unknown field \"" + field + "\" on " + kind + " resource "
                        + request.namespace() + "/" + string(meta, "name"));
            }
        }
        passed(request);
        return AdmissionResponse.allow(parsed.warnings().stream().map(ValidationWebhook::text).toList());
    }

    /**
     * The object as MeshPilot reads it: under a version it serves (istiod validates any
     * version of a known kind), with the request's name and namespace where the object lacks
     * them (the API server fills them from the request path).
     */
    private static JsonObject asServed(JsonObject object, Schema schema, String version, AdmissionRequest request) {
        JsonObject copy = object.deepCopy();
        if (!schema.serves(version)) {
            copy.addProperty("apiVersion", schema.group() + "/" + schema.versions().get(0));
        }
        JsonObject meta = copy.has("metadata") && copy.get("metadata").isJsonObject() ? copy.getAsJsonObject("metadata")
                : null;
        if (meta != null) {
            if (!meta.has("name") && request.name() != null && !request.name().isEmpty()) {
                meta.addProperty("name", request.name());
            }
            if (!schema.clusterScoped() && !meta.has("namespace") && request.namespace() != null
                    && !request.namespace().isEmpty()) {
                meta.addProperty("namespace", request.namespace());
            }
        }
        return copy;
    }

    /** One finding as the user reads it: the field path and the reason. */
    private static String text(DocumentError e) {
        return e.path() == null || e.path().isEmpty() ? e.reason() : e.path() + ": " + e.reason();
    }

    /** istiod's errors are a Go multierror: one is its text, several are a counted list. */
    static String multiError(List<String> errors) {
        if (errors.size() == 1) {
            return errors.get(0);
        }
        StringBuilder sb = new StringBuilder().append(errors.size()).append(" errors occurred:");
        for (String e : errors) {
            sb.append("\n\t* ").append(e);
        }
        return sb.append("\n\n").toString();
    }

    private void passed(AdmissionRequest r) {
        PASSED.increment(resourceLabels(r.resource()));
    }

    private void failed(AdmissionRequest r, String reason) {
        if (!r.dryRun()) {
            List<String> labels = new ArrayList<>(resourceLabels(r.resource()));
            labels.add(reason);
            FAILED.increment(labels);
        }
    }

    /**
     * istiod's group, version and resource labels, from the request's resource when it is a
     * kind MeshPilot knows (a version it does not serve reads {@value #UNKNOWN}); any other
     * resource is {@value #UNKNOWN} throughout. The port answers unauthenticated callers, so
     * what they send cannot add series.
     */
    private List<String> resourceLabels(AdmissionRequest.Gvr gvr) {
        Schema known = gvr == null ? null : schemas.all().stream()
                .filter(s -> s.group().equals(gvr.group()) && s.plural().equals(gvr.resource())).findFirst().orElse(null);
        if (known == null) {
            return List.of(UNKNOWN, UNKNOWN, UNKNOWN);
        }
        return List.of(known.group(), known.serves(gvr.version()) ? gvr.version() : UNKNOWN, known.plural());
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
