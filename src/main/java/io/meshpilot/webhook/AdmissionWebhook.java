package io.meshpilot.webhook;

import io.meshpilot.kube.admission.AdmissionRequest;
import io.meshpilot.kube.admission.AdmissionResponse;
import java.util.List;

/**
 * One admission webhook on the webhook listener (istiod's 15017): the paths it answers and
 * its decision. The AdmissionReview envelope (decoding, versions, uid, HTTP errors) is
 * {@link WebhookRoutes}'s.
 */
public interface AdmissionWebhook {

    /** Exact paths, or prefixes ending in {@code /*} (istiod registers "/validate/" that way). */
    List<String> paths();

    /**
     * Decides one request. Runs on the request's thread while the API server waits (its
     * timeout is the webhook configuration's timeoutSeconds, 10 s in istiod's chart): no
     * blocking calls.
     */
    AdmissionResponse admit(AdmissionRequest request);

    /** A request answered with an HTTP error (no body, wrong content type), for the webhook's metrics. */
    default void httpError(int status) {
    }
}
