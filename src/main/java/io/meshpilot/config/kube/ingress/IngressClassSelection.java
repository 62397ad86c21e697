package io.meshpilot.config.kube.ingress;

import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1IngressClass;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig.IngressControllerMode;
import java.util.Map;

/**
 * Which Ingresses istiod serves (shouldProcessIngressWithClass): the deprecated
 * {@value #CLASS_ANNOTATION} annotation, when present, must equal the mesh's
 * {@code ingressClass} (modes DEFAULT and STRICT); else an IngressClass named by
 * {@code ingressClassName} must have controller {@value #ISTIO_CONTROLLER}; else only mode
 * DEFAULT serves it. Mode OFF serves none.
 */
public final class IngressClassSelection {
    public static final String CLASS_ANNOTATION = "kubernetes.io/ingress.class";
    public static final String ISTIO_CONTROLLER = "istio.io/ingress-controller";

    private IngressClassSelection() {
    }

    /** @param ingressClass the IngressClass {@code ingressClassName} names, or null (none named, or not found) */
    public static boolean serves(MeshConfig mesh, V1Ingress ingress, V1IngressClass ingressClass) {
        IngressControllerMode mode = mesh.getIngressControllerMode();
        Map<String, String> annotations = ingress.getMetadata().getAnnotations();
        String annotated = annotations == null ? null : annotations.get(CLASS_ANNOTATION);
        if (annotated != null) {
            return (mode == IngressControllerMode.DEFAULT || mode == IngressControllerMode.STRICT)
                    && annotated.equals(mesh.getIngressClass());
        }
        if (ingressClass != null) {
            return ingressClass.getSpec() != null && ISTIO_CONTROLLER.equals(ingressClass.getSpec().getController());
        }
        return mode == IngressControllerMode.DEFAULT;
    }

    /**
     * The gateway workloads' {@code istio} label (getIngressGatewaySelector): {@code ingressSelector}
     * when set, else {@code ingressService} unless it is the stock {@code istio-ingressgateway},
     * else {@code ingressgateway}.
     */
    public static Map<String, String> gatewaySelector(MeshConfig mesh) {
        String service = mesh.getIngressService();
        if (!mesh.getIngressSelector().isEmpty()) {
            return Map.of("istio", mesh.getIngressSelector());
        }
        if (!service.isEmpty() && !service.equals("istio-ingressgateway")) {
            return Map.of("istio", service);
        }
        return Map.of("istio", "ingressgateway");
    }
}
