package io.meshpilot.registry.kube;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.models.V1EndpointSlice;
import io.kubernetes.client.openapi.models.V1EndpointSliceList;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeList;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.PodInformer;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The informers the Kubernetes registry reads (istiod's kube controller watches): Services,
 * EndpointSlices, Pods, Nodes and Namespaces, all namespaces, from one informer factory.
 * Registered before the factory starts (indexes cannot be added to a running informer).
 */
public record KubeInformers(SharedIndexInformer<V1Service> services, SharedIndexInformer<V1EndpointSlice> slices,
                            SharedIndexInformer<V1Pod> pods, SharedIndexInformer<V1Node> nodes,
                            SharedIndexInformer<V1Namespace> namespaces, DiscoveryNamespacesFilter discovery) {
    /** Index of every namespaced informer: {@code namespace}. */
    public static final String BY_NAMESPACE = "meshpilot-namespace";
    /** Pods by {@code namespace/<gateway.networking.k8s.io/gateway-name>}: the instances of each Gateway. */
    public static final String BY_GATEWAY = "meshpilot-gateway";
    /** Index of the slice informer: {@code namespace/service}. */
    static final String BY_SERVICE = "meshpilot-service";

    /**
     * Registers the informers on the Kubernetes client's factory, with its watch error reporting;
     * namespaces come from the client's discovery namespace filter, shared with the config store.
     */
    public static KubeInformers register(KubeClient kube) {
        ApiClient client = kube.apiClient();
        SharedInformerFactory factory = kube.informers();
        DiscoveryNamespacesFilter discovery = kube.discoveryNamespaces();
        SharedIndexInformer<V1Service> services = factory.sharedIndexInformerFor(ResourceListerWatcher.all("Service",
                new GenericKubernetesApi<>(V1Service.class, V1ServiceList.class, "", "v1", "services", client)),
                V1Service.class, 0, kube.watchErrorHandler("Service"));
        SharedIndexInformer<V1EndpointSlice> slices = factory.sharedIndexInformerFor(ResourceListerWatcher.all(
                "EndpointSlice", new GenericKubernetesApi<>(V1EndpointSlice.class, V1EndpointSliceList.class,
                        "discovery.k8s.io", "v1", "endpointslices", client)),
                V1EndpointSlice.class, 0, kube.watchErrorHandler("EndpointSlice"));
        SharedIndexInformer<V1Pod> pods = PodInformer.of(kube);
        SharedIndexInformer<V1Node> nodes = factory.sharedIndexInformerFor(ResourceListerWatcher.all("Node",
                new GenericKubernetesApi<>(V1Node.class, V1NodeList.class, "", "v1", "nodes", client)),
                V1Node.class, 0, kube.watchErrorHandler("Node"));
        KubeInformers out = new KubeInformers(services, slices, pods, nodes, discovery.informer(), discovery);
        out.addIndexes();
        return out;
    }

    private void addIndexes() {
        addIndex(services, BY_NAMESPACE, s -> List.of(s.getMetadata().getNamespace()));
        addIndex(pods, BY_NAMESPACE, p -> List.of(p.getMetadata().getNamespace()));
        addIndex(pods, BY_GATEWAY, p -> {
            String gateway = p.getMetadata().getLabels() == null ? null
                    : p.getMetadata().getLabels().get("gateway.networking.k8s.io/gateway-name");
            return gateway == null ? List.of() : List.of(p.getMetadata().getNamespace() + "/" + gateway);
        });
        addIndex(slices, BY_NAMESPACE, s -> List.of(s.getMetadata().getNamespace()));
        addIndex(slices, BY_SERVICE, s -> {
            String svc = EndpointSliceConversion.serviceName(s);
            return svc.isEmpty() ? List.of() : List.of(s.getMetadata().getNamespace() + "/" + svc);
        });
    }

    private static <T extends KubernetesObject> void addIndex(
            SharedIndexInformer<T> informer, String name, Function<T, List<String>> f) {
        if (!informer.getIndexer().getIndexers().containsKey(name)) {
            informer.addIndexers(Map.of(name, f));
        }
    }

    /** Completes once every one of these informers has listed once. */
    public CompletableFuture<Void> synced() {
        return CompletableFuture.allOf(Stream.of(services, slices, pods, nodes, namespaces)
                .map(SignallingInformer::syncedOf).toArray(CompletableFuture[]::new));
    }
}
