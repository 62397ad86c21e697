package io.meshpilot.registry.ambient;

import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1ServiceSpec;
import io.meshpilot.model.AddressInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A generated ambient cluster for benchmarks: {@code pods} captured pods in namespaces of 100
 * pods, 10 Services per namespace each selecting 10 pods (port 80 to the pods' named port
 * "http"), spread over 100 nodes with topology labels. {@link #build} indexes them through the
 * functions the controller runs per object ({@link KubeServiceAddresses}, {@link PodWorkloads},
 * {@link AmbientIndex}); the informers' own cost is not in it.
 */
public final class GeneratedAmbient {
    public static final int PODS_PER_NAMESPACE = 100;
    public static final int PODS_PER_SERVICE = 10;

    private final List<V1Service> services = new ArrayList<>();
    private final List<V1Pod> pods = new ArrayList<>();
    private final Map<String, V1Node> nodes = new HashMap<>();
    private final AmbientContext ctx;

    public GeneratedAmbient(int podCount) {
        for (int n = 0; n < 100; n++) {
            nodes.put("node-" + n, new V1Node().metadata(new V1ObjectMeta().name("node-" + n).labels(Map.of(
                    "topology.kubernetes.io/region", "region", "topology.kubernetes.io/zone", "zone-" + n % 3))));
        }
        for (int i = 0; i < podCount; i++) {
            String ns = "ns-" + i / PODS_PER_NAMESPACE;
            String app = "svc-" + i / PODS_PER_SERVICE;
            if (i % PODS_PER_SERVICE == 0) {
                services.add(new V1Service().metadata(new V1ObjectMeta().name(app).namespace(ns))
                        .spec(new V1ServiceSpec().clusterIP(ip(172, i / PODS_PER_SERVICE)).selector(Map.of("app", app))
                                .addPortsItem(new V1ServicePort().name("http").port(80)
                                        .targetPort(new IntOrString("http")))));
            }
            pods.add(pod(i, "v1"));
        }
        ctx = new AmbientContext("Kubernetes", "cluster.local", "", "", n -> null, nodes::get, Waypoints.NONE,
                WorkloadPolicies.NONE);
    }

    private static String ip(int first, int i) {
        return first + "." + (i >> 16 & 0xff) + "." + (i >> 8 & 0xff) + "." + (i & 0xff);
    }

    /** Pod {@code i} at {@code revision} (its {@code version} label, so a new one changes its workload). */
    public V1Pod pod(int i, String revision) {
        String ns = "ns-" + i / PODS_PER_NAMESPACE;
        String podIp = ip(10, i);
        return new V1Pod()
                .metadata(new V1ObjectMeta().name("pod-" + i).namespace(ns)
                        .labels(Map.of("app", "svc-" + i / PODS_PER_SERVICE, "version", revision))
                        .annotations(Map.of(PodWorkloads.REDIRECTION_ANNOTATION, "enabled")))
                .spec(new V1PodSpec().nodeName("node-" + i % 100).serviceAccountName("sa-" + i / PODS_PER_SERVICE)
                        .addContainersItem(new V1Container().name("app").image("app")
                                .addPortsItem(new V1ContainerPort().name("http").containerPort(8080))))
                .status(new V1PodStatus().phase("Running").podIP(podIp).addPodIPsItem(new V1PodIP().ip(podIp))
                        .addConditionsItem(new V1PodCondition().type("Ready").status("True")));
    }

    /** Indexes every service, then every pod, as the controller's initial build does. */
    public AmbientIndex build() {
        AmbientIndex index = new AmbientIndex();
        for (V1Service s : services) {
            index.putService(KubeServiceAddresses.build(s, ctx));
        }
        for (V1Pod p : pods) {
            index.putWorkload(PodWorkloads.build(p, ctx, index.servicesIn(p.getMetadata().getNamespace())));
        }
        return index;
    }

    /** One pod event as the controller handles it: the pod's workload built again and put; its uid. */
    public String podChanged(AmbientIndex index, V1Pod pod) {
        AddressInfo w = PodWorkloads.build(pod, ctx, index.servicesIn(pod.getMetadata().getNamespace()));
        if (!index.putWorkload(w)) {
            throw new IllegalStateException("the pod did not change: " + w.resourceName());
        }
        return w.resourceName();
    }

    public int serviceCount() {
        return services.size();
    }
}
