package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.util.RequestBodies;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * {@code POST /inject} (and istiod's {@code /inject/<key>/<value>...} form, which sets the
 * cluster and network of the injected proxy): a Kubernetes AdmissionReview v1 for a Pod in,
 * the AdmissionReview with the JSON Patch out. Counts istiod's four
 * {@code sidecar_injection_*_total} metrics, plus
 * {@code meshpilot_sidecar_injection_unsupported_template_total} for pods refused because they
 * ask for a template MeshPilot does not render (counted as failures too).
 */
public final class InjectWebhook implements HttpService {
    private static final System.Logger LOG = System.getLogger(InjectWebhook.class.getName());
    static final IstioCounter REQUESTS = IstioCounter.of("sidecar_injection_requests_total",
            "Total number of sidecar injection requests.");
    static final IstioCounter SUCCESS = IstioCounter.of("sidecar_injection_success_total",
            "Total number of successful sidecar injection requests.");
    static final IstioCounter FAILURE = IstioCounter.of("sidecar_injection_failure_total",
            "Total number of failed sidecar injection requests.");
    static final IstioCounter SKIP = IstioCounter.of("sidecar_injection_skip_total",
            "Total number of skipped sidecar injection requests.");
    static final IstioCounter UNSUPPORTED_TEMPLATE = IstioCounter.of("meshpilot_sidecar_injection_unsupported_template_total",
            "Pods refused because their injection templates are not istiod's default sidecar template.");

    private final SidecarInjector injector;

    public InjectWebhook(SidecarInjector injector) {
        this.injector = injector;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/inject", this::serve).post("/inject/{+params}", this::serve);
    }

    private void serve(ServerRequest req, ServerResponse res) {
        REQUESTS.increment();
        String path = req.path().path();
        String type = req.headers().contentType().map(t -> t.mediaType().text()).orElse("");
        if (!type.equals("application/json")) {
            fail(res, Status.UNSUPPORTED_MEDIA_TYPE_415, "invalid Content-Type " + type + ", want `application/json`");
            return;
        }
        byte[] body;
        try {
            body = RequestBodies.read(req.content().inputStream(), HttpLimits.MAX_REQUEST_BODY);
        } catch (RequestBodies.TooLarge e) {
            fail(res, Status.REQUEST_ENTITY_TOO_LARGE_413, e.getMessage());
            return;
        }
        if (body.length == 0) {
            fail(res, Status.BAD_REQUEST_400, "no body found");
            return;
        }
        JsonObject review;
        JsonObject request;
        try {
            review = JsonParser.parseString(new String(body, StandardCharsets.UTF_8)).getAsJsonObject();
            request = review.getAsJsonObject("request");
            if (request == null || !request.has("object") || !request.get("object").isJsonObject()) {
                throw new IllegalArgumentException("AdmissionReview has no request.object");
            }
        } catch (RuntimeException e) {
            fail(res, Status.BAD_REQUEST_400, "could not decode body: " + e.getMessage());
            return;
        }
        JsonObject response = new JsonObject();
        response.add("uid", request.get("uid"));
        boolean failed = false;
        try {
            var outcome = injector.inject(request.getAsJsonObject("object"), string(request, "namespace"), path);
            switch (outcome.kind()) {
                case INJECTED -> {
                    response.addProperty("allowed", true);
                    response.addProperty("patchType", "JSONPatch");
                    response.addProperty("patch", Base64.getEncoder().encodeToString(
                            outcome.patch().toString().getBytes(StandardCharsets.UTF_8)));
                }
                case SKIPPED -> {
                    LOG.log(System.Logger.Level.DEBUG, "skipping injection of " + who(request) + ": " + outcome.message());
                    SKIP.increment();
                    response.addProperty("allowed", true);
                }
                case UNSUPPORTED_TEMPLATE, FAILED -> {
                    // istiod logs a refused pod as an error (handleError)
                    LOG.log(System.Logger.Level.ERROR, "Pod injection failed: " + who(request) + ": " + outcome.message());
                    if (outcome.kind() == SidecarInjector.Kind.UNSUPPORTED_TEMPLATE) {
                        UNSUPPORTED_TEMPLATE.increment();
                    }
                    failed = true;
                    response.addProperty("allowed", false);
                    JsonObject result = new JsonObject();
                    result.addProperty("message", outcome.message());
                    response.add("status", result);
                }
            }
            if (!outcome.warnings().isEmpty()) {
                JsonArray w = new JsonArray();
                outcome.warnings().forEach(w::add);
                response.add("warnings", w);
            }
        } catch (RuntimeException e) {
            // refused, as istiod refuses a pod it failed to inject (toAdmissionResponse(err)):
            // admitted without its sidecar it would run outside mTLS and the mesh's policies
            LOG.log(System.Logger.Level.ERROR, "injection of " + who(request) + " failed", e);
            failed = true;
            response.addProperty("allowed", false);
            JsonObject result = new JsonObject();
            result.addProperty("message", "sidecar injection failed: " + e);
            response.add("status", result);
        }
        if (failed) {
            FAILURE.increment();
        }
        JsonObject out = new JsonObject();
        out.addProperty("apiVersion", review.has("apiVersion") ? review.get("apiVersion").getAsString() : "admission.k8s.io/v1");
        out.addProperty("kind", "AdmissionReview");
        out.add("response", response);
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(out.toString().getBytes(StandardCharsets.UTF_8));
        SUCCESS.increment();
    }

    private static String who(JsonObject request) {
        JsonObject pod = request.getAsJsonObject("object");
        String name = Pods.string(pod, "metadata", "name");
        if (name.isEmpty()) {
            name = Pods.string(pod, "metadata", "generateName") + "...";
        }
        return "pod " + string(request, "namespace") + "/" + name;
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e == null || e.isJsonNull() ? "" : e.getAsString();
    }

    private static void fail(ServerResponse res, Status status, String message) {
        LOG.log(System.Logger.Level.WARNING, "injection request refused: " + message);
        FAILURE.increment();
        res.status(status).send(message);
    }
}
