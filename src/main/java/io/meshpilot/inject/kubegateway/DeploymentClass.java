package io.meshpilot.inject.kubegateway;

import io.meshpilot.config.kube.gateway.GatewayApiKinds;

/**
 * What a GatewayClass's controller deploys for its Gateways (the deployment half of istiod's
 * gatewaycommon ClassInfo, classinfo.go): the template rendered, whether names carry the
 * {@code -<class>} suffix, the Service type without the {@code networking.istio.io/service-type}
 * annotation, and the {@code gateway.istio.io/managed} label value (the controller name with
 * '/' as '-').
 */
public record DeploymentClass(String controller, String template, boolean disableNameSuffix, String defaultServiceType,
                              String managedLabel) {
    /** istiod's {@code istio} class: a router gateway from {@code kube-gateway}. */
    public static final DeploymentClass KUBE_GATEWAY = new DeploymentClass(GatewayApiKinds.ISTIO_CONTROLLER,
            "kube-gateway", false, "LoadBalancer", "istio.io-gateway-controller");
    /** istiod's {@code istio-waypoint} class (ambient waypoints): a waypoint proxy from {@code waypoint}. */
    public static final DeploymentClass WAYPOINT = new DeploymentClass(GatewayApiKinds.MESH_CONTROLLER,
            "waypoint", true, "ClusterIP", "istio.io-mesh-controller");

    public boolean waypoint() {
        return template.equals(WAYPOINT.template);
    }
}
