package io.meshpilot.kube;

import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.lang.System.Logger.Level;

/**
 * How an informer lists and watches one resource: in every namespace or one, optionally with a
 * label or field selector.
 *
 * <p>A list from a resourceVersion the API server has not reached is answered 504 "Too large
 * resource version". That is every relist after an etcd restore or a cluster rebuild, when the
 * version an informer saw last lies ahead of the restarted server; client-java's reflector then
 * lists from that same version again and again (kubernetes-client/java#2190) and never sees a
 * change until the server's numbers pass it. Such a list is made again from the current state
 * (resourceVersion "", a consistent read), as client-go's reflector does.
 */
public final class ResourceListerWatcher<T extends KubernetesObject, L extends KubernetesListObject>
        implements ListerWatcher<T, L> {
    private static final System.Logger LOG = System.getLogger(ResourceListerWatcher.class.getName());
    /** The cause the API server gives (metav1.CauseTypeResourceVersionTooLarge). */
    private static final String TOO_LARGE_CAUSE = "ResourceVersionTooLarge";
    /** Its message, which older servers give without the cause (client-go checks both). */
    private static final String TOO_LARGE_MESSAGE = "Too large resource version";

    private final String name;
    private final GenericKubernetesApi<T, L> api;
    private final String namespace;
    private final String labelSelector;
    private final String fieldSelector;

    private ResourceListerWatcher(String name, GenericKubernetesApi<T, L> api, String namespace, String labelSelector,
                                  String fieldSelector) {
        this.name = name;
        this.api = api;
        this.namespace = namespace;
        this.labelSelector = labelSelector;
        this.fieldSelector = fieldSelector;
    }

    /**
     * @param name          the informer's name in logs
     * @param namespace     null: every namespace
     * @param labelSelector null: none
     * @param fieldSelector null: none
     */
    public static <T extends KubernetesObject, L extends KubernetesListObject> ResourceListerWatcher<T, L> of(
            String name, GenericKubernetesApi<T, L> api, String namespace, String labelSelector, String fieldSelector) {
        return new ResourceListerWatcher<>(name, api, namespace, labelSelector, fieldSelector);
    }

    /** Every object of the resource, in every namespace. */
    public static <T extends KubernetesObject, L extends KubernetesListObject> ResourceListerWatcher<T, L> all(
            String name, GenericKubernetesApi<T, L> api) {
        return of(name, api, null, null, null);
    }

    @Override
    public L list(CallGeneratorParams p) throws ApiException {
        KubernetesApiResponse<L> r = list(p.resourceVersion, p.timeoutSeconds);
        if (tooLarge(r) && p.resourceVersion != null && !p.resourceVersion.isEmpty()) {
            LOG.log(Level.INFO, "informer " + name + ": resourceVersion " + p.resourceVersion + " is ahead of the API server ("
                    + r.getStatus().getMessage() + "; restored or rebuilt?): listing its current state");
            r = list("", p.timeoutSeconds);
        }
        return r.throwsApiException().getObject();
    }

    @Override
    public Watchable<T> watch(CallGeneratorParams p) throws ApiException {
        ListOptions options = options(p.resourceVersion, p.timeoutSeconds);
        return namespace == null ? api.watch(options) : api.watch(namespace, options);
    }

    private KubernetesApiResponse<L> list(String resourceVersion, Integer timeoutSeconds) {
        ListOptions options = options(resourceVersion, timeoutSeconds);
        return namespace == null ? api.list(options) : api.list(namespace, options);
    }

    private ListOptions options(String resourceVersion, Integer timeoutSeconds) {
        ListOptions options = new ListOptions();
        options.setResourceVersion(resourceVersion);
        options.setTimeoutSeconds(timeoutSeconds);
        if (labelSelector != null) {
            options.setLabelSelector(labelSelector);
        }
        if (fieldSelector != null) {
            options.setFieldSelector(fieldSelector);
        }
        return options;
    }

    private static boolean tooLarge(KubernetesApiResponse<?> r) {
        V1Status status = r.getStatus();
        if (r.isSuccess() || status == null) {
            return false;
        }
        boolean cause = status.getDetails() != null && status.getDetails().getCauses() != null
                && status.getDetails().getCauses().stream().anyMatch(c -> TOO_LARGE_CAUSE.equals(c.getReason()));
        return cause || (status.getMessage() != null && status.getMessage().contains(TOO_LARGE_MESSAGE));
    }
}
