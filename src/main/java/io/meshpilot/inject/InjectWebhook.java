package io.meshpilot.inject;

import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.kube.admission.AdmissionRequest;
import io.meshpilot.kube.admission.AdmissionResponse;
import io.meshpilot.kube.admission.AdmissionReviews;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.util.RequestBodies;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;

/**
 * {@code POST /inject} (and istiod's {@code /inject/<key>/<value>...} form, which sets the
 * cluster and network of the injected proxy): a Kubernetes AdmissionReview (v1 or v1beta1,
 * read and answered by {@link AdmissionReviews}, as the validation webhook's) for a Pod in,
 * the AdmissionReview with the JSON Patch out; a body that is no review is refused inside a
 * review, as istiod's toAdmissionResponse. Counts istiod's four
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
        AdmissionReviews.Review review = null;
        AdmissionResponse answer;
        try {
            review = AdmissionReviews.decode(new String(body, StandardCharsets.UTF_8));
            answer = admit(review.request(), path);
        } catch (AdmissionReviews.UnreadableReview e) {
            // istiod answers an undecodable review inside a review with the decoder's error alone
            // (toAdmissionResponse(err)), a failure; only its log line says what failed
            LOG.log(Level.WARNING, "injection request refused: Could not decode body: " + e.getMessage());
            answer = AdmissionResponse.refuse(e.getMessage());
        }
        if (!answer.allowed()) {
            FAILURE.increment();
        }
        res.header(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(AdmissionReviews.encode(review, answer).toString().getBytes(StandardCharsets.UTF_8));
        SUCCESS.increment();
    }

    private AdmissionResponse admit(AdmissionRequest request, String path) {
        if (request.object() == null) {
            return AdmissionResponse.refuse("could not decode body: the AdmissionReview carries no pod (request.object)");
        }
        String who = who(request);
        try {
            var outcome = injector.inject(request.object(), nonNull(request.namespace()), path);
            return switch (outcome.kind()) {
                case INJECTED -> AdmissionResponse.patch(outcome.patch().toString(), outcome.warnings());
                case SKIPPED -> {
                    LOG.log(Level.DEBUG, "skipping injection of " + who + ": " + outcome.message());
                    SKIP.increment();
                    yield AdmissionResponse.allow(outcome.warnings());
                }
                case UNSUPPORTED_TEMPLATE, FAILED -> {
                    // istiod logs a refused pod as an error (handleError)
                    LOG.log(Level.ERROR, "Pod injection failed: " + who + ": " + outcome.message());
                    if (outcome.kind() == SidecarInjector.Kind.UNSUPPORTED_TEMPLATE) {
                        UNSUPPORTED_TEMPLATE.increment();
                    }
                    yield new AdmissionResponse(false, outcome.message(), outcome.warnings(), null);
                }
            };
        } catch (RuntimeException e) {
            // refused, as istiod refuses a pod it failed to inject (toAdmissionResponse(err)):
            // admitted without its sidecar it would run outside mTLS and the mesh's policies
            LOG.log(Level.ERROR, "injection of " + who + " failed: " + e);
            LOG.log(Level.DEBUG, "injection of " + who + " failure", e);
            return AdmissionResponse.refuse("sidecar injection failed: " + e);
        }
    }

    private static String who(AdmissionRequest request) {
        String name = Pods.string(request.object(), "metadata", "name");
        if (name.isEmpty()) {
            name = Pods.string(request.object(), "metadata", "generateName") + "...";
        }
        return "pod " + nonNull(request.namespace()) + "/" + name;
    }

    private static String nonNull(String s) {
        return s == null ? "" : s;
    }

    private static void fail(ServerResponse res, Status status, String message) {
        LOG.log(Level.WARNING, "injection request refused: " + message);
        FAILURE.increment();
        res.status(status).send(message);
    }
}
