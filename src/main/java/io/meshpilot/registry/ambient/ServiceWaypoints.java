package io.meshpilot.registry.ambient;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.registry.kube.KubeInformers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The waypoints ztunnel is told about, read from the Services the deployment controller makes for
 * Gateways of class {@code istio-waypoint}. istiod builds them from the Gateways once their status
 * has an address and prefers the hostname one (waypoints.go getGatewayAddress): the Service's
 * hostname with the HBONE port 15008. Here a waypoint is ready once its Service exists, which is
 * when its Gateway's status gets that address; a Gateway deployed by hand, whose Service does not
 * carry the mesh controller's label, is not seen.
 */
public final class ServiceWaypoints implements Waypoints {
    static final String GATEWAY_NAME = "gateway.networking.k8s.io/gateway-name";
    static final String MANAGED = "gateway.istio.io/managed";
    /** The managed label's value for the waypoint class's controller (istio.io/mesh-controller). */
    static final String MESH_CONTROLLER = "istio.io-mesh-controller";
    static final String WAYPOINT_FOR = "istio.io/waypoint-for";
    static final int HBONE_PORT = 15008;

    private final SharedIndexInformer<V1Service> services;
    private final SharedIndexInformer<V1Pod> pods;
    private final String domainSuffix;

    /** @param pods the waypoints' instances: their service accounts are the waypoints' identities */
    public ServiceWaypoints(SharedIndexInformer<V1Service> services, SharedIndexInformer<V1Pod> pods,
                            String domainSuffix) {
        this.services = services;
        this.pods = pods;
        this.domainSuffix = domainSuffix;
    }

    /** Whether {@code svc} is a waypoint's Service: a change to it may rebind services anywhere. */
    static boolean isWaypoint(V1Service svc) {
        Map<String, String> labels = svc.getMetadata() == null ? null : svc.getMetadata().getLabels();
        return labels != null && MESH_CONTROLLER.equals(labels.get(MANAGED)) && labels.containsKey(GATEWAY_NAME);
    }

    @Override
    public Optional<Waypoint> find(String namespace, String name) {
        for (V1Service svc : services.getIndexer().byIndex(KubeInformers.BY_NAMESPACE, namespace)) {
            if (isWaypoint(svc) && name.equals(svc.getMetadata().getLabels().get(GATEWAY_NAME))) {
                return Optional.of(waypoint(svc));
            }
        }
        return Optional.empty();
    }

    @Override
    public List<Waypoint> all() {
        List<Waypoint> out = new ArrayList<>();
        for (V1Service svc : services.getIndexer().list()) {
            if (isWaypoint(svc)) {
                out.add(waypoint(svc));
            }
        }
        return out;
    }

    private Waypoint waypoint(V1Service svc) {
        String namespace = svc.getMetadata().getNamespace();
        String name = svc.getMetadata().getLabels().get(GATEWAY_NAME);
        GatewayAddress address = GatewayAddress.newBuilder()
                .setHostname(NamespacedHostname.newBuilder().setNamespace(namespace)
                        .setHostname(svc.getMetadata().getName() + "." + namespace + ".svc." + domainSuffix))
                .setHboneMtlsPort(HBONE_PORT).build();
        return new Waypoint(namespace, name, address, svc.getMetadata().getLabels().getOrDefault(WAYPOINT_FOR, "service"),
                serviceAccounts(namespace, name));
    }

    /**
     * istiod's gatewayToWaypointTransform: the service accounts of the Gateway's pods (label
     * {@code gateway.networking.k8s.io/gateway-name}), sorted, one per pod.
     */
    List<String> serviceAccounts(String namespace, String gateway) {
        List<String> out = new ArrayList<>();
        for (V1Pod pod : pods.getIndexer().byIndex(KubeInformers.BY_GATEWAY, namespace + "/" + gateway)) {
            String sa = pod.getSpec() == null ? null : pod.getSpec().getServiceAccountName();
            out.add(sa == null ? "" : sa);
        }
        out.sort(null);
        return out;
    }
}
