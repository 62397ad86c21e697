package io.meshpilot.config.kube.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1IngressClass;
import io.kubernetes.client.openapi.models.V1IngressClassSpec;
import io.kubernetes.client.openapi.models.V1IngressSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig.IngressControllerMode;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which Ingresses are served, by mode, {@code kubernetes.io/ingress.class} annotation and
 * IngressClass: the cases of istiod's TestIngressClass (conversion_test.go), and the gateway
 * selector istiod derives from ingressSelector and ingressService.
 */
class IngressClassSelectionTest {
    @ParameterizedTest(name = "mode={0} annotation={1} class={2} -> {3}")
    @CsvSource(nullValues = "-", value = {
            // the annotation decides when present
            "DEFAULT, nginx, -, false", "STRICT, nginx, -, false", "OFF, istio, -, false",
            "DEFAULT, istio, -, true", "STRICT, istio, -, true",
            // neither annotation nor class: DEFAULT only
            "DEFAULT, -, -, true", "STRICT, -, -, false",
            // the IngressClass's controller decides
            "DEFAULT, -, foo, false", "STRICT, -, foo, false", "DEFAULT, -, istio.io/ingress-controller, true",
            "STRICT, -, istio.io/ingress-controller, true",
            // both (Kubernetes refuses them, istiod lets the annotation win)
            "STRICT, nginx, istio.io/ingress-controller, false", "STRICT, istio, foo, true",
            "UNSPECIFIED, -, -, false"})
    void servesAsIstiod(IngressControllerMode mode, String annotation, String controller, boolean served) {
        MeshConfig mesh = MeshConfig.newBuilder().setIngressClass("istio").setIngressControllerMode(mode).build();
        V1Ingress ingress = new V1Ingress().metadata(new V1ObjectMeta().name("test-ingress").namespace("default")
                .annotations(annotation == null ? Map.of() : Map.of("kubernetes.io/ingress.class", annotation)))
                .spec(new V1IngressSpec());
        V1IngressClass ingressClass = controller == null ? null
                : new V1IngressClass().metadata(new V1ObjectMeta().name("c")).spec(new V1IngressClassSpec().controller(controller));
        assertEquals(served, IngressClassSelection.serves(mesh, ingress, ingressClass));
    }

    @ParameterizedTest(name = "selector={0} service={1} -> istio={2}")
    @CsvSource(nullValues = "-", value = {"-, -, ingressgateway", "-, istio-ingressgateway, ingressgateway",
            "-, my-gateway, my-gateway", "edge, my-gateway, edge", "edge, -, edge"})
    void gatewaySelectorAsIstiod(String selector, String service, String expected) {
        MeshConfig.Builder mesh = MeshConfig.newBuilder();
        if (selector != null) {
            mesh.setIngressSelector(selector);
        }
        if (service != null) {
            mesh.setIngressService(service);
        }
        assertEquals(Map.of("istio", expected), IngressClassSelection.gatewaySelector(mesh.build()));
    }
}
