package io.meshpilot.config.kube.gateway.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonParser;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The service and service account a managed Gateway is bound to. istiod reads the
 * {@code gateway.istio.io/name-override} and {@code gateway.istio.io/service-account}
 * annotations with {@code model.GetOrDefault} (pkg/model/proxy.go: an empty value is the
 * default; conversion.go extractGatewayServices, gateway_collection.go), so an empty one must
 * neither name the service {@code .ns.svc...} nor let any service account of the namespace read
 * the Gateway's keys.
 */
class GatewayServiceBindingTest {
    static GatewayApiObject gateway(String annotations) {
        return GatewayApiObject.fromJson(JsonParser.parseString("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
                 "metadata": {"name": "web", "namespace": "shop", "annotations": %s},
                 "spec": {"gatewayClassName": "istio", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}}
                """.formatted(annotations)).getAsJsonObject());
    }

    static GatewayServiceBinding bind(GatewayApiObject gw) {
        ClassInfos.ClassInfo info = ClassInfos.of(GatewayApiInputs.Settings.defaults("cluster.local", "Kubernetes"), List.of())
                .resolve("istio").orElseThrow().info();
        return GatewayServiceBinding.of(gw, info, "cluster.local", true);
    }

    @Test
    void emptyNameOverrideAndServiceAccountAnnotationsFallBackToTheDefaultName() {
        GatewayServiceBinding binding = bind(gateway(
                "{\"gateway.istio.io/name-override\": \"\", \"gateway.istio.io/service-account\": \"\"}"));
        assertEquals(List.of("web-istio.shop.svc.cluster.local"), binding.services());
        assertEquals("web-istio", binding.serviceAccount());
    }

    @Test
    void setAnnotationsAreUsed() {
        GatewayServiceBinding binding = bind(gateway(
                "{\"gateway.istio.io/name-override\": \"edge\", \"gateway.istio.io/service-account\": \"edge-sa\"}"));
        assertEquals(List.of("edge.shop.svc.cluster.local"), binding.services());
        assertEquals("edge-sa", binding.serviceAccount());
    }
}
