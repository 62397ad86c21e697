package io.meshpilot.registry.kube;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.WorkloadInstance;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a pod and its node tell about an endpoint, as istiod's endpoint builder reads them:
 * labels (plus istiod's topology labels), the SPIFFE identity of its service account, the
 * network ({@code topology.istio.io/network} on the pod, else on the system namespace), the
 * TLS mode ({@code security.istio.io/tlsMode}), the locality (the pod's {@code istio-locality}
 * label, else its node's region, zone and subzone labels) and the workload name (the
 * Deployment's for a ReplicaSet's pod).
 */
public final class PodConversion {
    public static final String NETWORK_LABEL = "topology.istio.io/network";
    public static final String TLS_MODE_LABEL = "security.istio.io/tlsMode";
    static final String CLUSTER_LABEL = IstioEndpoint.CLUSTER_LABEL;
    static final String REGION_LABEL = "topology.kubernetes.io/region";
    static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    static final String SUBZONE_LABEL = "topology.istio.io/subzone";
    static final String HOSTNAME_LABEL = "kubernetes.io/hostname";
    private static final String REGION_LABEL_BETA = "failure-domain.beta.kubernetes.io/region";
    private static final String ZONE_LABEL_BETA = "failure-domain.beta.kubernetes.io/zone";
    private static final String LOCALITY_LABEL = "istio-locality";
    private static final String WORKLOAD_NAME_LABEL = "service.istio.io/workload-name";

    private PodConversion() {
    }

    /**
     * A pod's part of an endpoint; address, port and service port are the endpoint's own.
     *
     * @param pod            the pod, or null for an endpoint no pod backs (then only the network
     *                       and cluster are known)
     * @param node           the pod's node, or null when unknown
     * @param defaultNetwork the system namespace's network label, or ""
     */
    public static IstioEndpoint template(V1Pod pod, V1Node node, String trustDomain, String clusterId,
                                         String defaultNetwork) {
        if (pod == null) {
            Map<String, String> labels = new HashMap<>();
            labels.put(CLUSTER_LABEL, clusterId);
            if (!defaultNetwork.isEmpty()) {
                labels.put(NETWORK_LABEL, defaultNetwork);
            }
            return new IstioEndpoint("", 0, "", labels, "", defaultNetwork, Locality.NONE, IstioEndpoint.TLS_DISABLED,
                    0, IstioEndpoint.HealthStatus.HEALTHY, "", "");
        }
        V1ObjectMeta meta = pod.getMetadata();
        Map<String, String> podLabels = meta.getLabels() == null ? Map.of() : meta.getLabels();
        Locality locality = locality(pod, node);
        String network = podLabels.getOrDefault(NETWORK_LABEL, defaultNetwork);
        String nodeName = pod.getSpec() == null || pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName();
        Map<String, String> labels = augment(podLabels, clusterId, locality, nodeName, network);
        if (capturedByZtunnel(meta)) {
            // istiod's SupportsTunnel reads the ambient index for the pod; the synthetic label says the same to EDS
            labels.put(IstioEndpoint.TUNNEL_LABEL, IstioEndpoint.TUNNEL_HTTP);
        }
        return new IstioEndpoint("", 0, "", labels,
                identity(pod, trustDomain), network, locality, tlsMode(podLabels), 0,
                IstioEndpoint.HealthStatus.HEALTHY, workloadName(pod), meta.getNamespace());
    }

    /**
     * Whether ztunnel captures the pod: istio-cni annotates it {@code ambient.istio.io/redirection: enabled}
     * once its traffic is redirected, which istiod's ambient index reads as HBONE support.
     */
    static boolean capturedByZtunnel(V1ObjectMeta meta) {
        return meta.getAnnotations() != null && REDIRECTION_ENABLED.equals(meta.getAnnotations().get(REDIRECTION_ANNOTATION));
    }

    static final String REDIRECTION_ANNOTATION = "ambient.istio.io/redirection";
    static final String REDIRECTION_ENABLED = "enabled";

    /** istiod's AugmentLabels: the pod's labels plus where it runs, for subsets and telemetry. */
    static Map<String, String> augment(Map<String, String> podLabels, String clusterId, Locality locality,
                                       String nodeName, String network) {
        Map<String, String> out = new LinkedHashMap<>(podLabels);
        putIfSet(out, REGION_LABEL, locality.region());
        putIfSet(out, ZONE_LABEL, locality.zone());
        putIfSet(out, SUBZONE_LABEL, locality.subzone());
        putIfSet(out, CLUSTER_LABEL, clusterId);
        putIfSet(out, HOSTNAME_LABEL, nodeName);
        if (!network.isEmpty() && out.getOrDefault(NETWORK_LABEL, "").isEmpty()) {
            out.put(NETWORK_LABEL, network);
        }
        return out;
    }

    private static void putIfSet(Map<String, String> m, String k, String v) {
        if (v != null && !v.isEmpty()) {
            m.put(k, v);
        }
    }

    /** {@code spiffe://<trust domain>/ns/<namespace>/sa/<service account>} (the "default" account when unset). */
    public static String identity(V1Pod pod, String trustDomain) {
        String sa = pod.getSpec() == null ? null : pod.getSpec().getServiceAccountName();
        if (sa == null || sa.isEmpty()) {
            sa = "default";
        }
        return "spiffe://" + trustDomain + "/ns/" + pod.getMetadata().getNamespace() + "/sa/" + sa;
    }

    /** istiod's GetTLSModeFromEndpointLabels: the label's value, else "disabled". */
    static String tlsMode(Map<String, String> labels) {
        String mode = labels.get(TLS_MODE_LABEL);
        return mode == null || mode.isEmpty() ? IstioEndpoint.TLS_DISABLED : mode;
    }

    /** The pod's {@code istio-locality} label ("." separated), else its node's topology labels. */
    static Locality locality(V1Pod pod, V1Node node) {
        Map<String, String> podLabels = pod.getMetadata().getLabels();
        String label = podLabels == null ? null : podLabels.get(LOCALITY_LABEL);
        if (label != null && !label.isEmpty()) {
            return Locality.parse(label.replace('.', '/'));
        }
        return nodeLocality(node);
    }

    /** {@code topology.kubernetes.io/region} and {@code zone} (or their beta names) and {@code topology.istio.io/subzone}. */
    public static Locality nodeLocality(V1Node node) {
        if (node == null || node.getMetadata() == null || node.getMetadata().getLabels() == null) {
            return Locality.NONE;
        }
        Map<String, String> l = node.getMetadata().getLabels();
        String region = l.getOrDefault(REGION_LABEL, l.getOrDefault(REGION_LABEL_BETA, ""));
        String zone = l.getOrDefault(ZONE_LABEL, l.getOrDefault(ZONE_LABEL_BETA, ""));
        String subzone = l.getOrDefault(SUBZONE_LABEL, "");
        return region.isEmpty() && zone.isEmpty() && subzone.isEmpty() ? Locality.NONE
                : new Locality(region, zone, subzone);
    }

    /**
     * istiod's GetWorkloadMetaFromPod: the {@code service.istio.io/workload-name} label, else
     * the controller's name (a ReplicaSet's Deployment), else the pod's own.
     */
    public static String workloadName(V1Pod pod) {
        V1ObjectMeta meta = pod.getMetadata();
        Map<String, String> labels = meta.getLabels() == null ? Map.of() : meta.getLabels();
        if (labels.containsKey(WORKLOAD_NAME_LABEL)) {
            return labels.get(WORKLOAD_NAME_LABEL);
        }
        String name = meta.getName();
        if (meta.getGenerateName() == null || meta.getGenerateName().isEmpty() || meta.getOwnerReferences() == null) {
            return name;
        }
        for (V1OwnerReference ref : meta.getOwnerReferences()) {
            if (Boolean.TRUE.equals(ref.getController())) {
                String hash = labels.getOrDefault("pod-template-hash", "");
                if ("ReplicaSet".equals(ref.getKind()) && !hash.isEmpty() && ref.getName().endsWith("-" + hash)) {
                    return ref.getName().substring(0, ref.getName().length() - hash.length() - 1);
                }
                return ref.getName();
            }
        }
        return name;
    }

    /** Named TCP container ports (the first of a name wins), for services that target ports by name. */
    public static Map<String, Integer> portMap(V1Pod pod) {
        Map<String, Integer> out = new HashMap<>();
        if (pod.getSpec() == null) {
            return out;
        }
        addPorts(out, pod.getSpec().getContainers());
        if (pod.getSpec().getInitContainers() != null) {
            // sidecar containers (init containers that keep running) serve ports too
            addPorts(out, pod.getSpec().getInitContainers().stream()
                    .filter(c -> "Always".equals(c.getRestartPolicy())).toList());
        }
        return out;
    }

    private static void addPorts(Map<String, Integer> out, List<V1Container> containers) {
        if (containers == null) {
            return;
        }
        for (V1Container c : containers) {
            for (V1ContainerPort p : c.getPorts() == null ? List.<V1ContainerPort>of() : c.getPorts()) {
                boolean tcp = p.getProtocol() == null || "TCP".equals(p.getProtocol());
                if (p.getName() != null && !p.getName().isEmpty() && tcp && p.getContainerPort() != null) {
                    out.putIfAbsent(p.getName(), p.getContainerPort());
                }
            }
        }
    }

    /** istiod's shouldPodBeInEndpoints and IsPodReady: running or pending with an IP, not deleted, Ready. */
    public static boolean readyWithIp(V1Pod pod) {
        var status = pod.getStatus();
        if (status == null || status.getPodIP() == null || status.getPodIP().isEmpty()) {
            return false;
        }
        if ("Failed".equals(status.getPhase()) || "Succeeded".equals(status.getPhase())
                || pod.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        for (V1PodCondition c : status.getConditions() == null ? List.<V1PodCondition>of() : status.getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /** The pod as a workload that ServiceEntries may select (istiod's PodCache workload handler). */
    public static WorkloadInstance workload(V1Pod pod, IstioEndpoint template) {
        IstioEndpoint ep = new IstioEndpoint(pod.getStatus().getPodIP(), 0, "", template.labels(),
                template.serviceAccount(), template.network(), template.locality(), template.tlsMode(), 0,
                IstioEndpoint.HealthStatus.HEALTHY, template.workloadName(), template.namespace());
        return new WorkloadInstance(pod.getMetadata().getName(), pod.getMetadata().getNamespace(), "Pod", ep,
                portMap(pod));
    }
}
