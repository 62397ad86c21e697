package io.meshpilot.webhook;

import io.helidon.http.HeaderNames;
import io.helidon.http.HttpMediaType;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.kube.admission.AdmissionResponse;
import io.meshpilot.kube.admission.AdmissionReviews;
import io.meshpilot.util.RequestBodies;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The routing of the webhook listener (--httpsAddr, istiod's 15017; the http listener when the
 * flag is empty): each {@link AdmissionWebhook} added before the listeners bind answers POSTs
 * on its paths. The HTTP side is istiod's webhook server's: an empty body is 400 "no body
 * found", a body past the listener's limit is 413 (istiod's is larger, 30 MiB: a review is
 * far smaller), a body that is not {@code application/json} is 415, and a body that cannot be read
 * as an AdmissionReview is answered 200 with a refusal saying why (the API server then shows
 * the reason).
 */
public final class WebhookRoutes {
    private static final System.Logger LOG = System.getLogger(WebhookRoutes.class.getName());

    private final List<AdmissionWebhook> webhooks = new CopyOnWriteArrayList<>();
    private final List<HttpService> services = new CopyOnWriteArrayList<>();

    /**
     * Adds a webhook that does its own HTTP (the sidecar injector: istiod's inject webhook
     * reads the request with checks of its own); routed by
     * {@link #register} beside the others.
     */
    public WebhookRoutes addService(HttpService service) {
        services.add(service);
        return this;
    }

    /** Adds a webhook; its paths are routed by {@link #register}. */
    public WebhookRoutes add(AdmissionWebhook webhook) {
        webhooks.add(webhook);
        return this;
    }

    public List<AdmissionWebhook> webhooks() {
        return List.copyOf(webhooks);
    }

    /** The paths served, for logs. */
    public List<String> paths() {
        return webhooks.stream().flatMap(w -> w.paths().stream()).toList();
    }

    /** Routes every webhook's paths on {@code routing} (the webhook socket's, or http's). */
    public void register(HttpRouting.Builder routing) {
        services.forEach(routing::register);
        for (AdmissionWebhook w : webhooks) {
            for (String path : w.paths()) {
                routing.post(path, (req, res) -> serve(w, req, res));
            }
        }
    }

    private static void serve(AdmissionWebhook webhook, ServerRequest req, ServerResponse res) {
        String body;
        try {
            // as Go's decoder reads JSON, bytes that are not UTF-8 become U+FFFD
            body = new String(RequestBodies.read(req.content().inputStream(), HttpLimits.MAX_REQUEST_BODY),
                    StandardCharsets.UTF_8);
        } catch (RequestBodies.TooLarge e) {
            httpError(webhook, res, Status.REQUEST_ENTITY_TOO_LARGE_413, e.getMessage());
            return;
        }
        if (body.isEmpty()) {
            httpError(webhook, res, Status.BAD_REQUEST_400, "no body found");
            return;
        }
        boolean json = req.headers().contentType().map(HttpMediaType::mediaType)
                .map(m -> m.type().equals("application") && m.subtype().equals("json")).orElse(false);
        if (!json) {
            httpError(webhook, res, Status.UNSUPPORTED_MEDIA_TYPE_415, "invalid Content-Type, want `application/json`");
            return;
        }
        AdmissionReviews.Review review = null;
        AdmissionResponse answer;
        try {
            review = AdmissionReviews.decode(body);
            answer = webhook.admit(review.request());
        } catch (AdmissionReviews.UnreadableReview e) {
            answer = AdmissionResponse.refuse("could not decode body: " + e.getMessage());
        } catch (RuntimeException e) {
            // a defect of ours: the request is refused with the reason rather than left unanswered
            LOG.log(Level.ERROR, "webhook " + req.path().path() + " failed: " + e);
            LOG.log(Level.DEBUG, "webhook " + req.path().path() + " failure", e);
            answer = AdmissionResponse.refuse("internal error: " + e);
        }
        res.headers().set(HeaderNames.CONTENT_TYPE, "application/json");
        res.send(AdmissionReviews.encode(review, answer).toString());
    }

    private static void httpError(AdmissionWebhook webhook, ServerResponse res, Status status, String message) {
        webhook.httpError(status.code());
        res.status(status);
        res.headers().set(HeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        res.send(message + "\n");
    }
}
