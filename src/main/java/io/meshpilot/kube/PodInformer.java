package io.meshpilot.kube;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;

/**
 * The one informer of every pod of a Kubernetes client: the service registry, the ambient index
 * and the CA's node check read the same cache (the client's factory holds one informer per type,
 * so whoever asks first makes it and the others get it).
 */
public final class PodInformer {
    private PodInformer() {
    }

    /** The client's pod informer; register indexes on it before the client's informers start. */
    public static SharedIndexInformer<V1Pod> of(KubeClient kube) {
        return kube.informers().sharedIndexInformerFor(ResourceListerWatcher.all("Pod",
                new GenericKubernetesApi<>(V1Pod.class, V1PodList.class, "", "v1", "pods", kube.apiClient())),
                V1Pod.class, 0, kube.watchErrorHandler("Pod"));
    }
}
