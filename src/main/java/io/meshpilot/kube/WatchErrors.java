package io.meshpilot.kube;

import io.kubernetes.client.openapi.ApiException;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Logs informer list/watch failures without flooding: an informer retries every second or
 * so while the API server is down, so each informer's cause is logged when it changes, not
 * at every retry.
 */
final class WatchErrors {
    private static final System.Logger LOG = System.getLogger(KubeClient.class.getName());
    private final Map<String, String> lastCause = new ConcurrentHashMap<>();

    void report(String informer, Throwable error) {
        String cause = KubeErrors.oneLine(error);
        if (error instanceof ApiException api && api.getCode() == 410) {
            LOG.log(Level.DEBUG, () -> "informer " + informer + ": resourceVersion expired (410 Gone), relisting");
            return;
        }
        if (!cause.equals(lastCause.put(informer, cause))) {
            LOG.log(Level.WARNING, "informer " + informer + ": list/watch failed, retrying: " + cause);
        }
    }
}
