package io.meshpilot.model;

import java.util.Arrays;
import java.util.Map;

/**
 * One endpoint of one service port (istiod's model.IstioEndpoint). Immutable; the
 * {@link EndpointIndex} holds them per service and shard.
 *
 * @param address         IP, DNS name (DNS resolution) or unix socket
 * @param endpointPort    port on the workload (after targetPort / WorkloadEntry port mapping)
 * @param servicePortName the service port this endpoint serves
 * @param serviceAccount  SPIFFE identity ({@code spiffe://td/ns/x/sa/y}), empty when unknown
 * @param tlsMode         "istio" (mutual TLS capable) or "disabled"
 * @param lbWeight        load-balancing weight, 0 = unset
 * @param workloadName    the WorkloadEntry (or pod) behind it
 * @param sendUnhealthy   istiod's SendUnhealthyEndpoints: an UNHEALTHY endpoint still goes to proxies
 *                        (marked unhealthy) instead of being left out of EDS
 */
public record IstioEndpoint(String address, int endpointPort, String servicePortName, Map<String, String> labels,
                            String serviceAccount, String network, Locality locality, String tlsMode, int lbWeight,
                            HealthStatus health, String workloadName, String namespace, boolean sendUnhealthy) {

    /** An endpoint whose registry does not send unhealthy endpoints (every registry but Kubernetes). */
    public IstioEndpoint(String address, int endpointPort, String servicePortName, Map<String, String> labels,
                         String serviceAccount, String network, Locality locality, String tlsMode, int lbWeight,
                         HealthStatus health, String workloadName, String namespace) {
        this(address, endpointPort, servicePortName, labels, serviceAccount, network, locality, tlsMode, lbWeight,
                health, workloadName, namespace, false);
    }

    /** istiod's endpoint health states. */
    public enum HealthStatus { HEALTHY, UNHEALTHY, DRAINING, TERMINATING }

    /** The label istiod adds to every endpoint with the cluster it runs in. */
    public static final String CLUSTER_LABEL = "topology.istio.io/cluster";
    /** istiod's TunnelLabel: the tunnel protocols the workload accepts; {@link #TUNNEL_HTTP} is HBONE (HTTP CONNECT). */
    public static final String TUNNEL_LABEL = "networking.istio.io/tunnel";
    public static final String TUNNEL_HTTP = "http";
    public static final String TLS_ISTIO = "istio";
    public static final String TLS_DISABLED = "disabled";

    public IstioEndpoint {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        serviceAccount = serviceAccount == null ? "" : serviceAccount;
        network = network == null ? "" : network;
        locality = locality == null ? Locality.NONE : locality;
        tlsMode = tlsMode == null ? TLS_DISABLED : tlsMode;
        health = health == null ? HealthStatus.HEALTHY : health;
        workloadName = workloadName == null ? "" : workloadName;
        namespace = namespace == null ? "" : namespace;
    }

    /**
     * istiod's supportTunnel: the endpoint accepts HBONE (its comma-separated tunnel label lists
     * {@code http}, or it is a waypoint).
     */
    public boolean supportsHbone() {
        return Arrays.asList(labels.getOrDefault(TUNNEL_LABEL, "").split(",")).contains(TUNNEL_HTTP)
                || WaypointServices.MESH_CONTROLLER.equals(labels.get(WaypointServices.MANAGED));
    }

    /** The cluster the endpoint runs in (istiod's Locality.ClusterID), "" when its registry does not say. */
    public String clusterId() {
        return labels.getOrDefault(CLUSTER_LABEL, "");
    }

    /**
     * istiod's EDS filter: unhealthy endpoints only when their service sends them; terminating
     * ones never (a rollout is not half unhealthy); draining ones only to persistent-session
     * services, which this model has none of.
     */
    public boolean sentToProxies() {
        return switch (health) {
            case HEALTHY -> true;
            case UNHEALTHY -> sendUnhealthy;
            case DRAINING, TERMINATING -> false;
        };
    }

    /** The same endpoint with another TLS mode (e.g. disabled where the client will not use Istio mTLS). */
    public IstioEndpoint withTlsMode(String mode) {
        return new IstioEndpoint(address, endpointPort, servicePortName, labels, serviceAccount, network, locality, mode,
                lbWeight, health, workloadName, namespace, sendUnhealthy);
    }
}
