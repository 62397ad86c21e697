package io.meshpilot.registry.ambient;

import com.google.protobuf.ByteString;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodIP;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.TunnelProtocol;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.api.workload.Locality;
import io.meshpilot.api.workload.NetworkMode;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.registry.kube.PodConversion;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpSyntaxException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A pod -> ztunnel's {@code istio.workload.Workload}, as istiod's podWorkloadBuilder
 * (pilot/pkg/serviceregistry/ambient/workloads.go) builds it. Every pod with an IP that has not
 * terminated is a workload, whatever its data-plane mode (ztunnel needs to know the pods it does
 * not capture too); the ambient redirection istio-cni marks on the pod
 * ({@code ambient.istio.io/redirection: enabled}) or a native tunnel label makes it HBONE.
 * A pod with a sidecar is a plain workload (tunnel NONE), as istiod sends it by default.
 */
final class PodWorkloads {
    /** What istio-cni writes on a pod it captured for ztunnel (annotation.AmbientRedirection). */
    static final String REDIRECTION_ANNOTATION = "ambient.istio.io/redirection";
    /** networking.istio.io/tunnel: a comma-separated list; "http" is native HBONE. */
    static final String TUNNEL_LABEL = "networking.istio.io/tunnel";
    private static final List<String> NAME_LABELS = List.of("service.istio.io/canonical-name", "app.kubernetes.io/name",
            "app");
    private static final List<String> REVISION_LABELS = List.of("service.istio.io/canonical-revision",
            "app.kubernetes.io/version", "version");

    private PodWorkloads() {
    }

    /** istiod's generatePodUID: {@code <cluster>//Pod/<namespace>/<name>}. */
    static String uid(String clusterId, String namespace, String name) {
        return clusterId + "//Pod/" + namespace + "/" + name;
    }

    /**
     * The pod's workload, or null for a terminated pod, one without an IP or with an IP that is
     * not one (istiod drops those too).
     *
     * @param services the services of the pod's namespace
     */
    static AddressInfo build(V1Pod pod, AmbientContext ctx, Iterable<ServiceInfo> services) {
        V1PodStatus status = pod.getStatus();
        if (status == null || "Failed".equals(status.getPhase()) || "Succeeded".equals(status.getPhase())) {
            return null;
        }
        List<ByteString> ips = ips(status);
        if (ips == null || ips.isEmpty()) {
            return null;
        }
        String namespace = pod.getMetadata().getNamespace();
        String name = pod.getMetadata().getName();
        Map<String, String> labels = KubeServiceAddresses.orEmpty(pod.getMetadata().getLabels());
        Map<String, String> annotations = KubeServiceAddresses.orEmpty(pod.getMetadata().getAnnotations());
        String node = pod.getSpec() == null || pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName();
        String workloadName = PodConversion.workloadName(pod);
        Workload.Builder w = Workload.newBuilder()
                .setUid(uid(ctx.clusterId(), namespace, name))
                .setName(name)
                .setNamespace(namespace)
                .setNetwork(ctx.network())
                .setClusterId(ctx.clusterId())
                .addAllAddresses(ips)
                .setServiceAccount(serviceAccount(pod))
                .setNode(node)
                .addAllAuthorizationPolicies(ctx.policies().policies(namespace, labels))
                .setStatus(ready(status) && pod.getMetadata().getDeletionTimestamp() == null
                        ? WorkloadStatus.HEALTHY : WorkloadStatus.UNHEALTHY)
                .setTrustDomain(ctx.trustDomain())
                .setWorkloadName(workloadName)
                .setWorkloadType(WorkloadType.POD)
                .setCanonicalName(canonicalName(labels, workloadName))
                .setCanonicalRevision(canonicalRevision(labels));
        Waypoints.Waypoint waypoint = waypointInstance(labels, namespace, ctx.waypoints()) ? null
                : ctx.waypoints().forTarget(labels, namespace, ctx.namespaceLabels(namespace))
                        .filter(Waypoints.Waypoint::forWorkloads).orElse(null);
        if (waypoint != null) {
            w.setWaypoint(waypoint.address());
        }
        List<ServiceInfo> selecting = new ArrayList<>();
        services.forEach(s -> {
            if (s.selects(labels)) {
                selecting.add(s);
            }
        });
        putServices(w, pod, selecting);
        w.addAllAuthorizationPolicies(ImplicitWaypointPolicies.forWorkload(ctx, waypoint, selecting));
        // istiod's getPodLocality: the node's topology labels; none while the pod is unscheduled
        var locality = PodConversion.nodeLocality(node.isEmpty() ? null : ctx.nodes().apply(node));
        if (!(locality.region() + locality.zone() + locality.subzone()).isEmpty()) {
            w.setLocality(Locality.newBuilder().setRegion(locality.region()).setZone(locality.zone())
                    .setSubzone(locality.subzone()));
        }
        if (pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork())) {
            w.setNetworkMode(NetworkMode.HOST_NETWORK);
        }
        setTunnelProtocol(w, labels, annotations);
        return AddressInfo.of(Address.newBuilder().setWorkload(w).build());
    }

    /** istiod's setTunnelProtocol: captured by istio-cni, or a native HBONE tunnel. */
    static void setTunnelProtocol(Workload.Builder w, Map<String, String> labels, Map<String, String> annotations) {
        if ("enabled".equals(annotations.get(REDIRECTION_ANNOTATION))) {
            w.setTunnelProtocol(TunnelProtocol.HBONE);
        }
        if (Arrays.asList(labels.getOrDefault(TUNNEL_LABEL, "").split(",")).contains("http")) {
            w.setTunnelProtocol(TunnelProtocol.HBONE).setNativeTunnel(true);
        }
    }

    /** istiod's kubelabels.CanonicalService name: the canonical or app labels, else the workload name. */
    static String canonicalName(Map<String, String> labels, String workloadName) {
        return first(labels, NAME_LABELS, workloadName);
    }

    static String canonicalRevision(Map<String, String> labels) {
        return first(labels, REVISION_LABELS, "latest");
    }

    /**
     * istiod's fetchWaypointForInstance (workloads.go computeWaypoint): a pod of a ready waypoint,
     * named by its gateway-name label, is that waypoint and uses none itself.
     */
    private static boolean waypointInstance(Map<String, String> labels, String namespace, Waypoints waypoints) {
        String gateway = labels.get(ServiceWaypoints.GATEWAY_NAME);
        return gateway != null && !gateway.isEmpty() && waypoints.find(namespace, gateway).isPresent();
    }

    /** status.podIPs, else status.podIP, as bytes; null when one is not an IP. */
    private static List<ByteString> ips(V1PodStatus status) {
        List<String> texts = new ArrayList<>();
        if (status.getPodIPs() != null && !status.getPodIPs().isEmpty()) {
            status.getPodIPs().stream().map(V1PodIP::getIp).forEach(texts::add);
        } else if (status.getPodIP() != null && !status.getPodIP().isEmpty()) {
            texts.add(status.getPodIP());
        }
        List<ByteString> out = new ArrayList<>(texts.size());
        for (String ip : texts) {
            try {
                out.add(ByteString.copyFrom(IpAddr.parse(ip).bytes()));
            } catch (IpSyntaxException | NullPointerException e) {
                return null;
            }
        }
        return out;
    }

    /** {@code spec.serviceAccountName} as the pod has it (empty when unset: istiod sends it as is). */
    private static String serviceAccount(V1Pod pod) {
        String sa = pod.getSpec() == null ? null : pod.getSpec().getServiceAccountName();
        return sa == null ? "" : sa;
    }

    private static boolean ready(V1PodStatus status) {
        for (V1PodCondition c : status.getConditions() == null ? List.<V1PodCondition>of() : status.getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /** istiod's kubelabels.CanonicalService: the first of these labels the pod has, else the fallback. */
    private static String first(Map<String, String> labels, List<String> keys, String fallback) {
        for (String k : keys) {
            if (labels.containsKey(k)) {
                return labels.get(k);
            }
        }
        return fallback;
    }

    /**
     * istiod's constructServices over the services selecting the pod ({@code services}): each under
     * {@code namespace/hostname}, with its ports; a named target port is the pod's port of that
     * name, and a port the pod does not name is left out; a ServiceEntry's port takes the pod's
     * port of its name, if there is one.
     */
    private static void putServices(Workload.Builder w, V1Pod pod, Iterable<ServiceInfo> services) {
        Map<String, Integer> podPorts = null;
        for (ServiceInfo svc : services) {
            PortList.Builder ports = PortList.newBuilder();
            for (Port p : svc.address().address().getService().getPortsList()) {
                int target = p.getTargetPort();
                ServiceInfo.PortName named = svc.portNames().get(p.getServicePort());
                if (named != null && !named.targetPortName().isEmpty()) {
                    podPorts = podPorts == null ? PodConversion.portMap(pod) : podPorts;
                    Integer found = podPorts.get(named.targetPortName());
                    if (found == null) {
                        continue;
                    }
                    target = found;
                } else if (named != null && svc.source() == ServiceInfo.Source.SERVICE_ENTRY
                        && !named.portName().isEmpty()) {
                    // a ServiceEntry names no target port: its port's name matched against the pod's ports
                    podPorts = podPorts == null ? PodConversion.portMap(pod) : podPorts;
                    target = podPorts.getOrDefault(named.portName(), target == 0 ? p.getServicePort() : target);
                }
                ports.addPorts(Port.newBuilder().setServicePort(p.getServicePort()).setTargetPort(target));
            }
            w.putServices(svc.key(), ports.build());
        }
    }
}
