package io.meshpilot.kube.leaderelection;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Which revision is the mesh's default, as istiod's revisions.DefaultWatcher tells it: the
 * {@code istio.io/rev} label of the MutatingWebhookConfiguration labelled
 * {@code istio.io/tag=default} ({@code istioctl tag set default}), or "" when there is none.
 * Read when asked (a follower asks once a retry period, and only while another revision holds
 * the Lease) rather than watched.
 */
public final class DefaultRevision implements Supplier<String> {
    static final String TAG_SELECTOR = "istio.io/tag=default";
    static final String REVISION_LABEL = "istio.io/rev";
    private static final System.Logger LOG = System.getLogger(DefaultRevision.class.getName());

    private final AdmissionregistrationV1Api api;

    public DefaultRevision(ApiClient client) {
        this.api = new AdmissionregistrationV1Api(client);
    }

    @Override
    public String get() {
        try {
            for (V1MutatingWebhookConfiguration webhook : api.listMutatingWebhookConfiguration()
                    .labelSelector(TAG_SELECTOR).execute().getItems()) {
                Map<String, String> labels = webhook.getMetadata().getLabels();
                String revision = labels == null ? null : labels.get(REVISION_LABEL);
                if (revision != null && !revision.isEmpty()) {
                    return revision;
                }
            }
            return "";
        } catch (ApiException e) {
            // unknown default: nobody takes a live Lease over, the election goes on as unprioritized
            LOG.log(Level.DEBUG, () -> "default revision not read (HTTP " + e.getCode() + "): " + e.getMessage());
            return "";
        }
    }
}
